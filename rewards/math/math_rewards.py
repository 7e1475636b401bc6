"""TRL reward functions built on ``rewards.grade``.

Contract (TRL ``GRPOTrainer``): called as ``f(prompts=..., completions=..., **dataset_columns,
trainer_state=..., ...)``; returns one float (or None) per completion; ignores unknown kwargs.
Completions may be plain strings or conversational (``[{"role": "assistant", "content": ...}]``).
Module-level functions so they pickle and can be named in a config.

No completion can stop a training run: whatever the text, ``correctness`` gives each completion a verdict
(1.0 or 0.0, with its reason) or ``None`` with a reason, logged and counted (``OUTCOMES_WITHOUT_A_VERDICT``).
Only a bad reference that is not text at all, or a broken installation (``VerifierUnavailable``: the
verifier's workers have never started), raise.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

from rewards.common import brief, clip, completion_text, question_text
from rewards.math.answer_format import (
    DEFAULT_ANSWER_FORMAT,
    THINK_MODES,
    THINK_NONE,
    answer_format_named,
    find_final_answer,
)
from rewards.math.answer_tree import TooComplex, Unparseable
from rewards.math.math_verifier import InvalidReference, check_reference, grade
from rewards.math.worker_pool import VerifierBug, VerifierOverloaded, VerifierTooSlow, VerifierUnavailable
from rewards.reward_log import WhyPaid, log_why
from rewards.verdict import Reason

logger = logging.getLogger(__name__)

# Every outcome a math completion can have; each is logged every step (0.0 included) so TRL's
# per-step average of a metric is the share of completions with that outcome.
# Outcomes with no verdict: the reward is None (TRL leaves the completion out of its group's mean and std),
# a warning (an error for a verifier bug) names the sample and the pair, and the reason is counted.
OUTCOMES_WITHOUT_A_VERDICT = (
    "invalid_reference",  # InvalidReference: the dataset row is broken, not the policy's doing
    "verifier_overloaded",  # VerifierOverloaded: no verdict within the deadline on a busy machine
    "verifier_too_slow",  # VerifierTooSlow: the CPU/memory safety net stopped a comparison within the limits
    "verifier_bug",  # VerifierBug or any other exception from grading a readable reference: please report the pair
)
MATH_OUTCOMES = (*(r.value for r in Reason if r is not Reason.TESTS_FAILED), *OUTCOMES_WITHOUT_A_VERDICT)
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
    completions,
    answer,
    think: str = THINK_NONE,
    log_metric=None,
    log_extra=None,
    prompts=None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
    **kwargs,
) -> list[float | None]:
    r"""1.0 when the completion's final answer equals ``answer`` (via ``rewards.grade``), else 0.0; never raises
    on a completion.

    ``prompts`` (TRL passes them): each completion's prompt, whose question (``rewards.common.question_text``: its
    last user message) ``grade`` checks the answer does not restate (reason ``restated_question``), as the Inspect
    scorer does with ``state.input``. ``answer_format``: the final-answer line read (``ANSWER_FORMATS``).

    Every completion ends in one of:

    - a verdict: 1.0 (``correct``) or 0.0 with its reason (``mismatch``, ``hedged``, ``unparseable``, ...).
      A candidate the verifier's parser refuses by raising ``Unparseable`` / ``TooComplex`` past ``grade``
      (a front-end defect: it should have been a verdict) is still the candidate's fault: 0.0 with reason
      ``unparseable`` / ``too_complex``, and a warning saying so;
    - ``None`` with a reason (``OUTCOMES_WITHOUT_A_VERDICT``), for trouble that is not the candidate's:
      ``invalid_reference`` (``InvalidReference``: a dataset bug), ``verifier_overloaded`` (no verdict
      within the deadline on a busy machine), ``verifier_too_slow`` (the CPU safety net stopped a comparison
      within the structural limits) and ``verifier_bug`` (``VerifierBug``, or any other exception while
      grading a readable reference: logged as an error with the pair and the traceback). The answer may be right.

    Raises only for what must stop a run: ``VerifierUnavailable`` (the verifier's worker processes have never
    started: a broken installation; ``rewards.warm_up()`` reports it before training), a reference that is
    not a string, and completions and answers of different lengths. Per step, the share of completions with
    each outcome goes to ``log_metric`` as ``verdict/<outcome>`` (``MATH_OUTCOMES``, 0.0 included), and
    each completion's answer, outcome and explanation to ``log_extra`` (``rewards.reward_log``), for the
    rollout log.

    >>> correctness(["2 + 2 = 4\nANSWER: 4", "ANSWER: 5", "no idea"], answer=["4", "4", "4"])
    [1.0, 0.0, 0.0]
    >>> correctness([[{"role": "assistant", "content": r"\boxed{1/2}"}]], answer=["0.5"], trainer_state=None)
    [1.0]
    """
    if len(completions) != len(answer):
        raise ValueError(f"{len(completions)} completions but {len(answer)} answers")
    if prompts is not None and len(prompts) != len(completions):
        raise ValueError(f"{len(completions)} completions but {len(prompts)} prompts")
    answer_format_named(answer_format)  # an unknown format is the caller's error, before any completion
    rewards: list[float | None] = []
    whys: list[WhyPaid] = []
    for index, (completion, reference) in enumerate(zip(completions, answer)):
        if not isinstance(reference, str):
            raise TypeError(f"answer[{index}] must be a string, got {type(reference).__name__}: fix the dataset column")
        question = None if prompts is None else question_text(prompts[index])
        why = grade_one(completion_text(completion), reference, think, index, question, answer_format)
        rewards.append(None if why.reason in OUTCOMES_WITHOUT_A_VERDICT else 1.0 if why.reason == "correct" else 0.0)
        whys.append(why)
    log_outcomes([why.reason for why in whys], log_metric)
    log_why("correctness", whys, log_extra)
    return rewards


def grade_one(
    text: str,
    reference: str,
    think: str = THINK_NONE,
    index: int = 0,
    question: str | None = None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> WhyPaid:
    """One completion's outcome for ``correctness``: a verdict, or a reason from ``OUTCOMES_WITHOUT_A_VERDICT``.

    ``VerifierUnavailable`` (a broken installation) is the one exception it lets through.
    """
    try:
        return WhyPaid.of(grade(text, reference, think=think, question=question, answer_format=answer_format))
    except InvalidReference as exc:
        logger.warning("correctness: sample %d has an unusable reference, reward is None: %s", index, exc)
        return WhyPaid(None, "invalid_reference", clip(str(exc)))
    except BaseException as exc:  # sorted by _without_a_verdict, which raises again what is not ours to decide
        answer = _answer_of(text, think, answer_format)
        pair = f"sample {index}: {brief(text if answer is None else answer)} vs reference {brief(reference)}"
        return _without_a_verdict(exc, text, answer, reference, think, pair)


def _answer_of(text: str, think: str, answer_format: str = DEFAULT_ANSWER_FORMAT) -> str | None:
    """The final answer the completion states, for the log (None when there is none, or reading it fails)."""
    try:
        return find_final_answer(text, think, answer_format).answer
    except Exception:  # grade() raised first; the log still gets the pair
        return None


def _without_a_verdict(exc: BaseException, text: str, answer, reference: str, think: str, pair: str) -> WhyPaid:
    """What ``grade`` raised on a readable reference, turned into an outcome (``OUTCOMES_WITHOUT_A_VERDICT`` or
    the candidate's verdict); ``VerifierUnavailable`` and what is not an ``Exception`` (Ctrl-C) are raised."""
    if isinstance(exc, VerifierUnavailable) or not isinstance(exc, Exception):  # a broken install; Ctrl-C
        raise exc
    if isinstance(exc, VerifierTooSlow):
        logger.warning(
            "correctness: %s: the verifier's CPU safety net stopped the comparison, reward is None "
            "(a verifier defect: please report the pair): %s",
            pair,
            exc,
        )
        return WhyPaid(answer, "verifier_too_slow", clip(str(exc)))
    if isinstance(exc, VerifierOverloaded):
        logger.warning("correctness: %s got no verdict in time, reward is None: %s", pair, exc)
        return WhyPaid(answer, "verifier_overloaded", clip(str(exc)))
    if isinstance(exc, (Unparseable, TooComplex)):
        return _escaped_parse_error(text, answer, reference, think, pair, exc)
    if isinstance(exc, VerifierBug):
        logger.error("correctness: %s: the verifier failed, reward is None (please report the pair): %s", pair, exc)
        return WhyPaid(answer, "verifier_bug", f"verifier bug: {clip(str(exc), 1000)}")
    # any other failure of the verifier's own code: a bug, never the candidate's 0.0
    logger.error("correctness: %s: the verifier raised, reward is None (please report the pair)", pair, exc_info=exc)
    return WhyPaid(answer, "verifier_bug", f"verifier bug: {type(exc).__name__}: {clip(str(exc), 1000)}")


def _escaped_parse_error(text: str, answer, reference: str, think: str, pair: str, exc: BaseException) -> WhyPaid:
    """``Unparseable``/``TooComplex`` raised past ``grade``: the candidate's fault unless the reference fails the
    same way when graded as its own answer (then the row is broken: ``invalid_reference``)."""
    try:
        check_reference(reference)
        grade(f"ANSWER: {reference}", reference, think=think)
    except (Unparseable, TooComplex, InvalidReference) as ref_exc:
        logger.warning("correctness: %s: the reference itself cannot be read, reward is None: %s", pair, ref_exc)
        return WhyPaid(None, "invalid_reference", f"reference {brief(reference)} cannot be read: {clip(str(ref_exc))}")
    except Exception:  # the reference could not be checked now (a busy machine): the candidate's error stands
        pass
    reason = Reason.TOO_COMPLEX if isinstance(exc, TooComplex) else Reason.UNPARSEABLE
    logger.warning(
        "correctness: %s: %s raised past the verifier's front end (a defect to report), scored %s: %s",
        pair,
        type(exc).__name__,
        reason.value,
        exc,
    )
    return WhyPaid(answer, reason.value, f"{clip(str(exc))} (raised past the verifier's front end)")


def format_reward(
    completions, think: str = THINK_NONE, log_extra=None, answer_format: str = DEFAULT_ANSWER_FORMAT, **kwargs
) -> list[float]:
    r"""1.0 when a single final answer can be extracted (the ``answer_format``'s line, ``ANSWER:`` by default, or
    one ``\boxed{}``).

    Log it at weight 0 to watch format adherence, or give it weight for shaping. What it found (the
    answer, or why there is none) goes to ``log_extra`` for the rollout log.

    >>> format_reward(["ANSWER: 3", "It is 3.", "ANSWER: 3\nANSWER: 4"])
    [1.0, 0.0, 0.0]
    """
    found = [find_final_answer(completion_text(c), think, answer_format) for c in completions]
    log_why("format_reward", [_format_why(f) for f in found], log_extra)
    return [0.0 if f.answer is None else 1.0 for f in found]


def _format_why(found) -> WhyPaid:
    if found.answer is None:
        return WhyPaid(None, found.reason.value, found.detail)
    return WhyPaid(found.answer, "found", f"one final answer: {found.answer!r}")


class ThinkBound:
    """A math reward function with the answer-extraction settings frozen in: ``think`` and ``answer_format``
    (picklable, keeps ``__name__``).

    >>> bind_think(correctness, "after_last_close")(["<think>3</think>ANSWER: 4"], answer=["4"])
    [1.0]
    """

    def __init__(self, func: Callable, think: str, answer_format: str = DEFAULT_ANSWER_FORMAT) -> None:
        if think not in THINK_MODES:
            raise ValueError(f"think must be one of {THINK_MODES}, got {think!r}")
        answer_format_named(answer_format)
        if func not in (correctness, format_reward):
            raise ValueError(f"only correctness and format_reward take a think setting, not {func!r}")
        self.func, self.think, self.answer_format = func, think, answer_format
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__

    def __call__(self, *args, **kwargs):
        kwargs.pop("think", None)
        kwargs.pop("answer_format", None)
        return self.func(*args, think=self.think, answer_format=self.answer_format, **kwargs)

    def __repr__(self) -> str:
        if self.answer_format == DEFAULT_ANSWER_FORMAT:
            return f"bind_think({self.__name__}, {self.think!r})"
        return f"bind_think({self.__name__}, {self.think!r}, answer_format={self.answer_format!r})"


def bind_think(func: Callable, think: str, answer_format: str = DEFAULT_ANSWER_FORMAT) -> Callable:
    """``correctness`` / ``format_reward`` with the extraction settings fixed (``think``, ``answer_format``); both
    defaults return ``func`` itself."""
    defaults = think == THINK_NONE and answer_format == DEFAULT_ANSWER_FORMAT
    return func if defaults and func in (correctness, format_reward) else ThinkBound(func, think, answer_format)
