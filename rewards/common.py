"""Helpers both wings use: the text of a TRL completion, and running a coroutine from sync code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any


def completion_text(completion) -> str:
    """The assistant text of one completion, plain or conversational.

    Only the policy's own turns count: tool results (role ``tool``) are left out, so an ``ANSWER:`` line or a
    box a program printed is not the policy's statement. Turns are joined by a newline (never glued together:
    ``ANSWER: 4`` then a turn ``2`` is a revision, not ``ANSWER: 42``), so a hedge across turns is a hedge.
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        turns = [str(m.get("content") or "") for m in completion if m.get("role", "assistant") == "assistant"]
        return "\n".join(turn for turn in turns if turn)
    raise TypeError(f"completion must be a str or a list of chat messages, got {type(completion).__name__}")


def run_blocking(coroutine):
    """Run a coroutine to completion from sync code, even from inside a running event loop's thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # re-raised in the caller's thread below
            result["error"] = exc

    thread = threading.Thread(target=target, name="verigrpo-code-grader")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]
