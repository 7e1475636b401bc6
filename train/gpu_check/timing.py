"""Where a training step's time goes: the whole step, the engine's rollouts, and the adapter syncs.

The step is timed by a trainer callback (``on_step_begin`` to ``on_step_end``: rollouts, rewards,
loss, backward and the optimizer). The rollouts are timed around the engine's ``generate`` (TRL calls
it once per generation batch, inside the step) and their completion tokens counted; the syncs are the
engine's own record (``sync_weights``, which TRL calls before a step's first rollouts).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

from transformers import TrainerCallback


@dataclass
class StepTimes:
    steps: list[float] = field(default_factory=list)  # seconds per optimizer step
    generation: list[float] = field(default_factory=list)  # seconds per engine generate call
    tokens: list[int] = field(default_factory=list)  # completion tokens per generate call
    syncs: list[float] = field(default_factory=list)  # seconds per adapter sync during training

    def summary(self) -> dict:
        """s/step (after the first step, which carries the warm-up, when there is more than one), rollout
        tokens/s, and the shares of generation, adapter sync and everything else in the steps' time."""
        counted = self.steps[1:] if len(self.steps) > 1 else self.steps
        total = sum(self.steps)
        generation, syncs = sum(self.generation), sum(self.syncs)
        return {
            "steps": len(self.steps),
            "s_per_step": sum(counted) / len(counted) if counted else None,
            "first_step_s": self.steps[0] if self.steps else None,
            "step_s": self.steps,
            "rollout_tokens": sum(self.tokens),
            "rollout_tokens_per_s": sum(self.tokens) / generation if generation else None,
            "generation_share": generation / total if total else None,
            "sync_share": syncs / total if total else None,
            "rest_share": (total - generation - syncs) / total if total else None,
            "sync_s_per_step": syncs / len(self.steps) if self.steps else None,
            "sync_s": self.syncs,
            "generation_s": self.generation,
        }


class StepClock(TrainerCallback):
    """Wall time of each optimizer step."""

    def __init__(self, times: StepTimes) -> None:
        self.times = times
        self._start: float | None = None

    def on_step_begin(self, args, state, control, **kwargs):
        self._start = time.perf_counter()
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if self._start is not None:
            self.times.steps.append(time.perf_counter() - self._start)
            self._start = None
        return control


def time_rollouts(engine, times: StepTimes):
    """Time and count the engine's ``generate`` calls into ``times``; returns a function that stops it.

    Wraps the one engine instance (not its class), so nothing else in the process is affected.
    """
    original = engine.generate

    @functools.wraps(original)
    def generate(*args, **kwargs):
        start, synced = time.perf_counter(), len(engine.sync_record.seconds)
        result = original(*args, **kwargs)
        # TRL re-syncs inside generate after a sleep-mode engine slept: that time is the sync's, not generation's
        inner_syncs = sum(engine.sync_record.seconds[synced:])
        times.generation.append(time.perf_counter() - start - inner_syncs)
        times.tokens.append(sum(len(ids) for ids in result[1]))  # (prompt_ids, completion_ids, logprobs, ...)
        return result

    engine.generate = generate
    syncs_before = len(engine.sync_record.seconds)

    def stop() -> None:
        del engine.generate  # the class's method again
        times.syncs[:] = engine.sync_record.seconds[syncs_before:]

    return stop
