"""Which items changed grade between two scorers' results in one Inspect log.

After ``inspect score LOG --scorer verigrpo/math_verifier --action append``, a log holds the old
scorer's and ours side by side; this is the number to report ("re-scoring changed N of M").
Used by ``scripts/score_diff.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.scorer import Score, value_to_float

_to_float = value_to_float()


@dataclass(frozen=True)
class GradeChange:
    sample_id: str | int
    epoch: int
    before: float
    after: float
    answer: str | None
    explanation: str | None


def grade_of(score: Score, key: str = "correct") -> float | None:
    """A score's grade as 0..1 (dict scores: the ``key`` entry); None when unscored."""
    value = score.value
    if isinstance(value, dict):
        if key not in value:
            raise KeyError(f"score has keys {sorted(value)}, not {key!r}; pass --key")
        value = value[key]
    grade = _to_float(value)
    return None if isinstance(grade, float) and math.isnan(grade) else grade


def scorer_names(log: EvalLog) -> list[str]:
    """Scorer names present on the log's samples, in the order they were added."""
    names: list[str] = []
    for sample in log.samples or []:
        for name in sample.scores or {}:
            if name not in names:
                names.append(name)
    return names


def _score(sample: EvalSample, name: str) -> Score:
    if not sample.scores or name not in sample.scores:
        raise KeyError(f"sample {sample.id} has no score named {name!r} (it has {sorted(sample.scores or {})})")
    return sample.scores[name]


def grade_changes(log: EvalLog, before: str, after: str, key: str = "correct") -> tuple[int, list[GradeChange]]:
    """(number of items compared, the items whose grade differs). Unscored items are not compared."""
    compared, changes = 0, []
    for sample in log.samples or []:
        old, new = _score(sample, before), _score(sample, after)
        old_grade, new_grade = grade_of(old, key), grade_of(new, key)
        if old_grade is None or new_grade is None:
            continue
        compared += 1
        if old_grade != new_grade:
            changes.append(GradeChange(sample.id, sample.epoch, old_grade, new_grade, new.answer, new.explanation))
    return compared, changes
