"""What ``vllm_share_base: true`` saves: process RSS with the trainer's own copy of the 4-bit base, then with it shared.

    python scripts/bench_share_base.py [--config configs/cpu-smollm2-vllm.yaml] [KEY VALUE ...] [--json out.json]

Builds the trainer ``train/grpo.py`` builds for the config (colocated vLLM, 4-bit base + LoRA) with sharing off, so
that both copies are loaded: the trainer's and vLLM's. Measures this process's resident memory (VmRSS, plus any child
process), then rebinds the trainer to vLLM's weights with ``share_base`` (what the engine does right after vLLM loads
when the key is on) and measures again. "Without" and "with" are the same process a moment apart: the same vLLM, the
same allocator state, so the difference is the trainer's copy alone. Prints one JSON object: RSS before and after, the
drop (anonymous memory and mapped-file pages), and the trainer's copy by kind (packed 4-bit bytes, quantization
constants, embeddings) and by what held it, which should account for it. One trainer forward runs first, so every
weight is resident as it is during training.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as train/grpo.py sets it: before torch loads OpenMP
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cpu.bnb_seams import stop_cpu_repack  # noqa: E402 - after the OpenMP setting and the checkout on the path
from train.config import parse_config  # noqa: E402
from train.config.cli_help import script_help  # noqa: E402
from train.gpu_check.report import json_command  # noqa: E402
from train.grpo import build_trainer  # noqa: E402

CONFIG = "configs/cpu-smollm2-vllm.yaml"
MIB = 1024**2


def rss_bytes() -> int:
    """Resident memory of this process and its children (vLLM may run helpers), from /proc."""
    total = 0
    pids = [os.getpid()]
    while pids:
        pid = pids.pop()
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except FileNotFoundError:
            continue  # ended meanwhile
        total += next(int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:"))
        pids += [int(child) for child in children]
    return total


def rss_parts() -> dict[str, int]:
    """This process's resident memory by kind (/proc/self/status): anonymous (heap, allocations) and file-backed
    (mapped files, e.g. a safetensors checkpoint read through mmap)."""
    status = Path("/proc/self/status").read_text().splitlines()
    return {k: next(int(x.split()[1]) * 1024 for x in status if x.startswith(k + ":")) for k in ("RssAnon", "RssFile")}


def backing(tensors) -> dict[str, int]:
    """Bytes of ``tensors`` by what holds their memory: the heap, an anonymous mapping, or a mapped file."""
    regions = []
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        start, stop = (int(x, 16) for x in fields[0].split("-"))
        path = fields[5] if len(fields) > 5 else ""
        regions.append((start, stop, "heap" if path == "[heap]" else ("file" if path.startswith("/") else "anonymous")))
    out: dict[str, int] = {}
    for t in tensors:
        kind = next((k for a, b, k in regions if a <= t.data_ptr() < b), "unknown")
        out[kind] = out.get(kind, 0) + t.untyped_storage().nbytes()
    return out


def trainer_copy(model) -> dict[str, int]:
    """Bytes of the trainer's own base that sharing replaces: packed 4-bit weights, their constants, embeddings."""
    from bitsandbytes.nn import Linear4bit

    base = model.get_base_model()
    parts = {"4bit packed": 0, "4bit constants": 0, "embeddings": 0}
    for module in base.modules():
        if isinstance(module, Linear4bit):
            state = module.weight.quant_state
            parts["4bit packed"] += module.weight.untyped_storage().nbytes()
            parts["4bit constants"] += state.absmax.untyped_storage().nbytes()
            if state.nested:
                parts["4bit constants"] += state.state2.absmax.untyped_storage().nbytes()
    heads = {id(m.weight): m.weight for m in (base.get_input_embeddings(), base.get_output_embeddings()) if m}
    parts["embeddings"] = sum(w.untyped_storage().nbytes() for w in heads.values())
    return parts


def trainer_tensors(model) -> list:
    from bitsandbytes.nn import Linear4bit

    base = model.get_base_model()
    tensors = []
    for module in base.modules():
        if isinstance(module, Linear4bit):
            state = module.weight.quant_state
            tensors += [module.weight.data, state.absmax] + ([state.state2.absmax] if state.nested else [])
    heads = {id(m.weight): m.weight for m in (base.get_input_embeddings(), base.get_output_embeddings()) if m}
    return tensors + list(heads.values())


def warm_up(model) -> None:
    """One no-grad forward, as training does before any measurement matters: it touches every weight (the tied head
    reads the whole embedding matrix, which on CPU is a lazily read view of the checkpoint file until then).
    bitsandbytes' CPU fast path stays off, as on shared layers (it would repack the trainer's 4-bit bytes)."""
    import torch
    from bitsandbytes.nn import Linear4bit

    for module in model.modules():
        if isinstance(module, Linear4bit):
            stop_cpu_repack(module)
    model.eval()
    with torch.no_grad():
        model(input_ids=torch.tensor([[1, 2, 3, 4]], device=model.device))
    model.train()


def measure(argv: list[str]) -> dict:
    import gc

    # lazy: share_base_views imports torch; --help must not (tests/test_script_help.py)
    from train.engines.share_base_views import _trim_heap, share_base, vllm_model

    config = [] if "--config" in argv else ["--config", CONFIG]
    out = [] if "--output_dir" in argv else ["--output_dir", tempfile.mkdtemp(prefix="share-bench-")]
    args = parse_config(config + out + argv + ["--vllm_share_base", "false", "--log_rollouts", "false"])
    trainer, _, _ = build_trainer(*args)
    engine = trainer.rollout_engine
    if engine is None or not hasattr(engine, "llm"):
        raise SystemExit("this config does not run the colocated adapter engine (use_vllm, vllm_mode: colocate, PEFT)")
    try:
        warm_up(trainer.model)
        copy = trainer_copy(trainer.model)
        where = backing(trainer_tensors(trainer.model))
        gc.collect()
        _trim_heap()
        before, parts_before = rss_bytes(), rss_parts()
        shared = share_base(trainer.model, vllm_model(engine.llm))
        after, parts_after = rss_bytes(), rss_parts()
        drop, expected = before - after, sum(copy.values())
        return {
            "model": args[2].model_name_or_path,
            "rss_without_sharing_mib": round(before / MIB, 1),
            "rss_with_sharing_mib": round(after / MIB, 1),
            "rss_drop_mib": round(drop / MIB, 1),
            "trainer_copy_mib": {k: round(v / MIB, 1) for k, v in copy.items()} | {"total": round(expected / MIB, 1)},
            "trainer_copy_held_in_mib": {k: round(v / MIB, 1) for k, v in where.items()},
            "rss_drop_by_kind_mib": {k: round((parts_before[k] - parts_after[k]) / MIB, 1) for k in parts_before},
            "freed_by_sharing_mib": round(shared.freed_bytes / MIB, 1),
            "drop_vs_trainer_copy": round(drop / expected, 3),
            "layers_4bit": shared.facts()["layers_4bit"],
            "not_shared": shared.not_shared,
        }
    finally:
        trainer.close_rollout_engine()


def main() -> int:
    script_help(__doc__, sys.argv[1:])  # its own help, before the trainer's parser sees --help
    json_command(measure, sys.argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
