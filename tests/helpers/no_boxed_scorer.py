"""A deliberately different scorer for audit tests: our verifier, except that \\boxed{} answers are rejected."""

from inspect_ai.scorer import INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import TaskState

from evals.math_scoring import score_completion


@scorer(metrics=[accuracy()])
def no_boxed_verifier() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        if "\\boxed" in state.output.completion:
            return Score(value=INCORRECT, answer=None, explanation="boxed answers are not accepted here")
        ours = await score_completion(state.output.completion, target.text)
        return Score(value=ours.value["correct"], answer=ours.answer, explanation=ours.explanation)

    return score
