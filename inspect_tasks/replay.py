"""A task's solver chain and scorers run on one policy completion, as ``inspect eval`` would run them on it.

Both directions go through Inspect's own machinery (inspect_tasks/seams.py): the task's plan (setup + solver chain,
``resolve_plan``), the ``generate`` a solver gets (``task_generate`` on a ``Model``), the per-sample context
(``TaskState`` from the sample, its store, transcript and sandbox), and the scorers. Only the model differs: a
``ModelAPI`` that, instead of calling a model,

* **records and stops** at the first call (``first_generate``): the messages and tools the task's solvers send
  there (``system_message``, ``prompt_template``, ``user_message``, ``chain_of_thought``, ``multiple_choice``,
  few-shot, and anything a ``Model`` adds, such as a config ``system_message``) are the GRPO prompt; or
* **answers with the policy's completion** (``score_completion``): the rest of the chain runs on it, so a solver's
  post-processing (``multiple_choice`` parsing the answer letter and marking ``state.choices``) happens as in an
  eval, then every scorer scores the final state; each value becomes a float by Inspect's own ``value_to_float``.

A second model call in one sample (a chain that generates twice, ``self_critique``), a call that does not come
through the chain's ``generate`` (an agent calling its model), or a call from a scorer (a model-graded scorer with
no grader bound) raises ``ChainError`` naming the solver or scorer: inspect_tasks/training_task.py refuses such a
task before the model loads; during training the same error is one counted ``None`` reward, never a stopped run.
"""

from __future__ import annotations

import asyncio
import math
import threading
import traceback
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.event import SpanBeginEvent
from inspect_ai.model import GenerateConfig, Model, ModelAPI, ModelName, ModelOutput, modelapi
from inspect_ai.scorer import Score, Scorer, Target, value_to_float
from inspect_ai.solver import TaskState
from inspect_ai.util import SandboxEnvironmentSpec, registry_create

from inspect_tasks.seams import (
    Transcript,
    current_span_id,
    init_sample_model_data,
    init_subtask_store,
    init_task_context,
    init_transcript,
    registry_info,
    resolve_plan,
    sample_messages,
    sandboxenv_context,
    set_sample_state,
    task_generate,
    transcript,
)

REPLAY_MODEL = "verigrpo/policy"  # the model a replayed TaskState names
TO_FLOAT = value_to_float()  # Inspect's conversion (C 1, I 0, P 0.5, N 0; numbers as they are): its metrics use it


class ChainError(RuntimeError):
    """The task's chain or scorer did what a GRPO completion cannot stand for. ``kind``: ``generate_twice`` |
    ``agent`` | ``grader`` | ``no_generate`` | ``prompt_changed`` | ``chain_failed``; ``where``: the solver (or scorer) that did it."""

    def __init__(self, kind: str, where: str, message: str):
        super().__init__(message)
        self.kind, self.where = kind, where


class _FirstGenerate(Exception):  # noqa: N818 - a control-flow signal, not an error: the chain reached generate
    def __init__(self, messages, tools, tool_choice, config, solver):
        super().__init__("first generate")
        self.messages, self.tools, self.tool_choice, self.config, self.solver = (
            messages,
            tools,
            tool_choice,
            config,
            solver,
        )


@dataclass
class _Replay:
    """One sample's replay, read by the model API (a context variable: each sample runs in its own task)."""

    completion: str | None  # None: record the first generate and stop
    expected: list[tuple[str, str]] | None = None  # the prompt recorded for this sample: the replay must send it
    calls: int = 0
    in_generate: bool = False  # inside the chain's generate (a solver asked), not a direct model call
    scoring: str | None = None  # the scorer running once the chain is done: a model call now comes from it


_REPLAY: ContextVar[_Replay | None] = ContextVar("verigrpo_task_replay", default=None)


def message_texts(messages) -> list[tuple[str, str]]:
    """(role, text) of each message: what a replay's prompt is compared by."""
    return [(m.role, m.text) for m in messages]


