"""What vLLM's level-1 sleep copies to pinned host memory at every sleep, measured on vLLM's CPU build.

    python scripts/measure_sleep_backup.py [--config configs/cpu-smollm2-vllm.yaml] [KEY VALUE ...]

On a GPU, level-1 sleep copies vLLM's whole "weights" memory pool (everything ``load_model`` allocated: the base in
vLLM's layout and the LoRA slots) into pinned host tensors and maps it back at wake-up
(``vllm/device_allocator/cumem.py``). vLLM's CPU build refuses sleep mode, but it loads the same model with the same
LoRA slots, so the bytes of its parameters and buffers are what a GPU would back up. Builds the trainer
``train/grpo.py`` builds (colocated engine), sums vLLM's tensors (unique storages) and prints one JSON object with
them, the LoRA slots apart, and pre-flight's ``host_backup_bytes`` for the same config with sleep mode on.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as train/grpo.py sets it: before torch loads OpenMP
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from train.config import parse_config  # noqa: E402 - after the OpenMP setting and the checkout on the path
from train.config.cli_help import script_help  # noqa: E402
from train.config.memory_model import estimate_for  # noqa: E402
from train.grpo import build_trainer  # noqa: E402

CONFIG = "configs/cpu-smollm2-vllm.yaml"
MIB = 1024**2


def tensor_bytes(model) -> dict[str, int]:
    """Bytes of the model's parameters, buffers and LoRA slots (vLLM's LoRA layers hold their stacked A/B buffers as
    plain attributes, ``lora_a_stacked``/``lora_b_stacked``), each storage once: all, and the LoRA slots."""
    import torch

    seen, parts = set(), {"all": 0, "lora slots": 0}

    def add(tensor, lora: bool) -> None:
        storage = tensor.untyped_storage()
        if storage.data_ptr() in seen:
            return
        seen.add(storage.data_ptr())
        parts["all"] += storage.nbytes()
        parts["lora slots"] += storage.nbytes() if lora else 0

    for _, tensor in [*model.named_parameters(), *model.named_buffers()]:
        add(tensor, lora=False)
    for module in model.modules():
        for attr in ("lora_a_stacked", "lora_b_stacked"):
            held = getattr(module, attr, None)
            for tensor in [held] if isinstance(held, torch.Tensor) else (held or ()):
                add(tensor, lora=True)
    return parts


def main(argv: list[str]) -> dict:
    # lazy: share_base_views imports torch; --help must not (tests/test_script_help.py)
    from train.engines.share_base_views import vllm_model

    config = [] if "--config" in argv else ["--config", CONFIG]
    out = [] if "--output_dir" in argv else ["--output_dir", tempfile.mkdtemp(prefix="sleep-backup-")]
    script_args, training_args, model_args = parse_config(config + out + argv + ["--log_rollouts", "false"])
    asleep = copy.copy(training_args)
    asleep.vllm_enable_sleep_mode = True  # pre-flight's model of the same run on a GPU with sleep mode
    estimate = estimate_for(asleep, model_args, 16 * 1024**3)
    trainer, _, _ = build_trainer(script_args, training_args, model_args)
    engine = trainer.rollout_engine
    if engine is None or not hasattr(engine, "llm"):
        raise SystemExit("this config does not run the colocated adapter engine (use_vllm, vllm_mode: colocate, PEFT)")
    try:
        measured = tensor_bytes(vllm_model(engine.llm._llm))
    finally:
        trainer.close_rollout_engine()
    return {
        "model": model_args.model_name_or_path,
        "load_in_4bit": bool(model_args.load_in_4bit),
        "vllm_weights_mib": round(measured["all"] / MIB, 1),
        "vllm_lora_slots_mib": round(measured["lora slots"] / MIB, 1),
        "preflight_host_backup_mib": round(estimate.host_backup_bytes / MIB, 1),
        "estimate_over_measured": round(estimate.host_backup_bytes / measured["all"], 3),
    }


if __name__ == "__main__":
    script_help(__doc__, sys.argv[1:])  # its own help, before the trainer's parser sees --help
    print(json.dumps(main(sys.argv[1:]), indent=1))
