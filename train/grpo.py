"""GRPO with TRL on the shared verifier.

    python train/grpo.py --config configs/cpu-smollm2.yaml               # the CPU default
    python train/grpo.py --config configs/cpu-smollm2.yaml --max_steps 2 # any key can be overridden
    python train/grpo.py --help                                          # every key

The reward functions are ``rewards``' (by the names the domain rows give them, ``problems.domains``) and the
prompt is ``rewards.build_messages``, imported unchanged, so ``inspect eval evals/`` scores the checkpoint with the function that
rewarded it. Every save holds the adapter, the tokenizer (with its chat template) and run.json.
"""

from __future__ import annotations

import os
import sys

# Before torch loads its OpenMP runtime (libgomp in the Linux CPU wheels): an idle OpenMP thread spins
# 10,000 iterations at a barrier, then sleeps (libgomp's default: 300,000). On a busy CPU a long spin
# burns the time slice its descheduled partner needs: with 2 burner processes on 2 cores a small CPU
# GRPO step went 9.4 -> 80.3 s (8.6x; the fair share predicts 2x); with this setting 11.2 -> 27.6 s
# (2.5x). OMP_WAIT_POLICY=PASSIVE degrades exactly 2x (15.1 -> 30.2 s) but is 1.6x slower when quiet.
# Measured with scripts/bench_train.py --burners 2. Effective only when this file is imported before
# torch (the entry point); a value already in the environment wins.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from problems.math_data import DatasetError  # noqa: E402 - after the OpenMP setting
from train.config import ConfigError, ScriptArguments, parse_config  # noqa: E402
from train.config.output_dir import check_output_dir, interruption  # noqa: E402
from train.config.resolved import RunPlan, resolve_run  # noqa: E402
from train.engines.vllm_server_api import ServerError  # noqa: E402
from train.guards.on_policy import OffPolicy  # noqa: E402
from train.guards.stops import RewardHacking  # noqa: E402

# These import in milliseconds and load no model library: `python train/grpo.py --help` (which exits in parse_config)
# must not import torch, transformers, TRL, datasets or Inspect (tests/test_script_help.py). The run itself
# (train/run.py) does, and is imported once a config has passed every check.


def build_trainer(script_args: ScriptArguments, training_args, model_args):
    """Validate, load the data and build the trainer: (trainer, rollout recorder or None, manifest).

    Raises ConfigError/DatasetError (and ServerError for servers that do not answer) before any model
    loads. ``main`` trains it; checks and benchmarks (scripts/check_on_policy.py) use it to get the very
    trainer ``main`` would run. Whoever builds it calls ``trainer.close_rollout_engine()`` when done.
    """
    plan = plan_run(script_args, training_args, model_args)
    from train.run import trainer_for  # lazy: torch, transformers, TRL, datasets, Inspect (not for --help)

    return trainer_for(plan)


def plan_run(script_args: ScriptArguments, training_args, model_args) -> RunPlan:
    """The start-up line on the dtype this CPU computes in (chosen in parse_config), then every check and the run's
    decisions, once (train/config/resolved.py): ConfigError/DatasetError before anything heavy loads."""
    dtype_line = getattr(model_args, "cpu_dtype_line", None)
    if dtype_line and training_args.process_index == 0:
        print(dtype_line)
    return resolve_run(script_args, training_args, model_args)


def main(script_args: ScriptArguments, training_args, model_args) -> dict:
    """Train; return output_dir, global_step, log_history, rollout_logs. Raises ConfigError/DatasetError early."""
    check_output_dir(script_args, training_args)  # another run's checkpoints there: resume or overwrite, never mix
    plan = plan_run(script_args, training_args, model_args)
    from train.run import train  # lazy: torch, transformers, TRL, datasets, Inspect (not for --help)

    return train(plan)


def _error(exc: Exception, status: int) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return status


def cli(argv: list[str] | None = None) -> int:
    script = sys.argv[0] if os.path.basename(sys.argv[0]) == "grpo.py" else "train/grpo.py"  # as typed
    command = ["python", script, *(sys.argv[1:] if argv is None else argv)]  # for the resume command
    try:
        script_args, training_args, model_args = parse_config(argv)  # --help exits here, before any model library
    except (ConfigError, DatasetError) as exc:
        return _error(exc, 2)
    try:
        main(script_args, training_args, model_args)
    except (ConfigError, DatasetError) as exc:
        return _error(exc, 2)
    except ServerError as exc:  # a vLLM server failed (before or during training): saved checkpoints are complete
        return _error(exc, 3)
    except (OffPolicy, RewardHacking) as exc:  # a run guard stopped training (train/guards/); checkpoints are complete
        return _error(exc, 4)
    except KeyboardInterrupt as exc:  # Ctrl-C: the last saved checkpoint and the exact command that resumes from it
        if getattr(exc, "main_process", True):
            print(f"error: {interruption(exc, command, training_args.output_dir)}", file=sys.stderr)
        return 130  # 128 + SIGINT, as a shell reports a program Ctrl-C stopped
    return 0


if __name__ == "__main__":
    sys.exit(cli())