def running_solver() -> str:
    """The solver (or agent, or scorer) running now, from the transcript's open spans (innermost named first)."""
    spans = {e.id: e for e in transcript().events if isinstance(e, SpanBeginEvent)}
    span_id, names = current_span_id(), []
    while span_id in spans:
        event = spans[span_id]
        if event.type in ("solver", "agent", "scorer"):
            names.append(f"{event.type} {event.name!r}")
        span_id = event.parent_id
    return names[0] if names else "the task's chain"


def _agent_running() -> str | None:
    spans = {e.id: e for e in transcript().events if isinstance(e, SpanBeginEvent)}
    span_id = current_span_id()
    while span_id in spans:
        if spans[span_id].type == "agent":
            return spans[span_id].name
        span_id = spans[span_id].parent_id
    return None


class ReplayAPI(ModelAPI):
    """The model of a replay: records the first generate, or answers with the completion under test."""

    def __init__(self, model_name: str = "policy", **_ignored):
        super().__init__(model_name=model_name)

    async def generate(self, input, tools, tool_choice, config: GenerateConfig) -> ModelOutput:
        replay = _REPLAY.get()
        if replay is None:
            raise RuntimeError("the replay model answers only inside inspect_tasks.replay")
        if replay.scoring is not None:
            raise ChainError(
                "grader",
                replay.scoring,
                f"scorer {replay.scoring!r} calls a model to score: a model-graded scorer, with no grader model bound "
                "(the policy would grade itself)",
            )
        where = running_solver()
        agent = _agent_running()
        if agent is not None or not replay.in_generate:
            raise ChainError(
                "agent",
                agent or where,
                f"{'agent ' + repr(agent) if agent else where} calls a model itself, outside the chain's generate() "
                "(a critique or agent loop)",
            )
        replay.calls += 1
        if replay.completion is None:
            raise _FirstGenerate(list(input), list(tools), tool_choice, config, where)
        if replay.calls > 1:
            raise ChainError(
                "generate_twice",
                where,
                f"{where} calls generate() a second time in one sample: a GRPO completion is one model turn",
            )
        if replay.expected is not None and message_texts(input) != replay.expected:
            raise ChainError(
                "prompt_changed",
                where,
                f"the chain sent another prompt at generate() than the one the policy was trained on ({where}): "
                "a solver that is not deterministic (an unseeded shuffle?)",
            )
        return ModelOutput.from_content(model=self.model_name, content=replay.completion)


@modelapi(name="verigrpo_replay")
def _replay_api() -> type:
    return ReplayAPI


def replay_model() -> Model:
    """A ``Model`` on ``ReplayAPI`` (registered, as Inspect names every model by its API's registry name)."""
    api = registry_create("modelapi", registry_info(_replay_api).name, model_name="policy")
    return Model(api, GenerateConfig())


@dataclass(frozen=True)
class FirstGenerate:
    """What the chain sends the model at its first ``generate``: the GRPO prompt of one sample."""

    messages: list  # inspect_ai ChatMessage objects, as the model would receive them
    tools: list  # ToolInfo of the tools offered there (empty: none)
    config: GenerateConfig  # the generate config there (the task's, merged with the solver's arguments)
    solver: str  # the solver that called generate


@dataclass(frozen=True)
class ScoredCompletion:
    """One completion through the chain and the scorers. ``scores``: by scorer name as a log names it (None where
    the chain or that scorer raised); ``rewards``: by reward name (``scorer`` or ``scorer.key`` for a dict value),
    ``value_to_float`` of the value, None where it could not be scored (``errors`` says why) or the scorer left it
    unscored (NaN, Inspect's ``Score.unscored``)."""

    scores: dict[str, Score | None]
    rewards: dict[str, float | None]
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ScorerSlot:
    """One of the task's scorers: its name in a log, the object, and its dict keys (None: one value)."""

    name: str
    scorer: Scorer
    keys: tuple[str, ...] | None

    @property
    def reward_names(self) -> tuple[str, ...]:
        return (self.name,) if self.keys is None else tuple(f"{self.name}.{key}" for key in self.keys)


