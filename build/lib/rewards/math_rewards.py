"""TRL reward functions built on ``rewards.grade``.

Contract (TRL ``GRPOTrainer``): called as ``f(prompts=..., completions=..., **dataset_columns,
trainer_state=..., ...)``; returns one float (or None) per completion; ignores unknown kwargs.
Completions may be plain strings or conversational (``[{"role": "assistant", "content": ...}]``).
Module-level functions so they pickle and can be named in a config.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from rewards.answer_format import extract_answer
from rewards.math_verifier import InvalidReference, grade

logger = logging.getLogger(__name__)


def completion_text(completion) -> str:
    """The assistant text of one completion, plain or conversational."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        return "".join(str(m.get("content") or "") for m in completion if m.get("role", "assistant") == "assistant")
    raise TypeError(f"completion must be a str or a list of chat messages, got {type(completion).__name__}")


def correctness(completions, answer, **kwargs) -> list[float | None]:
    r"""1.0 when the completion's final answer equals ``answer`` (via ``rewards.grade``), else 0.0.

    A reference that cannot be parsed gives ``None`` (TRL leaves it out) and a warning naming the
    sample, because it is a dataset bug, not something the policy did.

    >>> correctness(["2 + 2 = 4\nANSWER: 4", "ANSWER: 5", "no idea"], answer=["4", "4", "4"])
    [1.0, 0.0, 0.0]
    >>> correctness([[{"role": "assistant", "content": r"\boxed{1/2}"}]], answer=["0.5"], trainer_state=None)
    [1.0]
    """
    if len(completions) != len(answer):
        raise ValueError(f"{len(completions)} completions but {len(answer)} answers")
    rewards: list[float | None] = []
    for index, (completion, reference) in enumerate(zip(completions, answer)):
        try:
            rewards.append(1.0 if grade(completion_text(completion), reference).correct else 0.0)
        except InvalidReference as exc:
            logger.warning("correctness: sample %d has an unusable reference, reward is None: %s", index, exc)
            rewards.append(None)
    return rewards


def format_reward(completions, **kwargs) -> list[float]:
    r"""1.0 when a single final answer can be extracted (an ``ANSWER:`` line or one ``\boxed{}``).

    Log it at weight 0 to watch format adherence, or give it weight for shaping.

    >>> format_reward(["ANSWER: 3", "It is 3.", "ANSWER: 3\nANSWER: 4"])
    [1.0, 0.0, 0.0]
    """
    return [0.0 if extract_answer(completion_text(c)) is None else 1.0 for c in completions]
