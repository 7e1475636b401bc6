"""Chat messages as Inspect message objects: the one role table (prompts are ``{"role", "content"}`` dicts).

Here, below ``train`` and ``evals``, because both write them: the evals' task prompts, and training's rollout logs
(each completion's turns as an Inspect sample's messages).
"""

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def chat_messages(messages: list[dict]) -> list[ChatMessage]:
    """``[{"role": ..., "content": ...}]`` (as ``rewards.build_messages`` returns) as Inspect messages; assistant
    ``tool_calls`` and ``tool`` results (TRL's and transformers' chat format) as Inspect writes tool calls."""
    converted: list[ChatMessage] = []
    pending: list[ToolCall] = []  # the calls the next tool messages answer, in order
    for index, m in enumerate(messages):
        content = str(m.get("content") or "")
        if m["role"] == "tool":
            call = pending.pop(0) if pending else None
            converted.append(
                ChatMessageTool(
                    content=content,
                    tool_call_id=call.id if call else None,
                    function=m.get("name") or (call.function if call else None),
                )
            )
        elif m["role"] == "assistant" and m.get("tool_calls"):
            pending = [tool_call(c, f"call_{index}_{n}") for n, c in enumerate(m["tool_calls"])]
            converted.append(ChatMessageAssistant(content=content, tool_calls=list(pending)))
        else:
            converted.append(ROLES[m["role"]](content=content))
    return converted


def tool_call(call: dict, call_id: str) -> ToolCall:
    """One ``{"type": "function", "function": {"name", "arguments"}}`` (or flat ``{"name", "arguments"}``) call."""
    function = call.get("function", call)
    arguments = function.get("arguments") or {}
    if not isinstance(arguments, dict):
        arguments = {"value": arguments}  # a call whose arguments did not parse: shown as written
    return ToolCall(id=call_id, function=str(function.get("name", "unknown")), arguments=arguments)
