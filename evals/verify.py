"""The task files' scorers, by file path: what ``evals/math_task.py`` and ``evals/code_task.py`` score with.

    from evals.verify import is_correct      # *is* rewards.is_correct, re-exported, not wrapped
    inspect score LOG --scorer evals/verify.py@math_verifier --action append --model none/none
    inspect score LOG --scorer evals/verify.py@unit_test_scorer --action append --model none/none

From any directory, once installed, the same scorers are ``verigrpo/math_verifier`` and
``verigrpo/unit_test_scorer`` (``evals/inspect_plugin/``); both build their Score with
``evals.math_scoring.math_scorer`` / ``evals.code_scoring.code_scorer``.
"""

from inspect_ai.scorer import Scorer, scorer

from evals.code_scoring import CODE_METRICS, code_scorer
from evals.math_scoring import MATH_METRICS, math_scorer
from rewards import grade, grade_code, is_correct

__all__ = ["grade", "grade_code", "is_correct", "math_verifier", "unit_test_scorer"]


@scorer(metrics=MATH_METRICS)
def math_verifier(think: str = "none") -> Scorer:
    """Correct when the completion's final answer equals the target under ``rewards.grade``.

    ``think``: ``"none"`` grades the whole completion; ``"after_last_close"`` only what follows the
    last ``</think>`` (no tag, no answer). Use the setting the model was trained with
    (``inspect score ... -S think=after_last_close``).
    """
    return math_scorer(think)


@scorer(metrics=CODE_METRICS)
def unit_test_scorer() -> Scorer:
    """Fraction of the target's unit tests the completion's last ```python block passes, in sandboxes
    (``rewards.grade_code``: the coroutine the ``code_tests`` reward runs)."""
    return code_scorer()
