"""Why each completion got its reward, handed to the trainer through TRL's ``log_extra`` hook.

TRL (>= 1.16) passes ``log_extra(column, values)`` to every reward function: one value per completion,
in completion order, gathered across processes into the completions table. The reward functions
report the graded answer, the reason and the explanation of the very verdict that set each reward
there, under ``<reward function>/<field>`` columns; ``train/trainer.py`` reads the same
columns back into the rollout log's scores. So the log shows what training saw, with no second grading.
Standard library only, like the rest of ``rewards/``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rewards.common import clip
from rewards.verdict import Verdict

FIELDS = ("answer", "reason", "explanation")
EXPLANATION_CHARS = 2000  # an explanation quoting a long candidate is cut in the middle for the log


@dataclass(frozen=True)
class WhyPaid:
    """What a log needs to show about one reward value: the answer graded, why, and in words."""

    answer: str | None
    reason: str
    explanation: str

    @classmethod
    def of(cls, verdict: Verdict) -> WhyPaid:
        return cls(verdict.answer, verdict.reason.value, clip(verdict.explanation, EXPLANATION_CHARS))


def why_column(reward_name: str, field: str) -> str:
    """The completions-table column of one field (``correctness/answer``); ``reward_name`` is TRL's name
    for the reward function (its ``__name__``)."""
    if field not in FIELDS:
        raise ValueError(f"field must be one of {FIELDS}, got {field!r}")
    return f"{reward_name}/{field}"


def log_why(reward_name: str, whys: Sequence[WhyPaid], log_extra: Callable | None) -> None:
    """Report one ``WhyPaid`` per completion through TRL's ``log_extra`` (nothing when it is None:
    Inspect and plain calls pass no hook). Every call logs every field, so each batch's columns are
    complete and in completion order.

    >>> table = {}
    >>> log_why("correctness", [WhyPaid("4", "correct", "verified equal")], table.__setitem__)
    >>> table["correctness/answer"], table["correctness/reason"]
    (['4'], ['correct'])
    """
    if log_extra is None:
        return
    for field in FIELDS:
        log_extra(why_column(reward_name, field), [getattr(why, field) for why in whys])


def whys_from_columns(reward_name: str, columns: Mapping[str, Sequence], count: int) -> list[WhyPaid | None]:
    """The ``count`` WhyPaid a reward function logged, rebuilt from its columns (None where it logged none).

    >>> whys_from_columns("format_reward", {"format_reward/answer": ["3"], "format_reward/reason": ["found"],
    ...                                     "format_reward/explanation": ["one final answer"]}, 1)
    [WhyPaid(answer='3', reason='found', explanation='one final answer')]
    >>> whys_from_columns("length", {}, 2)
    [None, None]
    """
    names = [why_column(reward_name, field) for field in FIELDS]
    if not any(name in columns for name in names):
        return [None] * count
    values = []
    for name in names:
        column = list(columns.get(name, [None] * count))
        if len(column) != count:
            raise ValueError(f"column {name!r} holds {len(column)} values for {count} completions")
        values.append(column)
    return [
        None if reason is None else WhyPaid(answer, str(reason), str(explanation or ""))
        for answer, reason, explanation in zip(*values)
    ]
