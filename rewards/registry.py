"""Reward names a config may use, mapped to the functions. Explicit on purpose: no plugin magic."""

from __future__ import annotations

from collections.abc import Callable

from rewards.code.code_rewards import code_tests
from rewards.math.answer_format import THINK_NONE
from rewards.math.math_rewards import bind_think, correctness, format_reward

REWARD_FUNCS: dict[str, Callable[..., list[float | None]]] = {
    "correctness": correctness,
    "format": format_reward,
    "code_tests": code_tests,
}


# rewards that read the final answer, so a reasoning model's <think> setting applies to them
ANSWER_READING = (correctness, format_reward)


def unknown_rewards(names: list[str] | tuple[str, ...]) -> list[str]:
    """The names that are not reward functions (the one check; config validation and the trainer use it).

    >>> unknown_rewards(["correctness", "nope"])
    ['nope']
    """
    return [name for name in names if name not in REWARD_FUNCS]


def get_reward_funcs(
    names: list[str] | tuple[str, ...], think: str = THINK_NONE
) -> list[Callable[..., list[float | None]]]:
    """Functions for ``names``, the answer-reading ones with ``think`` frozen in (the same setting the
    eval scorer takes as ``-S think=``); an unknown name raises with the list of valid ones.

    >>> [f.__name__ for f in get_reward_funcs(["correctness", "format"], think="after_last_close")]
    ['correctness', 'format_reward']
    """
    unknown = unknown_rewards(names)
    if unknown:
        raise ValueError(
            f"unknown reward function(s) {unknown}: valid names are {sorted(REWARD_FUNCS)} "
            "(set reward_funcs in your config to some of these)"
        )
    funcs = [REWARD_FUNCS[name] for name in names]
    return [bind_think(f, think) if f in ANSWER_READING else f for f in funcs]
