"""What watching a run costs: the run guards' and the held-out evals' share of training time, from one run's log
history (``scripts/guard_overheads.py``; the numbers in docs/training.md "Watching a run").

Everything is measured in the run itself, so the ratios hold whatever the machine's load was: TRL logs each step's
``step_time`` (generation, scoring and the optimizer step), the on-policy guard ``on_policy/check_seconds`` (inside
``step_time``: it runs after the batch is generated), the reward-hacking alarm ``guards/reward_hacking_seconds`` and
each held-out eval ``eval_runtime`` (both outside ``step_time``).
"""

from __future__ import annotations

import json
from pathlib import Path

from train.artifacts.curve import load_history
from train.guards.on_policy import SECONDS_METRIC as CHECK_SECONDS
from train.guards.reward_hacking import SECONDS_METRIC as ALARM_SECONDS


def overheads(history: list[dict]) -> dict:
    """Seconds and shares of the training steps' own time (``step_time`` summed)."""
    steps = [e for e in history if "step_time" in e]
    step_seconds = sum(e["step_time"] for e in steps)
    checks = [e[CHECK_SECONDS] for e in history if CHECK_SECONDS in e]
    alarm = sum(e[ALARM_SECONDS] for e in history if ALARM_SECONDS in e)
    evals = [e["eval_runtime"] for e in history if "eval_runtime" in e]
    if not step_seconds:
        raise ValueError("the log history has no step_time entries (trl logs them every logging step)")
    return {
        "steps": len(steps),
        "step_seconds": step_seconds,
        "mean_step_seconds": step_seconds / len(steps),
        "on_policy_checks": len(checks),
        "on_policy_seconds": sum(checks),
        "on_policy_share": sum(checks) / step_seconds,  # of the steps' time (the checks are part of it)
        "held_out_evals": len(evals),
        "held_out_seconds": sum(evals),
        "held_out_share": sum(evals) / step_seconds,  # added to the steps' time
        "alarm_seconds": alarm,
        "alarm_share": alarm / step_seconds,
    }


def report(run_dir: Path) -> str:
    o = overheads(load_history(run_dir))
    lines = [
        f"{run_dir}: {o['steps']} steps, {o['step_seconds']:.1f} s of step time ({o['mean_step_seconds']:.1f} s/step)",
        f"on-policy guard: {o['on_policy_checks']} checks, {o['on_policy_seconds']:.1f} s = {o['on_policy_share']:.1%} "
        "of step time",
        f"held-out evals: {o['held_out_evals']} evals, {o['held_out_seconds']:.1f} s = {o['held_out_share']:.1%} of "
        "step time (added)",
        f"reward-hacking alarm: {o['alarm_seconds']:.1f} s = {o['alarm_share']:.1%} of step time (added)",
    ]
    return "\n".join(lines) + "\n" + json.dumps(o)
