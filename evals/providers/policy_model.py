"""Evaluate a model object in memory (the policy a training run is updating) with any Inspect task.

A training run's held-out evals (``train/artifacts/held_out.py``) run the task ``inspect eval`` runs, on the
model training updates: nothing is written and reloaded. ``policy_model`` wraps that model and its tokenizer
as an Inspect ``Model`` whose provider is ``PolicyAPI`` (registered as ``verigrpo-policy``: the eval logs name
the model ``verigrpo-policy/<run>@step-N``).

Generation follows Inspect's ``hf`` provider, which ``inspect eval --model verigrpo/<run dir>`` uses: the chat
template with the generation prompt, the tokenizer's own special tokens, left padding, greedy decoding with
the model's generation config, and special tokens skipped when decoding. One thing differs, on purpose: which
prompts share a batch. The ``hf`` provider batches whatever requests arrive within a 2-second window, so a
prompt is padded differently from one run to the next, which can flip a greedy token. Here the batches are
fixed before the first request: the task's prompts, sorted by length, ``batch_size`` at a time. A request
generates its whole batch (later requests for it find their completion ready), so the same weights give the
same completions in every eval, whatever order Inspect sends the samples in. A prompt outside that plan (a
solver that changes the input) is generated alone, which is deterministic too.

Always greedy: a task config asking for sampling is refused rather than silently answered greedily.

Tools: for a run trained with the python tool (``tools=`` a ``python_tool.turns.ToolSetting``), a task that offers it
(``-T tools=true``) is answered as TRL's tool loop generates (``python_tool/turns.py``: the same template, tool schema,
ids, parser and limits). The task prompts are planned in batches as above; a turn after tool results is a new
prompt, generated alone. A policy trained without tools refuses a task that offers them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from evals.providers.model_info import register_model_info
from python_tool.turns import ToolSetting, ToolTurnError, ToolTurns

PROVIDER = "verigrpo-policy"
REGISTERED = f"verigrpo/{PROVIDER}"  # the name evals/inspect_plugin registers it under
DEFAULT_MAX_TOKENS = 512  # only for a task that sets none (the project's tasks all do)


class PolicyModelError(ValueError):
    """A request this provider cannot answer faithfully (sampling, tools, no model)."""


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int
    output_tokens: int
    stop_reason: str  # "stop" (an end-of-sequence token) or "max_tokens"
    seconds: float  # the batch's generation time
    ids: tuple[int, ...] = ()  # the generated ids through the first end-of-sequence token


def _messages(prompt: str | list[ChatMessage]) -> list[ChatMessage]:
    return [ChatMessageUser(content=prompt)] if isinstance(prompt, str) else list(prompt)


class PolicyAPI(ModelAPI):
    """An Inspect model provider over a ``transformers`` (or PEFT) model object and its tokenizer."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        *,
        policy: Any = None,
        tokenizer: Any = None,
        prompts: list[str | list[ChatMessage]] = (),
        batch_size: int = 8,
        tools: Any = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config or GenerateConfig())
        if policy is None or tokenizer is None:
            raise PolicyModelError(
                f"{PROVIDER}/{model_name} is a policy that existed only while it was being trained: its evals "
                "are re-scored with `--model none/none`; evaluate a saved checkpoint with --model verigrpo/<run dir>"
            )
        if model_args:
            raise PolicyModelError(f"{PROVIDER}: unknown model arguments {sorted(model_args)}")
        register_model_info(PROVIDER, model_name, policy)  # or Inspect builds this provider again (model_info.py)
        self.policy, self.tokenizer, self.batch_size = policy, tokenizer, max(1, int(batch_size))
        self.eos_ids = self._eos_ids()
        self.tool_turns = None  # python_tool.turns.ToolTurns for a run trained with tools
        if tools is not None:
            max_model_len = getattr(getattr(policy, "config", None), "max_position_embeddings", None)
            self.tool_turns = ToolTurns(tokenizer, tools, max_model_len)
        self._batches = self._plan([self._prompt_key(_messages(p)) for p in prompts])
        self._done: dict[tuple[Any, int], Completion] = {}
        self._lock: anyio.Lock | None = None
        self.generate_calls = 0  # model.generate calls made (batches), for the log and the tests

    # ---- what Inspect asks -------------------------------------------------------------------

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        if tools and self.tool_turns is None:
            raise PolicyModelError(
                f"{PROVIDER} answers plain chat prompts for a policy trained without tools; this task offers tools"
            )
        if config.temperature not in (None, 0.0) or (config.num_choices or 1) > 1:
            raise PolicyModelError(
                f"{PROVIDER} generates greedily; the task asks for sampling (temperature {config.temperature}, "
                f"num_choices {config.num_choices})"
            )
        max_tokens = config.max_tokens or DEFAULT_MAX_TOKENS
        if tools:
            return await self._generate_tool_turn(input, tools, tool_choice, max_tokens)
        done = await self._complete(self.render(input), max_tokens)
        output = ModelOutput.from_content(self.model_name, done.text, stop_reason=done.stop_reason)
        return self._with_usage(output, done)

    async def _complete(self, prompt: Any, max_tokens: int) -> Completion:
        """The completion of ``prompt`` (text, or a tuple of ids), generated with its planned batch."""
        if self._lock is None:  # made inside the event loop that runs the eval
            self._lock = anyio.Lock()
        async with self._lock:  # one batch at a time; a waiting request may find its batch done meanwhile
            if (prompt, max_tokens) not in self._done:
                batch = self._batches.get(prompt, [prompt])
                completions = await anyio.to_thread.run_sync(self._generate_batch, batch, max_tokens)
                self._done.update({(p, max_tokens): c for p, c in zip(batch, completions)})
        return self._done[(prompt, max_tokens)]

    async def _generate_tool_turn(self, input, tools, tool_choice, max_tokens: int) -> ModelOutput:
        """One turn of a tool conversation, as TRL's tool loop generates it (python_tool/turns.py)."""
        try:
            self.tool_turns.check_offer(tools, tool_choice)
            turn = await self.tool_turns.prompt(input)
        except ToolTurnError as exc:
            raise PolicyModelError(f"{PROVIDER}: {exc}") from None
        if self.tool_turns.overlong(turn, max_tokens):  # TRL drops these results; the completion ends
            message = ChatMessageAssistant(content="", model=self.model_name, source="generate")
            return ModelOutput(
                model=self.model_name,
                choices=[ChatCompletionChoice(message=message, stop_reason="max_tokens")],
                usage=ModelUsage(input_tokens=len(turn.ids), output_tokens=0, total_tokens=len(turn.ids)),
            )
        budget = max_tokens if turn.rounds == 0 else turn.budget(max_tokens)
        done = await self._complete(tuple(turn.ids), budget)
        message, stop_reason = self.tool_turns.answer(turn, list(done.ids), done.stop_reason == "stop", self.model_name)
        output = ModelOutput(
            model=self.model_name, choices=[ChatCompletionChoice(message=message, stop_reason=stop_reason)]
        )
        if turn.read_instead:  # the log's tool messages hold Inspect's refusals; the policy read TRL's texts
            output.metadata = {"tool_results_as_read": list(turn.read_instead)}
        return self._with_usage(output, done)

    @staticmethod
    def _with_usage(output: ModelOutput, done: Completion) -> ModelOutput:
        output.usage = ModelUsage(
            input_tokens=done.input_tokens,
            output_tokens=done.output_tokens,
            total_tokens=done.input_tokens + done.output_tokens,
        )
        output.time = done.seconds
        return output

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    # ---- the hf provider's rendering and decoding, in fixed batches --------------------------

    def render(self, messages: list[ChatMessage]) -> str:
        """The prompt text: the chat template with the generation prompt (as Inspect's ``hf`` provider and
        TRL render it)."""
        chat = [{"role": message.role, "content": message.text} for message in messages]
        return self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)

    def _prompt_key(self, messages: list[ChatMessage]) -> Any:
        """A task prompt as this provider generates it: its text, or (a tool-trained policy) its ids as a tuple."""
        if self.tool_turns is not None:
            return tuple(self.tool_turns.first_prompt(messages))
        return self.render(messages)

    def _ids(self, prompts: list) -> list[list[int]]:
        texts = [p for p in prompts if isinstance(p, str)]
        encoded = iter(self.tokenizer(texts)["input_ids"] if texts else [])
        return [list(p) if isinstance(p, tuple) else next(encoded) for p in prompts]

    def _plan(self, prompts: list) -> dict[Any, list]:
        """Each distinct prompt -> the batch it is generated in: sorted by token length (less padding), then
        by first appearance, ``batch_size`` at a time."""
        distinct = list(dict.fromkeys(prompts))
        lengths = [len(ids) for ids in self._ids(distinct)]
        order = sorted(range(len(distinct)), key=lambda i: (lengths[i], i))
        ordered = [distinct[i] for i in order]
        batches = [ordered[i : i + self.batch_size] for i in range(0, len(ordered), self.batch_size)]
        return {prompt: batch for batch in batches for prompt in batch}

    def _eos_ids(self) -> set[int]:
        configured = getattr(getattr(self.policy, "generation_config", None), "eos_token_id", None)
        ids = set(configured if isinstance(configured, (list, tuple)) else [configured])
        ids.add(self.tokenizer.eos_token_id)
        return {i for i in ids if i is not None}

    def _generate_batch(self, prompts: list, max_tokens: int) -> list[Completion]:
        """Greedy completions of ``prompts`` (texts or id tuples) in one ``generate`` call (in a worker thread)."""
        import torch

        start = time.monotonic()
        encoded = self.tokenizer.pad(
            {"input_ids": self._ids(prompts)}, padding=True, padding_side="left", return_tensors="pt"
        )
        device = self.policy.device
        input_ids, attention_mask = encoded["input_ids"].to(device), encoded["attention_mask"].to(device)
        with torch.inference_mode():  # grad mode is per thread: this thread's, not training's
            generated = self.policy.generate(
                input_ids=input_ids, attention_mask=attention_mask, do_sample=False, max_new_tokens=max_tokens
            )
        sequences = getattr(generated, "sequences", generated)  # a dict output (cpu/greedy_batch.py) or the ids
        self.generate_calls += 1
        generated = sequences[:, input_ids.shape[1] :].tolist()
        texts = self.tokenizer.batch_decode(generated, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        seconds = time.monotonic() - start
        completions = []
        for row, text, mask in zip(generated, texts, attention_mask.sum(dim=1).tolist()):
            end = next((i + 1 for i, token in enumerate(row) if token in self.eos_ids), None)
            completions.append(
                Completion(
                    text=text,
                    input_tokens=int(mask),
                    output_tokens=end if end is not None else len(row),
                    stop_reason="stop" if end is not None else "max_tokens",
                    seconds=seconds,
                    ids=tuple(row[:end] if end is not None else row),
                )
            )
        return completions


def policy_api() -> type:
    """The provider class, for ``evals/inspect_plugin``'s registration."""
    return PolicyAPI


def policy_model(
    name: str,
    policy: Any,
    tokenizer: Any,
    prompts: list,
    batch_size: int,
    log_args: dict | None = None,
    tool_config: dict | None = None,
) -> Model:
    """An Inspect ``Model`` answering with ``policy`` (greedy, in the fixed batches above): pass it to
    ``inspect_ai.eval(task, model=...)``. ``prompts``: the task's sample inputs; ``log_args``: what the eval
    log records as the model's arguments (the objects themselves are not loggable); ``tool_config``: a
    tool-trained run's tool keys (``python_tool.trl_environment.TOOL_CONFIG_KEYS``), for tasks that offer the tool."""
    from inspect_ai.util import registry_create

    api = registry_create(
        "modelapi",
        REGISTERED,
        model_name=name,
        policy=policy,
        tokenizer=tokenizer,
        prompts=prompts,
        batch_size=batch_size,
        tools=ToolSetting.from_config(tool_config or {}),
    )
    return Model(api, GenerateConfig(), model_args=dict(log_args or {}))
