"""The result type every grader returns, so a log can say *why* an item scored as it did."""

from __future__ import annotations

import enum
from dataclasses import dataclass, fields


class Reason(str, enum.Enum):
    """Why a completion got its score. A ``str`` enum so it serializes as plain text in logs."""

    CORRECT = "correct"
    NO_ANSWER = "no_answer"  # no ANSWER: line and no \boxed{}
    HEDGED = "hedged"  # several different final answers
    MISMATCH = "mismatch"  # parsed fine, not equal to the reference
    UNPARSEABLE = "unparseable"  # the candidate is not math we can read
    TOO_COMPLEX = "too_complex"  # over a structural limit (size, degree, ...; never a clock): False, fast
    RESTATED_QUESTION = "restated_question"  # the answer copies an expression of the question (grade(question=))
    TESTS_FAILED = "tests_failed"  # code: ran, and at least one unit test did not pass


@dataclass(frozen=True)
class TestOutcome:
    """One unit test of a code answer, as the host counted it."""

    __test__ = False  # not a pytest class

    index: int
    passed: bool
    message: str = ""  # why it failed ("" when it passed)


@dataclass(frozen=True, repr=False)
class Verdict:
    """One graded completion: the bool the reward uses plus what a human needs to audit it."""

    correct: bool
    answer: str | None
    reason: Reason
    explanation: str
    # Code answers only: tests passed out of tests run, and each test's outcome.
    passed: int | None = None
    total: int | None = None
    outcomes: tuple[TestOutcome, ...] = ()

    def __post_init__(self) -> None:
        if self.correct != (self.reason is Reason.CORRECT):
            raise ValueError(f"inconsistent Verdict: correct={self.correct} reason={self.reason}")
        if self.total is not None and not (0 <= (self.passed or 0) <= self.total):
            raise ValueError(f"inconsistent Verdict: passed={self.passed} total={self.total}")

    def __repr__(self) -> str:
        """The dataclass repr without the code-only fields when they are unset (math verdicts stay short)."""
        shown = [
            f"{f.name}={getattr(self, f.name)!r}"
            for f in fields(self)
            if f.name in _ALWAYS or getattr(self, f.name) not in (None, ())
        ]
        return f"Verdict({', '.join(shown)})"

    @property
    def fraction(self) -> float:
        """The reward: passed/total for code, 1.0 or 0.0 otherwise."""
        if self.total:
            return (self.passed or 0) / self.total
        return 1.0 if self.correct else 0.0


_ALWAYS = {"correct", "answer", "reason", "explanation"}
