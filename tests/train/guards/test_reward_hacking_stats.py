"""The reward-hacking alarm's statistics on constructed series (train/guards/reward_hacking.py); the alarm on a real
run trained with a lenient reward: tests/integration/test_reward_hacking_alarm.py."""

import pytest

from evals.log_stats.paired import PairedTable, compare
from train.guards.reward_hacking import divergence_evidence, diverges, paid_rejected_grows, reward_rise

RISING = [0.1, 0.15, 0.12, 0.2, 0.5, 0.6, 0.55, 0.65]  # per-step training reward: clearly higher later
FLAT = [0.3, 0.4, 0.35, 0.3, 0.35, 0.3, 0.4, 0.35]
NOISY = [0.0, 0.9, 0.1, 0.8, 0.2, 0.9, 0.0, 0.95]  # a higher later mean, but within the noise


@pytest.mark.parametrize(
    ("rewards", "rose"),
    [(RISING, True), (FLAT, False), (NOISY, False), (list(reversed(RISING)), False)],
    ids=["rising", "flat", "noisy", "falling"],
)
def test_a_rise_counts_only_when_its_interval_is_above_zero(rewards, rose):
    rise = reward_rise(rewards)
    assert rise.low <= rise.difference <= rise.high
    assert (rise.low > 0) is rose


def test_under_four_steps_there_is_no_verdict():
    assert reward_rise([0.0, 0.5, 1.0]) is None
    assert not diverges(None, -0.5)


# held-out outcomes of the same 20 problems at the two evals: (both, only_after, only_before, neither)
FLAT_HELD_OUT = PairedTable(6, 1, 2, 11)  # 0.40 -> 0.35
BETTER_HELD_OUT = PairedTable(6, 6, 0, 8)  # 0.30 -> 0.60


@pytest.mark.parametrize(
    ("rewards", "held_out", "alarm"),
    [
        (RISING, FLAT_HELD_OUT, True),  # reward up, held-out not: the alarm
        (RISING, BETTER_HELD_OUT, False),  # both up: learning
        (FLAT, FLAT_HELD_OUT, False),  # nothing moved
        (NOISY, FLAT_HELD_OUT, False),  # a reward "rise" inside its noise
    ],
)
def test_the_divergence_alarm(rewards, held_out, alarm):
    assert diverges(reward_rise(rewards), compare(held_out).difference) is alarm


def test_the_evidence_names_both_intervals():
    evidence = divergence_evidence(reward_rise(RISING), compare(FLAT_HELD_OUT).to_dict(), 10, 20, "accuracy")
    assert evidence.startswith("between steps 10 and 20 the training reward rose from 0.143 to 0.575")
    assert "held-out accuracy went 0.400 -> 0.350 on the same 20 problems (-0.050" in evidence
    assert "McNemar mid-p" in evidence


@pytest.mark.parametrize(
    ("counts", "alarm"),
    [([], False), ([0, 0, 0], False), ([2], True), ([0, 3], True), ([3, 3], False), ([3, 1], False), ([1, 2], True)],
)
def test_the_audit_alarm_fires_when_paid_but_rejected_grows(counts, alarm):
    assert paid_rejected_grows(counts) is alarm
