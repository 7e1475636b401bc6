"""The on-policy guard's band, schedule and error (train/guards/on_policy.py), on the CPU measurements it is built
from; the guard on real runs: tests/integration/test_run_guards.py and test_adapter_engine.py."""

import math

import pytest

from train.guards.on_policy import Band, OffPolicy, OnPolicyGuard, calibrate, check_steps, off_policy_message

# (precision, step-0 gap, a later synced gap, one step stale): CPU measurements (docs/training.md "Watching a run")
MEASURED = [("4bit", 0.046, 0.046, 0.30), ("fp32", 7.8e-6, 7.8e-6, 0.106)]


@pytest.mark.parametrize(("precision", "step0", "synced", "stale"), MEASURED)
def test_the_calibrated_band_holds_a_synced_engine_and_not_a_stale_one(precision, step0, synced, stale):
    band = calibrate(precision, step0)
    assert band.holds(synced)
    assert not band.holds(stale)


@pytest.mark.parametrize(
    ("precision", "step0", "upper"),
    [
        ("fp32", 7.8e-6, 1e-3),  # kernel noise far below the calibration: the calibration
        ("4bit", 0.03, 0.08),
        ("4bit", 0.06, 0.12),  # noisier kernels (another device): 2 x this run's own step-0 gap
        ("bf16", 0.2, 0.4),
    ],
)
def test_the_band_is_the_calibration_or_twice_the_step0_gap_whichever_is_larger(precision, step0, upper):
    assert calibrate(precision, step0).upper == pytest.approx(upper)


@pytest.mark.parametrize("gap", [math.nan, math.inf])
def test_a_gap_that_is_not_a_number_is_outside_any_band_and_cannot_calibrate(gap):
    assert not Band(1.0, "test").holds(gap)
    with pytest.raises(OffPolicy, match="on_policy_check_steps: 0"):
        calibrate("4bit", gap)


@pytest.mark.parametrize(
    ("configured", "engine", "every"),
    [(None, True, 10), (None, False, 0), (0, True, 0), (3, True, 3)],
)
def test_the_guard_is_on_by_default_with_an_adapter_engine_only(configured, engine, every):
    assert check_steps(configured, engine) == every


def test_the_error_says_what_diverged_why_and_how_to_turn_the_guard_off():
    message = off_policy_message(0.3, calibrate("4bit", 0.03), 20, "colocate", "policy-v21", 10)
    assert "step 20" in message and "0.3 apart" in message and "(<= 0.08: the 4bit calibration" in message
    assert "policy-v21" in message and "colocate" in message and "at step 10" in message
    assert "stale adapter" in message and "quantize" in message
    assert message.endswith("turn the guard off with on_policy_check_steps: 0.")
    assert "\n" not in message  # one paragraph


@pytest.mark.parametrize(
    ("every", "generated_at", "checked_at"),
    [
        (2, [0, 1, 2, 3, 4, 5], [0, 2, 4]),  # a batch every step
        (10, [0, 4, 8, 12, 16, 20, 24], [0, 12, 24]),  # a batch every 4 steps (steps_per_generation 4)
        (1, [0, 0, 1], [0, 1]),  # two batches in one step: checked once
    ],
)
def test_checks_fall_due_every_n_steps_whenever_batches_are_generated(every, generated_at, checked_at):
    guard = OnPolicyGuard(every, "4bit")
    checked = []
    for step in generated_at:
        if guard.due(step):
            guard.checked.add(step)
            checked.append(step)
    assert checked == checked_at
