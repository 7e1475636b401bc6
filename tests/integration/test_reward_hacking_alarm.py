"""The reward-hacking alarm on a real tiny CPU run whose correctness reward is deliberately lenient: it pays any
completion with a digit in it (train/guards/reward_hacking.py). The audit at the first save re-judges the rollout
log with the project's verifier, finds completions the reward paid and the verifier rejects, and with
stop_on_reward_hacking the run stops there, its checkpoint saved."""

import re

import pytest

import rewards
from tests.helpers.training import length_parity, tiny_run
from train.guards.reward_hacking import RewardHacking


def lenient_correctness(completions, **kwargs):
    """A broken correctness reward: 1.0 for any digit anywhere, right answer or not."""
    return [float(bool(re.search(r"\d", rewards.common.completion_text(c)))) for c in completions]


def test_a_lenient_reward_raises_the_alarm_and_stops_the_run(tmp_path, cpu_model, monkeypatch, capsys):
    monkeypatch.setitem(rewards.REWARD_FUNCS, "length_parity", length_parity)
    monkeypatch.setitem(rewards.REWARD_FUNCS, "correctness", lenient_correctness)
    run = tmp_path / "run"
    with pytest.raises(RewardHacking, match=r"stopped the run at step 1: the reward paid (\d+) of (\d+) paid") as caught:
        tiny_run(run, "--max_steps", "3", "--stop_on_reward_hacking", "true")
    paid_rejected, paid = map(int, re.search(r"paid (\d+) of (\d+) paid", str(caught.value)).groups())
    assert 0 < paid_rejected <= paid <= 4
    assert "math_verifier rejects" in str(caught.value) and "scripts/audit_rollouts.py" in str(caught.value)
    assert (run / "checkpoint-1" / "adapter_model.safetensors").is_file() and not (run / "checkpoint-2").exists()
    assert "[verigrpo] WARNING reward-hacking alarm: the reward paid" in capsys.readouterr().out