def _state(sample: Sample) -> TaskState:
    """The TaskState Inspect starts a sample with (its messages from the input, choices, metadata, store)."""
    return TaskState(
        model=ModelName(REPLAY_MODEL),
        sample_id=sample.id,
        epoch=1,
        input=sample.input,
        target=Target(sample.target),
        choices=sample.choices,
        messages=sample_messages(sample),
        metadata=dict(sample.metadata or {}),
    )


class Replayer:
    """Runs a task's chain and scorers per sample. ``sandbox``: the sandbox each sample gets (the task's, or the one a
    run maps it to; None: none); ``grader``: the model bound to the ``grader`` role (None: a scorer that calls a model
    raises ``ChainError``)."""

    def __init__(
        self,
        task: Task,
        scorers: Sequence[ScorerSlot],
        sandbox: SandboxEnvironmentSpec | None = None,
        grader: Model | None = None,
        timeout_s: float | None = None,
    ):
        self.task, self.scorers, self.sandbox, self.grader = task, tuple(scorers), sandbox, grader
        self.timeout_s = timeout_s
        self.model = replay_model()
        self.plan = resolve_plan(task, None)
        self.config = task.config

    async def _run(self, sample: Sample, completion: str | None, expected=None) -> TaskState:
        """The chain on ``sample`` in the context Inspect gives a sample (``expected``: the prompt the chain must send,
        as ``message_texts``); returns the final state, ready for the scorers."""
        replay = _Replay(completion=completion, expected=expected)
        _REPLAY.set(replay)
        init_task_context(self.model, {"grader": self.grader} if self.grader is not None else None, self.config)
        init_sample_model_data()
        state = _state(sample)
        init_transcript(Transcript())
        init_subtask_store(state.store)
        set_sample_state(state)
        model, config = self.model, self.config

        async def generate(state: TaskState, tool_calls="loop", **kwargs) -> TaskState:
            replay.in_generate = True
            try:
                return await task_generate(
                    model=model,
                    state=state,
                    tool_calls=tool_calls,
                    cache=False,
                    config=config.merge(GenerateConfig(**{k: v for k, v in kwargs.items() if k != "cache"})),
                )
            finally:
                replay.in_generate = False

        state = await self.plan(state, generate)
        if completion is not None and replay.calls == 0:
            raise ChainError("no_generate", "the task's chain", "the task's chain never calls generate()")
        return state

    async def first_generate(self, sample: Sample) -> FirstGenerate:
        """The messages, tools and config the chain sends at its first ``generate`` for ``sample``."""
        try:
            async with self._sample_sandbox(sample):
                await self._run(sample, None)
        except _FirstGenerate as first:
            return FirstGenerate(first.messages, first.tools, first.config, first.solver)
        except ChainError:
            raise
        except Exception as exc:  # the chain failed before any generate: an agent outside a live sample, or a bug
            agents = [e.name for e in transcript().events if isinstance(e, SpanBeginEvent) and e.type == "agent"]
            if agents:
                raise ChainError("agent", agents[0], f"agent {agents[0]!r} runs its own model loop") from None
            raise ChainError(
                "chain_failed",
                f"sample {sample.id}",
                f"the chain raised before its first generate() on sample {sample.id}: {_error_text(exc)}",
            ) from None
        raise ChainError("no_generate", "the task's chain", "the task's chain never calls generate()")

    def _sample_sandbox(self, sample: Sample):
        if self.sandbox is None:
            return _nothing()
        return sandboxenv_context(self.task.name, self.sandbox, None, True, _without_own_sandbox(sample))

    async def score(self, sample: Sample, completion: str, expected=None) -> ScoredCompletion:
        """``completion`` through the rest of the chain and every scorer: see ``ScoredCompletion``. ``expected``: the
        prompt recorded for the sample (``message_texts``), which the replay must send again. Never raises for what
        the chain or a scorer does: that is an error entry (and None rewards)."""
        try:
            if self.timeout_s is None:
                return await self.score_or_raise(sample, completion, expected)
            return await asyncio.wait_for(self.score_or_raise(sample, completion, expected), self.timeout_s)
        except asyncio.TimeoutError:
            return self._failed(f"timed out after {self.timeout_s:g} s")
        except Exception as exc:  # the chain raised: every reward of this completion is None, the error recorded
            return self._failed(_error_text(exc))

    def _failed(self, error: str) -> ScoredCompletion:
        names = [name for slot in self.scorers for name in slot.reward_names]
        return ScoredCompletion(
            scores={slot.name: None for slot in self.scorers},
            rewards=dict.fromkeys(names),
            errors=dict.fromkeys(names, error),
        )

    async def score_or_raise(self, sample: Sample, completion: str, expected=None) -> ScoredCompletion:
        """``score``, except that what the chain raises, and a ``ChainError`` from a scorer, propagate: the
        pre-flight's dry run. A scorer's own error is still an entry of ``errors``."""
        scores: dict[str, Score | None] = {}
        rewards: dict[str, float | None] = {}
        errors: dict[str, str] = {}
        async with self._sample_sandbox(sample):
            state = await self._run(sample, completion, expected)
            target = Target(sample.target)
            replay = _REPLAY.get()
            for slot in self.scorers:
                replay.scoring = slot.name
                try:
                    score = await slot.scorer(state, target)
                except ChainError:  # a scorer that calls a model: the pre-flight refuses it (``score`` counts it)
                    raise
                except Exception as exc:  # one scorer's error: its rewards are None, the others still count
                    scores[slot.name] = None
                    for name in slot.reward_names:
                        rewards[name], errors[name] = None, _error_text(exc)
                    continue
                scores[slot.name] = score
                for name, value, error in _values(slot, score):
                    rewards[name] = value
                    if error:
                        errors[name] = error
            if self.task.cleanup is not None:
                await self.task.cleanup(state)
        return ScoredCompletion(scores=scores, rewards=rewards, errors=errors)


