"""Chat messages as Inspect message objects: the one role table (prompts are ``{"role", "content"}`` dicts)."""

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def chat_messages(messages: list[dict]) -> list[ChatMessage]:
    """``[{"role": ..., "content": ...}]`` (as ``rewards.build_messages`` returns) as Inspect messages."""
    return [ROLES[m["role"]](content=str(m.get("content") or "")) for m in messages]
