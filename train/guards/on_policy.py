"""The on-policy guard: every ``on_policy_check_steps`` steps, is the rollout engine still the policy being trained?

A stale adapter (a sync that stopped loading), a quantization mismatch between vLLM and the trainer, or an engine
that lost its adapter while asleep all look the same from the rewards: training goes on, off-policy, for hours. The
guard scores a few fixed probe sequences (the first training prompts with one fixed completion) through the rollout
engine and through the trainer's policy right after a batch was generated, when the engine holds the adapter synced
from the policy as it is now, and logs the mean |Δ logprob| per token as ``on_policy/probe_logp_gap``.

The band is calibrated at the run's first check (step 0: the LoRA B matrices are zero, so the two sides hold the same
weights and differ only by their kernels): the larger of the precision's calibration (``train/gpu_check/on_policy.py``
``TOLERANCE``: 4-bit/bf16 0.08, fp32 1e-3; CPU measurements: 4-bit synced 0.046 vs one step stale 0.30, fp32 7.8e-6 vs
0.106) and ``NOISE_FACTOR`` x the step-0 gap. A gap above the band (or not a number) stops the run with ``OffPolicy``.
The scoring itself is ``train/gpu_check/on_policy.py``'s (``policy_logprobs``, the engine's ``prompt_logprobs``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from train.gpu_check.on_policy import COMPLETION, NOISE_FACTOR, TOLERANCE, policy_logprobs, precision_key

GAP_METRIC = "on_policy/probe_logp_gap"  # mean |Δ logprob| per probe token, engine vs policy
BAND_METRIC = "on_policy/band"  # the largest gap that still counts as on-policy
SECONDS_METRIC = "on_policy/check_seconds"  # what the check cost (docs/training.md "Watching a run")
DEFAULT_CHECK_STEPS = 10  # with a vLLM adapter engine and on_policy_check_steps unset
PROBES = 2  # probe sequences: the first training prompts, each with COMPLETION


class OffPolicy(RuntimeError):
    """The rollout engine no longer scores tokens as the trained policy does: the run stops."""


@dataclass(frozen=True)
class Band:
    """The largest mean |Δ logprob| that still counts as on-policy, and where it comes from."""

    upper: float
    source: str

    def holds(self, gap: float) -> bool:
        return math.isfinite(gap) and gap <= self.upper


def calibrate(precision: str, step0_gap: float) -> Band:
    """The band from the precision's calibration and this run's step-0 gap (the two sides' kernel noise)."""
    calibrated = TOLERANCE[precision]
    if not math.isfinite(step0_gap):
        raise OffPolicy(
            f"the on-policy guard's step-0 measurement is {step0_gap}: vLLM and the policy could not score the same "
            "tokens. Check the engine's logprobs (train/engines/), or turn the guard off with on_policy_check_steps: 0."
        )
    relative = NOISE_FACTOR * step0_gap
    if relative <= calibrated:
        return Band(calibrated, f"the {precision} calibration; step-0 gap {step0_gap:.3g}")
    return Band(relative, f"{NOISE_FACTOR:g} x the step-0 gap {step0_gap:.3g}, above the {precision} calibration")


def check_steps(configured: int | None, has_adapter_engine: bool) -> int:
    """Steps between checks: the configured value, or DEFAULT_CHECK_STEPS with an adapter engine (0: off)."""
    if configured is not None:
        return configured
    return DEFAULT_CHECK_STEPS if has_adapter_engine else 0


def off_policy_message(gap: float, band: Band, step: int, engine: str, adapter: str | None, last_ok: int) -> str:
    """The one-paragraph error: what diverged, what usually causes it, how to turn the guard off."""
    return (
        f"the on-policy guard stopped the run at step {step}: the rollout engine ({engine}, adapter {adapter}) and the "
        f"trained policy score the same probe tokens {gap:.3g} apart (mean |Δ logprob| per token), outside its band "
        f"(<= {band.upper:.3g}: {band.source}); the last check inside it was at step {last_ok}. The rollouts since then "
        "did not come from the policy being trained. Likely causes: the adapter sync stopped reaching the engine (a "
        "stale adapter: same adapter id reused, a load that failed silently, an adapter lost while vLLM slept), the "
        "engine and the trainer quantize or compute the base differently (4-bit settings, dtype), or a server serving "
        f"another base model. Checkpoints up to step {last_ok} passed their checks; resume from one of them once the "
        "cause is fixed. To train on anyway, turn the guard off with on_policy_check_steps: 0."
    )


def probe_ids(trainer) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, completion ids) of the probes: the first PROBES training prompts, each with COMPLETION."""
    tokenizer = trainer.processing_class
    completion = tokenizer(COMPLETION, add_special_tokens=False)["input_ids"]
    probes = []
    for row in trainer.train_dataset.select(range(min(PROBES, len(trainer.train_dataset)))):
        prompt = tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False
        )
        probes.append((list(prompt), list(completion)))
    return probes


def engine_logprobs(engine, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
    """The engine's logprobs of the completion under its current adapter, leaving a sleeping engine asleep again
    (scoring wakes it; TRL puts it to sleep after every generate and the guard runs after one)."""
    scores = engine.prompt_logprobs(prompt_ids, completion_ids)
    if getattr(engine, "enable_sleep_mode", False) and getattr(engine, "llm", None) is not None:
        engine.llm.sleep(level=2)
    return scores


class OnPolicyGuard:
    """Called by the trainer after each training batch is generated (``on_batch_generated``)."""

    def __init__(self, every: int, precision: str) -> None:
        self.every = every
        self.precision = precision
        self.band: Band | None = None
        self.last_ok: int | None = None
        self.checked: set[int] = set()
        self.pending: dict[str, float] = {}  # metrics for the next training log
        self._probes = None

    @classmethod
    def for_run(cls, configured: int | None, engine, model_args) -> OnPolicyGuard | None:
        """The run's guard, or None (no adapter engine, or on_policy_check_steps: 0)."""
        every = check_steps(configured, engine is not None)
        if every == 0 or engine is None:
            return None
        return cls(every, precision_key(model_args))

    def due(self, step: int) -> bool:
        """At the first batch, then once ``every`` steps have passed (a batch generated every few steps, with
        ``steps_per_generation`` > 1, may never fall on a multiple)."""
        return not self.checked or step >= max(self.checked) + self.every

    def measure(self, trainer) -> float:
        """Mean |Δ logprob| per probe token, engine vs policy, the largest over processes (a collective).

        Every process runs the policy's forwards: under DeepSpeed ZeRO-3 a forward is itself a collective (each
        layer all-gathers its weight shards), so a forward on the main process alone, while the others wait in
        ``gather_object``, deadlocks at step 0 (vLLM servers score on the main process only). Only the processes
        that hold the engine (``saves_here``) score on it.
        """
        from accelerate.utils import gather_object

        engine = trainer.rollout_engine
        scores_here = engine.saves_here  # colocated: every process; servers: the main one
        if self._probes is None:
            self._probes = probe_ids(trainer)
        diffs = []
        for prompt, completion in self._probes:
            ours = policy_logprobs(trainer.model, prompt, completion)  # every process: a collective under ZeRO-3
            if scores_here:
                theirs = engine_logprobs(engine, prompt, completion)
                diffs += [abs(a - b) for a, b in zip(ours, theirs)]
        gap = sum(diffs) / len(diffs) if scores_here else None
        gaps = [g for g in gather_object([gap]) if g is not None]
        return max(gaps, key=lambda g: g if math.isfinite(g) else math.inf)

    def after_batch(self, trainer) -> None:
        """Check when due: calibrate at the first check, else compare with the band; OffPolicy when outside."""
        step = trainer.state.global_step  # optimizer steps completed: the policy the engine was just synced to
        if not self.due(step):
            return
        self.checked.add(step)
        start = time.perf_counter()
        gap = self.measure(trainer)
        if self.band is None:
            self.band = calibrate(self.precision, gap)
            if trainer.accelerator.is_main_process:
                print(
                    f"[verigrpo] on-policy guard: step-{step} gap {gap:.3g}, band <= {self.band.upper:.3g} "
                    f"({self.band.source}); checked every {self.every} steps (on_policy_check_steps)",
                    flush=True,
                )
        self.pending = {
            GAP_METRIC: gap,
            BAND_METRIC: self.band.upper,
            SECONDS_METRIC: time.perf_counter() - start,
        }
        if not self.band.holds(gap):
            engine = trainer.rollout_engine
            raise OffPolicy(
                off_policy_message(gap, self.band, step, engine.engine.value, engine.rollout_adapter, self.last_ok or 0)
            )
        self.last_ok = step

    def metrics(self) -> dict[str, float]:
        """The last check's metrics, once (added to the next training log entry)."""
        pending, self.pending = self.pending, {}
        return pending
