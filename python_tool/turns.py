"""Tool turns in an eval built exactly as training builds them, for the two providers that evaluate a tool-trained
policy: the policy in memory (``evals/providers/policy_model.py``, the held-out evals) and a saved run (``--model
verigrpo/<run dir>``, ``evals/providers/checkpoint_model.py``).

TRL's tool loop (``GRPOTrainer._tool_call_loop``, trl 1.16) decides what the policy reads and how its calls are read;
an eval that does it differently scores another policy than the one the rewards shaped. What it does, and what this
module repeats:

1. **The prompt**: the chat template rendered with ``tools=`` the environment's public methods
   (``python_tool/trl_environment.PythonToolEnvironment.python``), whose schema transformers writes from the signature and docstring
   (``get_json_schema``), then ``apply_chat_template(..., tokenize=True)``. Inspect's ``hf`` provider writes the
   schema from Inspect's ``ToolInfo`` instead (no ``"type": "function"`` wrapper, ``"additionalProperties": false``,
   no ``"return"``): another prompt. Here the task's tools must be the training tools (same names and descriptions,
   the run's limits), and the prompt is rendered with the training tools themselves.
2. **Later turns are not re-rendered**: TRL feeds the previous turn's ids + the generated ids (through the first
   end-of-sequence token) + the ids of the tool results and the next assistant header (TRL's own
   ``_get_tool_suffix_ids``, through ``python_tool/seams.tool_suffix_ids``). Re-rendering the conversation would write
   the call back as the template's canonical JSON and tokenize text the policy generated token by token.
3. **Parsing**: ``trl.chat_template_utils.parse_response`` with the tokenizer's response template (the one training
   set: ``python_tool/chat_template.apply_tool_template``, else TRL's ``add_response_schema``). Its ``content`` is the
   message's text and its ``tool_calls`` become Inspect ``ToolCall`` s (stop reason ``tool_calls``), which Inspect runs
   in the sandbox (``python_tool/inspect_tool.py``) before asking again.
4. **Limits**: at most ``max_tool_calling_iterations`` rounds of calls (unset: ``tool_max_calls + 1``,
   ``python_tool/trl_environment.tool_rounds``); calls in a turn after the last round are not run and the completion ends there (they
   are kept in the message's metadata, ``tool_calls_not_run``). The completion budget (``max_completion_length`` in
   training, the task's ``max_tokens`` here) counts every token after the prompt, tool results included: a later turn
   gets what is left, and tool results that leave no room end the completion (an empty last turn, stop reason
   ``max_tokens``; TRL drops results that overdraw the budget, and tool results are never graded).

**Malformed calls** (the rule both sides follow): text that ``parse_response`` cannot parse (bad JSON in a
``<tool_call>`` block, a call without a name) is not a call: the whole completion, decoded, is the message's text, no
tool runs and the completion ends; it is graded like any answer. A call that parses but that the tool cannot take (an
unknown tool name, arguments that are not an object or miss ``code``, ``code`` not a string) is a call: TRL answers it
with the text ``{'error': '<the exception>'}`` and generates again. Inspect refuses such a call itself, with its own
error text; the tool message the policy reads here is TRL's text, got by making the same call on a training
environment whose call limit is used up (so nothing runs). Inspect's messages keep Inspect's error; the next
model output's metadata (``tool_results_as_read``) holds the texts the policy read instead.
"""

from __future__ import annotations

import copy
import inspect as pyinspect
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.tool import ToolCall, ToolInfo
from transformers.utils import get_json_schema
from trl.chat_template_utils import (
    add_response_schema,
    get_training_chat_template,
    is_chat_template_prefix_preserving,
    parse_response,
)

from python_tool.chat_template import apply_tool_template, tool_calling_problem
from python_tool.inspect_tool import offered_limits
from python_tool.seams import sample_state, tool_suffix_ids
from python_tool.session import ToolLimits
from python_tool.trl_environment import PythonToolEnvironment, tool_limits, tool_rounds


class ToolTurnError(ValueError):
    """A tool conversation this eval cannot render or answer as training would: says what and why."""


