"""Reward names a config may use, mapped to the functions. Explicit on purpose: no plugin magic."""

from __future__ import annotations

from collections.abc import Callable

from rewards.code_rewards import code_tests
from rewards.math_rewards import correctness, format_reward

REWARD_FUNCS: dict[str, Callable[..., list[float | None]]] = {
    "correctness": correctness,
    "format": format_reward,
    "code_tests": code_tests,
}


def get_reward_funcs(names: list[str] | tuple[str, ...]) -> list[Callable[..., list[float | None]]]:
    """Functions for ``names``; an unknown name raises with the list of valid ones."""
    unknown = [name for name in names if name not in REWARD_FUNCS]
    if unknown:
        raise ValueError(
            f"unknown reward function(s) {unknown}: valid names are {sorted(REWARD_FUNCS)} "
            "(set reward_funcs in your config to some of these)"
        )
    return [REWARD_FUNCS[name] for name in names]
