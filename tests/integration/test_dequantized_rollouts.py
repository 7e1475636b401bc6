"""A CPU run's rollouts sped up by RecordingGRPOTrainer.generating (each 4-bit layer dequantized once per batch,
cpu/bnb_cpu.py; grouped KV heads in attention, cpu/grouped_attention.py) train exactly as TRL's plain
generation: same completions, rewards and gradients. A real tiny GRPO run of the 4-bit CPU config, twice."""

from contextlib import nullcontext

import pytest

from problems.math_domain import MATH
from tests.helpers.training import length_parity, tiny_run
from train.trainer import RecordingGRPOTrainer

KEYS = ("reward", "grad_norm", "entropy", "num_tokens", "completions/mean_length", "loss")


@pytest.mark.slow
def test_sped_up_rollouts_train_exactly_as_plain_rollouts(tmp_path, cpu_model, monkeypatch):
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    fast = tiny_run(tmp_path / "fast")
    monkeypatch.setattr(RecordingGRPOTrainer, "generating", lambda self: nullcontext())
    plain = tiny_run(tmp_path / "plain")
    steps = [[entry[k] for k in KEYS] for entry in fast["log_history"] if "grad_norm" in entry]
    assert len(steps) == 2
    assert steps == [[entry[k] for k in KEYS] for entry in plain["log_history"] if "grad_norm" in entry]
