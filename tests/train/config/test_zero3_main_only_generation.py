"""Under ZeRO-3 the main process must never run a forward alone (issue #40: the same class as the guard's deadlock).

The held-out eval generates on the main process only (train/artifacts/held_out.py); under ZeRO-3 without
``ds3_gather_for_generation`` every forward is a collective the waiting processes never join. Pre-flight refuses it.
"""

from __future__ import annotations

import pytest

from train.config import parse_config
from train.config.distributed_checks import DistributedConfigError, check_distributed

CPU_SERVER = "configs/cpu-smollm2-vllm-server.yaml"
ZERO3 = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3", "WORLD_SIZE": "2"}
ZERO2 = {**ZERO3, "ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"}
EVAL = ("--eval_strategy", "steps", "--eval_steps", "5", "--eval_problems", "8")


@pytest.mark.parametrize(
    ("overrides", "env", "refused"),
    [
        ((*EVAL, "--ds3_gather_for_generation", "false"), ZERO3, True),
        ((*EVAL, "--ds3_gather_for_generation", "true"), ZERO3, False),
        (("--ds3_gather_for_generation", "false"), ZERO3, False),  # no held-out eval: nothing runs on main alone
        ((*EVAL, "--ds3_gather_for_generation", "false"), ZERO2, False),  # ZeRO-2: whole weights on every process
        ((*EVAL, "--ds3_gather_for_generation", "false"), {**ZERO3, "WORLD_SIZE": "1"}, False),
    ],
    ids=["zero3-eval-no-gather", "zero3-eval-gather", "zero3-no-eval", "zero2", "one-process"],
)
def test_a_held_out_eval_under_zero3_needs_the_gather(overrides, env, refused):
    args = parse_config(["--config", CPU_SERVER, "--output_dir", "unused", *overrides])
    if refused:
        with pytest.raises(DistributedConfigError, match=r"ds3_gather_for_generation: false under DeepSpeed ZeRO-3"):
            check_distributed(*args, env=env)
    else:
        check_distributed(*args, env=env)
