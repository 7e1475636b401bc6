"""TRL reward functions built on ``rewards.grade``.

Contract (TRL ``GRPOTrainer``): called as ``f(prompts=..., completions=..., **dataset_columns,
trainer_state=..., ...)``; returns one float (or None) per completion; ignores unknown kwargs.
Completions may be plain strings or conversational (``[{"role": "assistant", "content": ...}]``).
Module-level functions so they pickle and can be named in a config.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from rewards.common import completion_text
from rewards.math.answer_format import THINK_MODES, THINK_NONE, find_final_answer
from rewards.math.math_verifier import InvalidReference, grade
from rewards.math.worker_pool import VerifierOverloaded, VerifierTooSlow
from rewards.reward_log import WhyPaid, log_why
from rewards.verdict import Reason

logger = logging.getLogger(__name__)

# Every outcome a math completion can have; each is logged every step (0.0 included) so TRL's
# per-step average of a metric is the share of completions with that outcome.
MATH_OUTCOMES = (
    *(r.value for r in Reason if r is not Reason.TESTS_FAILED),
    "invalid_reference",  # the dataset row is broken: reward None
    "verifier_overloaded",  # no verdict within the deadline on a busy machine: reward None
    "verifier_too_slow",  # the CPU safety net stopped a comparison within the structural limits: reward None
)
METRIC_PREFIX = "verdict/"


def log_outcomes(outcomes: list[str], log_metric: Callable | None) -> None:
    """Report the share of each outcome through TRL's ``log_metric(name, value)`` hook (if given).

    TRL (>= 1.16) passes it to every reward function (averaged per logging step, next to ``kl`` and
    ``entropy``); Inspect and plain calls do not, and nothing is logged.
    """
    if log_metric is not None and outcomes:
        counts = Counter(outcomes)
        for outcome in MATH_OUTCOMES:
            log_metric(METRIC_PREFIX + outcome, counts[outcome] / len(outcomes))


def correctness(
    completions, answer, think: str = THINK_NONE, log_metric=None, log_extra=None, **kwargs
) -> list[float | None]:
    r"""1.0 when the completion's final answer equals ``answer`` (via ``rewards.grade``), else 0.0.

    A reference that cannot be parsed gives ``None`` (TRL leaves it out) and a warning naming the
    sample, because it is a dataset bug, not something the policy did; so does a verdict the busy
    machine could not deliver within the deadline (``VerifierOverloaded``), and one the CPU safety net
    stopped (``VerifierTooSlow``, a verifier defect to report): the answer may be right.
    Any other verifier failure is a bug and raises. Per step, the share of completions by
    ``Verdict`` reason goes to ``log_metric`` as ``verdict/<reason>``, and each verdict's answer,
    reason and explanation to ``log_extra`` (``rewards.reward_log``), for the rollout log.

    >>> correctness(["2 + 2 = 4\nANSWER: 4", "ANSWER: 5", "no idea"], answer=["4", "4", "4"])
    [1.0, 0.0, 0.0]
    >>> correctness([[{"role": "assistant", "content": r"\boxed{1/2}"}]], answer=["0.5"], trainer_state=None)
    [1.0]
    """
    if len(completions) != len(answer):
        raise ValueError(f"{len(completions)} completions but {len(answer)} answers")
    rewards: list[float | None] = []
    whys: list[WhyPaid] = []
    for index, (completion, reference) in enumerate(zip(completions, answer)):
        try:
            verdict = grade(completion_text(completion), reference, think=think)
        except InvalidReference as exc:
            logger.warning("correctness: sample %d has an unusable reference, reward is None: %s", index, exc)
            rewards.append(None)
            whys.append(WhyPaid(None, "invalid_reference", str(exc)))
            continue
        except VerifierTooSlow as exc:
            logger.warning(
                "correctness: sample %d: the verifier's CPU safety net stopped the comparison, reward is None "
                "(a verifier defect: please report the pair): %s",
                index,
                exc,
            )
            rewards.append(None)
            whys.append(WhyPaid(None, "verifier_too_slow", str(exc)))
            continue
        except VerifierOverloaded as exc:
            logger.warning("correctness: sample %d got no verdict in time, reward is None: %s", index, exc)
            rewards.append(None)
            whys.append(WhyPaid(None, "verifier_overloaded", str(exc)))
            continue
        rewards.append(1.0 if verdict.correct else 0.0)
        whys.append(WhyPaid.of(verdict))
    log_outcomes([why.reason for why in whys], log_metric)
    log_why("correctness", whys, log_extra)
    return rewards


def format_reward(completions, think: str = THINK_NONE, log_extra=None, **kwargs) -> list[float]:
    r"""1.0 when a single final answer can be extracted (an ``ANSWER:`` line or one ``\boxed{}``).

    Log it at weight 0 to watch format adherence, or give it weight for shaping. What it found (the
    answer, or why there is none) goes to ``log_extra`` for the rollout log.

    >>> format_reward(["ANSWER: 3", "It is 3.", "ANSWER: 3\nANSWER: 4"])
    [1.0, 0.0, 0.0]
    """
    found = [find_final_answer(completion_text(c), think) for c in completions]
    log_why("format_reward", [_format_why(f) for f in found], log_extra)
    return [0.0 if f.answer is None else 1.0 for f in found]


def _format_why(found) -> WhyPaid:
    if found.answer is None:
        return WhyPaid(None, found.reason.value, found.detail)
    return WhyPaid(found.answer, "found", f"one final answer: {found.answer!r}")


class ThinkBound:
    """A math reward function with the ``think`` extraction setting frozen in (picklable, keeps ``__name__``).

    >>> bind_think(correctness, "after_last_close")(["<think>3</think>ANSWER: 4"], answer=["4"])
    [1.0]
    """

    def __init__(self, func: Callable, think: str) -> None:
        if think not in THINK_MODES:
            raise ValueError(f"think must be one of {THINK_MODES}, got {think!r}")
        if func not in (correctness, format_reward):
            raise ValueError(f"only correctness and format_reward take a think setting, not {func!r}")
        self.func, self.think = func, think
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__

    def __call__(self, *args, **kwargs):
        kwargs.pop("think", None)
        return self.func(*args, think=self.think, **kwargs)

    def __repr__(self) -> str:
        return f"bind_think({self.__name__}, {self.think!r})"


def bind_think(func: Callable, think: str) -> Callable:
    """``correctness`` / ``format_reward`` with the extraction setting fixed; ``"none"`` returns ``func`` itself."""
    return func if think == THINK_NONE and func in (correctness, format_reward) else ThinkBound(func, think)
