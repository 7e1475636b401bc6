"""Is the vLLM rollout engine on-policy? Train real steps, then compare logprobs token by token.

    python scripts/check_on_policy.py --config configs/cpu-smollm2-vllm.yaml --max_steps 1
    python scripts/check_on_policy.py --config configs/qwen2.5-1.5b-qlora-vllm.yaml --max_steps 2 --json out.json
    python scripts/check_on_policy.py --config configs/cpu-smollm2-vllm-server.yaml --max_steps 1  # a server at :8000

Builds the very trainer ``train/grpo.py`` runs (any config key can be overridden), trains
``max_steps`` optimizer steps with rollouts from the adapter engine, then scores one fixed
(prompt, completion) three ways: the trainer's policy (peft model, forward pass), vLLM (colocated, or
the vLLM server of a ``vllm_mode: server`` config) under the
adapter it used for the last rollouts (the policy *before* the last step), and vLLM after a sync
(the policy now). The sync is real when the synced engine agrees with the policy within the
tolerance and the stale adapter does not (the measurement is ``train/gpu_check/on_policy.py``, shared
with ``scripts/check_gpu.py``). Prints one JSON object; exit 1 when the check fails.
"""

from __future__ import annotations

import sys
import tempfile

from train.config import parse_config
from train.config.cli_help import script_help
from train.gpu_check.on_policy import measure
from train.gpu_check.report import json_command
from train.grpo import build_trainer


def run(argv: list[str]) -> dict:
    argv = list(argv)
    if "--output_dir" not in argv:
        argv += ["--output_dir", tempfile.mkdtemp(prefix="on-policy-")]
    script_args, training_args, model_args = parse_config(argv + ["--log_rollouts", "false", "--save_strategy", "no"])
    trainer, _, _ = build_trainer(script_args, training_args, model_args)
    engine = trainer.rollout_engine
    if engine is None:
        raise SystemExit("this config does not use the adapter engine (needs use_vllm: true and use_peft: true)")
    try:
        trainer.train()
        return measure(trainer, engine, model_args)
    finally:
        trainer.close_rollout_engine()


def main() -> int:
    script_help(__doc__, sys.argv[1:])  # its own help, before the trainer's parser sees --help
    report = json_command(run, sys.argv[1:])
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
