"""The Inspect side of the code verifier: a Score from ``rewards.grade_code``, the coroutine the reward runs.

The target of a code sample is its test spec (JSON text), so ``inspect score`` can re-grade an old
log without a model. Value: ``fraction`` (tests passed / total: exactly the training reward) and
``passed_all`` (1.0 when every test passed). Tamper markers go to metadata for monitoring only.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, stderr
from inspect_ai.solver import TaskState

from rewards import InvalidTests, Verdict, grade_code, tamper_markers, verifier_id

CODE_METRICS = {"fraction": [mean(), stderr()], "passed_all": [mean(), stderr()]}
CODE_HEADLINE = "unit_test_scorer.fraction"  # "<scorer>.<score>", as for the math task


def code_verdict_score(verdict: Verdict) -> Score:
    failed = [{"test": o.index, "message": o.message} for o in verdict.outcomes if not o.passed]
    return Score(
        value={"fraction": verdict.fraction, "passed_all": 1.0 if verdict.correct else 0.0},
        answer=verdict.answer,
        explanation=verdict.explanation,
        metadata={
            "reason": verdict.reason.value,
            "passed": verdict.passed,
            "total": verdict.total,
            "failed_tests": failed[:50],
            "tamper_markers": tamper_markers(verdict.answer),
            **verifier_id(),
        },
    )


async def score_code_completion(completion: str, tests: str) -> Score:
    """Grade one completion (awaits the sandboxes; never blocks the event loop)."""
    try:
        verdict = await grade_code(completion, tests)
    except InvalidTests as exc:
        return Score.unscored(reason="invalid_tests", explanation=str(exc), metadata=verifier_id())
    return code_verdict_score(verdict)


def code_scorer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return await score_code_completion(state.output.completion, target.text)

    return score
