"""Scorers under the names the design this project comes from used.

    from evals.verify import is_correct      # *is* rewards.is_correct, re-exported, not wrapped
    inspect score LOG --scorer evals/verify.py@math_verifier --action append --model none/none

From any directory, once installed, the same scorer is ``verigrpo/math_verifier`` (see README).
"""

from inspect_ai.scorer import Scorer, scorer

from evals.scoring import MATH_METRICS, math_scorer
from rewards import grade, is_correct

__all__ = ["grade", "is_correct", "math_verifier"]


@scorer(metrics=MATH_METRICS)
def math_verifier() -> Scorer:
    """Correct when the completion's final answer equals the target under ``rewards.grade``."""
    return math_scorer()