@dataclass(frozen=True)
class ToolSetting:
    """A tool-trained run's tool: its limits, its rounds, its chat template and the template's extra arguments."""

    limits: ToolLimits
    rounds: int  # TRL's max_tool_calling_iterations
    tool_chat_template: str | None = None  # a shipped template name or a file (python_tool/chat_template.py)
    chat_template_kwargs: dict = field(default_factory=dict)

    @classmethod
    def from_config(cls, values: Mapping[str, Any]) -> ToolSetting | None:
        """From config values (``python_tool.trl_environment.TOOL_CONFIG_KEYS``; run.json's script and training
        sections merged); None for a run without tools."""
        if not values.get("tools"):
            return None
        limits = tool_limits(values)
        return cls(
            limits=limits,
            rounds=tool_rounds(limits.max_calls, values.get("max_tool_calling_iterations")),
            tool_chat_template=values.get("tool_chat_template"),
            chat_template_kwargs=dict(values.get("chat_template_kwargs") or {}),
        )


def training_tools(environment: PythonToolEnvironment) -> list:
    """The tools TRL offers for an environment: its class's public functions except ``reset`` and ``get_reward``,
    as bound methods (``GRPOTrainer.__init__``'s rule; TRL renders and calls these very objects)."""
    return [
        getattr(environment, name)
        for name, _ in pyinspect.getmembers(type(environment), predicate=pyinspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def training_messages(messages: list[ChatMessage]) -> list[dict]:
    """Inspect messages as the chat dicts TRL renders (``rewards.build_messages``' format; the inverse of
    ``records/chat.chat_messages``): ``tool_calls`` as ``{"type": "function", "function": {"name", "arguments"}}``,
    tool results as ``{"role": "tool", "name", "content"}``."""
    converted = []
    for message in messages:
        if message.role == "tool":
            converted.append({"role": "tool", "name": message.function, "content": message.text})
        elif message.role == "assistant" and message.tool_calls:
            calls = [
                {"type": "function", "function": {"name": call.function, "arguments": call.arguments}}
                for call in message.tool_calls
            ]
            converted.append({"role": "assistant", "content": message.text, "tool_calls": calls})
        else:
            converted.append({"role": message.role, "content": message.text})
    return converted


@dataclass(frozen=True)
class Turn:
    """One generation of a tool conversation: the ids the policy is fed."""

    ids: list[int]
    prompt_length: int  # the task prompt's ids: the completion budget counts from here
    rounds: int  # rounds of tool calls already run in this conversation
    read_instead: tuple[str, ...] = ()  # TRL's texts for calls Inspect refused (its messages hold Inspect's error)

    def budget(self, max_tokens: int) -> int:
        """Tokens this turn may generate: the completion budget less what the completion holds already."""
        return max_tokens - (len(self.ids) - self.prompt_length)


@dataclass(frozen=True)
class _Called:
    """What a turn that called tools left for the next one (kept by the first call's id)."""

    ids: list[int]  # the turn's prompt ids + its completion ids
    prompt_length: int
    rounds: int  # rounds run once these calls are answered


class ToolTurns:
    """Render, parse and limit tool turns like TRL's tool loop, for one tokenizer and one run's tool setting."""

    def __init__(self, tokenizer, setting: ToolSetting, max_model_len: int | None = None) -> None:
        tokenizer = copy.deepcopy(tokenizer)  # the caller's (the trainer's processing_class) stays as it is
        apply_tool_template(tokenizer, setting.tool_chat_template)
        problem = tool_calling_problem(tokenizer)
        if problem:
            raise ToolTurnError(f"the run's chat template {problem}: its tool turns cannot be rendered as trained")
        if (
            getattr(tokenizer, "response_template", None) is None
            and getattr(tokenizer, "response_schema", None) is None
        ):
            tokenizer = add_response_schema(tokenizer)  # as GRPOTrainer.__init__ does for a template it knows
        self.tokenizer = tokenizer
        self.setting = setting
        self.max_model_len = max_model_len
        # GRPOTrainer: a template that is not prefix-preserving is swapped for TRL's training variant
        self.chat_template = (
            None if is_chat_template_prefix_preserving(tokenizer) else get_training_chat_template(tokenizer)
        )
        self.tools = training_tools(PythonToolEnvironment(setting.limits))
        self._called: dict[str, _Called] = {}  # first tool call id of a turn -> that turn
        self._calls: dict[str, dict] = {}  # tool call id -> the call as TRL parsed it
        self._probe: list | None = None  # training tools whose call limit is used up (TRL's error texts)

    # ---- what the task offers ------------------------------------------------------------------

    def check_offer(self, tools: list[ToolInfo], tool_choice: Any) -> None:
        """The task's tools must be the training tools (by name and description), offered freely."""
        trained = {schema["function"]["name"]: schema["function"] for schema in map(get_json_schema, self.tools)}
        for tool in tools:
            function = trained.get(tool.name)
            if function is None or function.get("description") != tool.description:
                raise ToolTurnError(
                    f"the task offers the tool {tool.name!r}, which is not the tool this policy was trained with "
                    f"({sorted(trained)}, python_tool/session.py): offer it with python_tool/inspect_tool.py (-T tools=true)"
                )
            if sorted(tool.parameters.properties) != sorted(function["parameters"]["properties"]):
                raise ToolTurnError(f"the task's {tool.name!r} tool takes other arguments than the trained one")
        if tool_choice not in (None, "auto"):
            raise ToolTurnError(f"tool_choice {tool_choice!r}: training let the policy choose (auto)")
        self.check_limits()

    def check_limits(self) -> None:
        """The running sample's python tool must have the run's limits (the held-out evals pass them; a checkpoint
        eval takes them from ``-T``). Outside a sample (a direct ``generate`` call) there is nothing to check."""
        state = sample_state()
        offered = offered_limits(state.tools) if state is not None else None
        trained = self.setting.limits
        if offered is not None and offered != trained:
            flags = (
                f"-T tool_timeout_s={trained.timeout_s:g} -T tool_memory_mb={trained.memory_mb} "
                f"-T tool_output_chars={trained.output_chars} -T tool_max_calls={trained.max_calls}"
            )
            raise ToolTurnError(f"the task's python tool has limits {offered}, the run trained with {trained}: {flags}")

    # ---- the ids the policy is fed ----------------------------------------------------------

    def first_prompt(self, messages: list[ChatMessage]) -> list[int]:
        """The task prompt's ids, as ``GRPOTrainer._tokenize_prompts`` tokenizes a prompt with an environment."""
        tokenized = self.tokenizer.apply_chat_template(
            conversation=[training_messages(messages)],
            tools=self.tools or None,
            chat_template=self.chat_template,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            **self.setting.chat_template_kwargs,
        )
        return list(tokenized["input_ids"][0])

    async def prompt(self, messages: list[ChatMessage]) -> Turn:
        """The ids for the next generation of this conversation: the task prompt, or the turn that called tools
        + the tool results (TRL's suffix ids)."""
        last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
        if last_user is None:
            raise ToolTurnError("a tool conversation needs a user message (the task prompt)")
        turns = messages[last_user + 1 :]
        if not turns:
            ids = self.first_prompt(messages)
            return Turn(ids=ids, prompt_length=len(ids), rounds=0)
        results = []
        while turns and turns[-1].role == "tool":
            results.insert(0, turns.pop())
        called = turns[-1] if turns else None
        if not results or called is None or called.role != "assistant" or not called.tool_calls:
            raise ToolTurnError(
                "the conversation goes on after the task prompt with something other than tool results answering "
                "the policy's calls: training never feeds that to the policy"
            )
        turn = self._called.get(called.tool_calls[0].id)
        if turn is None:
            raise ToolTurnError(
                f"the tool call {called.tool_calls[0].id} was not generated by this model object: its ids are unknown"
            )
        tool_messages = [{"role": "tool", "name": m.function, "content": await self._result_text(m)} for m in results]
        suffix = tool_suffix_ids(self.tokenizer, tool_messages, self.chat_template, self.setting.chat_template_kwargs)
        read_instead = tuple(t["content"] for t, m in zip(tool_messages, results) if m.error is not None)
        return Turn(turn.ids + list(suffix), turn.prompt_length, turn.rounds, read_instead)

    def overlong(self, turn: Turn, max_tokens: int) -> bool:
        """No room for another turn: TRL drops the tool results (and ends the completion) when they overdraw the
        completion budget or fill the model's context; with the budget exactly spent it keeps them and generates
        nothing. Either way the completion ends with what the policy wrote."""
        if turn.rounds == 0:
            return False
        return turn.budget(max_tokens) <= 0 or (self.max_model_len is not None and len(turn.ids) >= self.max_model_len)

    async def _result_text(self, message: ChatMessageTool) -> str:
        """The tool result as the policy reads it: Inspect's text, or TRL's error text for a call Inspect refused."""
        if message.error is None:
            return message.text
        call = self._calls.get(message.tool_call_id or "")
        if call is None:
            raise ToolTurnError(f"a tool result answers an unknown call ({message.tool_call_id})")
        return await self._training_error_text(call, message)

    async def _training_error_text(self, call: dict, message: ChatMessageTool) -> str:
        """What TRL's loop reads for a call that fails: ``str({"error": str(exception)})`` of the same call on a
        training environment whose call limit is used up (a call the tool would take returns the call-limit text
        instead of running: then Inspect refused what training would have run, and this eval cannot go on)."""
        if self._probe is None:
            environment = PythonToolEnvironment(self.setting.limits)
            environment.reset()
            environment.session.stats.calls = self.setting.limits.max_calls  # nothing will run
            self._probe = training_tools(environment)
        function = call.get("function") or {}
        name = function.get("name")
        tool = next((t for t in self._probe if t.__name__ == name), None)
        if tool is None:
            return str({"error": f"Tool {name} not found."})
        try:
            taken = await tool(**function["arguments"])
        except Exception as exc:  # TRL's loop: whatever a tool raises is the result {"error": str(exc)}
            return str({"error": str(exc)})
        raise ToolTurnError(
            f"Inspect refused the call {call} ({message.error.type}: {message.error.message}) that training would "
            f"have run ({taken!r}); the eval cannot show the policy what training would"
        )

    # ---- what the policy wrote -------------------------------------------------------------

    def answer(
        self, turn: Turn, completion: list[int], ended: bool, model_name: str
    ) -> tuple[ChatMessageAssistant, str]:
        """The assistant message for ``completion`` (ids through the first end-of-sequence token; ``ended``: it
        has one) and the stop reason, parsed as TRL parses it."""
        parsed = parse_response(self.tokenizer, completion, prefix=turn.ids, tools=self.tools) if completion else {}
        content = parsed.get("content") or ""
        calls = parsed.get("tool_calls") or []
        stop = "stop" if ended else "max_tokens"
        if not calls:
            return ChatMessageAssistant(content=content, model=model_name, source="generate"), stop
        if turn.rounds >= self.setting.rounds:  # TRL's loop has run its last round: these calls never run
            message = ChatMessageAssistant(
                content=content, model=model_name, source="generate", metadata={"tool_calls_not_run": calls}
            )
            return message, stop
        tool_calls = [self._tool_call(call) for call in calls]
        self._called[tool_calls[0].id] = _Called(
            ids=turn.ids + list(completion), prompt_length=turn.prompt_length, rounds=turn.rounds + 1
        )
        return ChatMessageAssistant(content=content, tool_calls=tool_calls, model=model_name, source="generate"), (
            "tool_calls"
        )

    def _tool_call(self, call: dict) -> ToolCall:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        call_id = f"call_{uuid.uuid4().hex[:16]}"
        self._calls[call_id] = call
        if isinstance(arguments, dict):
            return ToolCall(id=call_id, function=str(function.get("name")), arguments=arguments)
        return ToolCall(
            id=call_id,
            function=str(function.get("name")),
            arguments={},
            parse_error=f"the arguments are not a JSON object: {arguments!r}",
        )
