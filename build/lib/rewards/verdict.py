"""The result type every grader returns, so a log can say *why* an item scored as it did."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Reason(str, enum.Enum):
    """Why a completion got its score. A ``str`` enum so it serializes as plain text in logs."""

    CORRECT = "correct"
    NO_ANSWER = "no_answer"  # no ANSWER: line and no \boxed{}
    HEDGED = "hedged"  # several different final answers
    MISMATCH = "mismatch"  # parsed fine, not equal to the reference
    UNPARSEABLE = "unparseable"  # the candidate is not math we can read
    TOO_COMPLEX = "too_complex"  # hit a size/time bound: False, fast


@dataclass(frozen=True)
class Verdict:
    """One graded completion: the bool the reward uses plus what a human needs to audit it."""

    correct: bool
    answer: str | None
    reason: Reason
    explanation: str

    def __post_init__(self) -> None:
        if self.correct != (self.reason is Reason.CORRECT):
            raise ValueError(f"inconsistent Verdict: correct={self.correct} reason={self.reason}")