class _nothing:  # noqa: N801 - an async null context, as contextlib.nullcontext is
    async def __aenter__(self):
        return None

    async def __aexit__(self, *exc):
        return False


def _without_own_sandbox(sample: Sample) -> Sample:
    """The sample for the run's sandbox: its own ``sandbox`` spec dropped (the run's, e.g. bwrap in place of docker,
    is the one used), its files and setup kept."""
    if sample.sandbox is None:
        return sample
    return sample.model_copy(update={"sandbox": None})


def _values(slot: ScorerSlot, score: Score) -> Iterable[tuple[str, float | None, str | None]]:
    """(reward name, float or None, error) for each reward of one score."""
    value = score.value
    if slot.keys is None:
        if isinstance(value, dict):
            yield slot.name, None, f"scorer {slot.name!r} returned a dict value where it declared one value"
            return
        yield (slot.name, *_to_float(value))
        return
    if not isinstance(value, dict):
        for key in slot.keys:
            yield f"{slot.name}.{key}", None, f"scorer {slot.name!r} returned {value!r}, not a dict with {key!r}"
        return
    for key in slot.keys:
        if key not in value:
            yield f"{slot.name}.{key}", None, f"scorer {slot.name!r} returned no {key!r}"
        else:
            yield (f"{slot.name}.{key}", *_to_float(value[key]))


def _to_float(value) -> tuple[float | None, str | None]:
    """``value_to_float``; NaN (an unscored sample) is None, with no error."""
    number = TO_FLOAT(value)
    if isinstance(number, float) and math.isnan(number):
        return None, None
    return float(number), None


def _error_text(exc: BaseException) -> str:
    """``Type: message`` of the error (its last frame's file:line when it has one), for logs and counts."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


class ReplayLoop:
    """One event loop on its own thread for every replay of a process: Inspect's concurrency limits and sandbox
    providers keep loop-bound state, so a second loop per call would not do; TRL calls reward functions
    synchronously, from the training loop."""

    _lock = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def run(cls, coro):
        with cls._lock:
            if cls._loop is None:
                cls._loop = asyncio.new_event_loop()
                thread = threading.Thread(target=cls._loop.run_forever, name="inspect-task-replay", daemon=True)
                thread.start()
        return asyncio.run_coroutine_threadsafe(coro, cls._loop).result()
