"""A CPU run's loss forward and backward sped up by RecordingGRPOTrainer.computing_loss (each 4-bit layer dequantized
once per step instead of in every forward and backward call, cpu/bnb_cpu.py) train exactly as bitsandbytes' own
autograd: same losses, gradient norms and rewards. A real tiny GRPO run of the 4-bit CPU config, twice."""

from contextlib import nullcontext

import pytest

from problems.math_domain import MATH
from tests.helpers.training import length_parity, tiny_run
from train.trainer import RecordingGRPOTrainer

KEYS = ("reward", "grad_norm", "entropy", "num_tokens", "completions/mean_length", "loss")


@pytest.mark.slow
def test_dequantized_loss_trains_exactly_as_bitsandbytes(tmp_path, cpu_model, monkeypatch):
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    fast = tiny_run(tmp_path / "fast")
    monkeypatch.setattr(RecordingGRPOTrainer, "computing_loss", lambda self: nullcontext())
    plain = tiny_run(tmp_path / "plain")
    steps = [[entry[k] for k in KEYS] for entry in fast["log_history"] if "grad_norm" in entry]
    assert len(steps) == 2 and all(step[1] > 0 for step in steps)  # a gradient to compare
    assert steps == [[entry[k] for k in KEYS] for entry in plain["log_history"] if "grad_norm" in entry]
