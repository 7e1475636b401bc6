"""Held-out evals while training (train/artifacts/held_out.py) do not change what a seeded run trains (slow: two real
runs). What a run with evals writes, logs and draws, and that ``eval_steps`` alone evaluates nothing, are tested on
the default suite's real runs (tests/integration/test_train_run.py)."""

import pytest

from problems.math_domain import MATH
from tests.helpers.training import EVALS_ON, length_parity, tiny_run


def held_out_entries(history):
    return [entry for entry in history if "eval_correct/accuracy" in entry]


def training_entries(history):
    return [entry for entry in history if "grad_norm" in entry]


@pytest.mark.slow
def test_held_out_evals_do_not_change_what_a_seeded_run_trains(tmp_path, cpu_model, monkeypatch):
    """What the eval should guarantee: same completions, same rewards and gradients as the run without evals."""
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    with_evals = tiny_run(tmp_path / "on", *EVALS_ON)
    without = tiny_run(tmp_path / "off")
    keys = ("reward", "grad_norm", "entropy", "num_tokens", "completions/mean_length")
    on, off = training_entries(with_evals["log_history"]), training_entries(without["log_history"])
    assert [[e[k] for k in keys] for e in on] == [pytest.approx([e[k] for k in keys], rel=1e-5) for e in off]

    from inspect_ai.log import read_eval_log

    for step in (1, 2):
        name = f"rollouts/rollouts-step00000{step}-00000{step}.eval"
        texts = [[s.output.completion for s in read_eval_log(str(tmp_path / r / name)).samples] for r in ("on", "off")]
        assert texts[0] == texts[1]
