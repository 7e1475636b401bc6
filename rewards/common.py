"""Helpers both wings use: the text of a TRL completion, a bounded repr for messages, and running a coroutine
from sync code."""

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


def _message_field(message, name: str):
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _message_text(message) -> str:
    """A message's text: a plain string, a list of parts (``{"type": "text", "text": ...}``, as TRL and OpenAI write
    multimodal turns), or an Inspect ``ChatMessage`` (its ``text``: the text parts joined)."""
    if not isinstance(message, dict) and isinstance(getattr(message, "text", None), str):
        return message.text  # inspect_ai.model.ChatMessage: read without importing Inspect here
    content = _message_field(message, "content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(str(_message_field(part, "text") or "") for part in content if _message_field(part, "text"))
    return ""


def question_text(prompt) -> str | None:
    """The problem a prompt asks: its last user message (the worked examples' questions and the instruction come
    before it and are not the problem), or the whole prompt when it is a plain string; None when there is none.

    The one reading of "the question" for the verifier's restatement rule (``rewards.grade(..., question=...)``), on
    both sides: the TRL rewards apply it to TRL's ``prompts``, the Inspect scorers to ``state.input`` (a string, or
    ``ChatMessage`` objects), and a rollout log records it as each sample's input, so re-scoring reads the same text.

    >>> question_text([{"role": "system", "content": "Solve it."}, {"role": "user", "content": "What is 2+3?"}])
    'What is 2+3?'
    >>> question_text("What is 2+3?"), question_text([]), question_text(None)
    ('What is 2+3?', None, None)
    """
    if prompt is None:
        return None
    if isinstance(prompt, str):
        return prompt or None
    if not isinstance(prompt, Sequence):
        raise TypeError(f"a prompt is a str or a list of chat messages, got {type(prompt).__name__}")
    users = [m for m in prompt if _message_field(m, "role") == "user"]
    return (_message_text(users[-1]) or None) if users else None


BRIEF_CHARS = 200  # characters of model text (or a reference) a message or log line quotes


def brief(value, limit: int = BRIEF_CHARS) -> str:
    """A repr for messages that stays short whatever ``value`` is: long text is cut in the middle (its length
    said), and an int is never turned into decimal digits past Python's int-to-str limit (4,300 digits,
    ``sys.get_int_max_str_digits``), which raises ``ValueError`` from inside an f-string.

    >>> brief("7" * 1000, limit=36)
    "'7777777…7777777' (1000 chars)"
    >>> brief(10**5000)
    'an int of about 5001 digits'
    >>> brief("4")
    "'4'"
    """
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    if isinstance(value, int):
        if value.bit_length() > 3 * limit:  # ~0.3 decimal digits per bit: short ints are shown whole
            return f"an int of about {int(value.bit_length() * 0.30103) + 1} digits"
        return repr(value)
    if not isinstance(value, (str, bytes)):
        return f"<{type(value).__name__}>"  # its repr may print huge ints (sympy numbers): not called
    if len(value) <= limit and len(repr(value)) <= limit:
        return repr(value)
    keep = max(1, limit // 2 - 10)  # escapes make a repr up to 4x longer than its text: cut the reprs too
    return f"{repr(value[:keep])[:keep]}…{repr(value[-keep:])[-keep:]} ({len(value)} chars)"


def clip(text: str, limit: int = 2000) -> str:
    """``text`` (a message, not a value to quote) cut in the middle to about ``limit`` characters.

    >>> clip("abc"), clip("x" * 50 + "y" * 50, limit=40)
    ('abc', 'xxxxxxxxxxxxxx … [72 chars cut] … yyyyyyyyyyyyyy')
    """
    if len(text) <= limit:
        return text
    keep = max(1, limit // 2 - 6)
    return f"{text[:keep]} … [{len(text) - 2 * keep} chars cut] … {text[-keep:]}"


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
