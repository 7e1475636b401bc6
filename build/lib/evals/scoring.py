"""The Inspect side of the verifier: one Score built from ``rewards.grade``, used by every scorer we register.

Scorers wrap this pure check and never mutate state. ``grade`` is the same object the training
reward (``rewards.correctness``) calls, so eval accuracy is the quantity training optimized.
"""

from __future__ import annotations

import anyio
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, mean, stderr
from inspect_ai.solver import TaskState

from rewards import InvalidReference, Verdict, grade, verifier_id

# "correct" is the headline (C/I -> accuracy); "format" is the share of outputs with one extractable answer.
MATH_METRICS = {"correct": [accuracy(), stderr()], "format": [mean()]}
HEADLINE = "correct"


def verdict_score(verdict: Verdict) -> Score:
    """A Verdict as an Inspect Score: value, extracted answer, explanation and why."""
    return Score(
        value={"correct": CORRECT if verdict.correct else INCORRECT, "format": 0.0 if verdict.answer is None else 1.0},
        answer=verdict.answer,
        explanation=verdict.explanation,
        metadata={"reason": verdict.reason.value, **verifier_id()},
    )


async def score_completion(completion: str, reference: str) -> Score:
    """Grade one completion off the event loop (the verifier may wait on its worker process)."""
    try:
        verdict = await anyio.to_thread.run_sync(grade, completion, reference)
    except InvalidReference as exc:
        # a dataset bug: recorded, excluded from the metric, never counted as the model's error
        return Score.unscored(reason="invalid_reference", explanation=str(exc), metadata=verifier_id())
    return verdict_score(verdict)


def math_scorer() -> Scorer:
    """A fresh scorer function (Inspect tags the returned object, so each registration needs its own)."""

    async def score(state: TaskState, target: Target) -> Score:
        return await score_completion(state.output.completion, target.text)

    return score
