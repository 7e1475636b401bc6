"""Every training rollout as an Inspect log: browse it, re-score it, catch reward hacking.

While training, each completion the policy was paid for is written to
``<output_dir>/rollouts/rollouts-step<first>-<last>.eval``. One GRPO group maps to one Inspect sample:
sample id ``<prompt id>@<step>``, epoch = position in the group, so a re-scorer's results get the
epoch reducers ``mean`` and ``pass_at_G``. Each sample is a conversation as Inspect View shows an eval's:

* ``input``: the problem (the prompt's last user message), so the sample list tells rows apart;
  ``messages``: the full prompt the policy saw plus its completion; one ``ModelEvent`` (the
  generation, with the sampling settings and token usage) and one ``ScoreEvent`` per reward in
  ``events`` for the Transcript; real batch times (``started_at``, ``total_time``).
* with tools (``tools: [python]``): the completion as Inspect writes an agent's turns, each assistant
  turn with its ``tool_calls`` followed by one ``ChatMessageTool`` per result; in ``events`` a
  ``ModelEvent`` per assistant turn and a ``ToolEvent`` per call (its code and output). Every turn
  carries the batch's span: TRL does not time turns.
* one score per reward function, ``train_<name>``, with the training value and why it was paid:
  the graded ``answer``, the ``explanation`` and the ``reason`` (score metadata) of the very verdict
  that set the reward (reported through TRL's ``log_extra``, ``rewards.reward_log``).
* metadata: step, group, advantage, length, truncation. The log's task args name the run, the
  policy and the step range; its results give each training score's group ``mean`` and ``pass@G``
  as two columns of one row (``evals/log_stats/group_metrics.py``).

The logged model is ``none/none`` so re-scoring never loads anything:

    inspect view --log-dir runs/x/rollouts
    inspect score runs/x/rollouts/rollouts-step000001-000010.eval --scorer verigrpo/math_verifier \\
        --action append --output-file rescored.eval --model none/none
    python scripts/audit_rollouts.py runs/x

Files are written every ``rollout_log_steps`` steps, at every checkpoint save and at the end, so a
crash loses at most the current interval; a resumed run writes new files and never overwrites.
Each file is written under a hidden temporary name and renamed into place (``write_atomically``),
so a crash mid-write leaves no torn ``.eval`` behind, only a ``.*.partial`` that nothing reads.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from uuid import uuid4

from inspect_ai.event import Event, ModelEvent, ScoreEvent, SpanBeginEvent, SpanEndEvent, ToolEvent
from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalSample,
    EvalSpec,
    EvalStats,
    condense_sample,
    recompute_metrics,
    write_eval_log,
)
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.scorer import Score

from records.chat import chat_messages
from records.inspect_seams import EvalMetricDefinition, EvalScorer  # Inspect's private names, in one module
from records.rollout_format import (
    ANSWER_FORMAT_KEY,
    GROUP_MEAN_METRIC,
    PASS_AT_G_METRIC,
    ROLLOUT_MODEL,
    STEP_KEY,
    train_score_name,
)
from rewards.common import completion_text, question_text
from rewards.reward_log import WhyPaid

logger = logging.getLogger(__name__)

ROLLOUT_TASK = "grpo_rollouts"


@dataclass
class Rollout:
    prompt_id: str
    step: int  # the optimizer step this rollout is trained in (1-based, as in TRL's logs)
    group: int  # index of the prompt group within the generation batch
    position: int  # 0-based position within the group
    prompt: list[dict] | str
    completion: str
    target: str
    rewards: dict[str, float | None]
    advantage: float
    completion_length: int | None
    truncated: bool | None
    extra: dict = field(default_factory=dict)
    # per reward: the answer, reason and explanation of the verdict that set it (None: the function gave none)
    whys: dict[str, WhyPaid | None] = field(default_factory=dict)
    prompt_tokens: int | None = None
    # the generation batch's span (generation and rewards): its completions are generated together
    started_at: datetime | None = None
    completed_at: datetime | None = None
    generation: dict = field(default_factory=dict)  # sampling settings (GenerateConfig fields)
    # with tool calls: the completion's turns as TRL holds them (assistant with tool_calls, tool results, ...)
    turns: list[dict] | None = None


def problem_text(prompt: list[dict] | str) -> str:
    """What a person scans the sample list for: the prompt's last user message (the question), not the
    instruction and worked examples every prompt shares. The full prompt stays in the sample's messages.
    It is ``rewards.common.question_text``, the question the training reward checked the answer against, so a
    re-scorer reading the sample's input sees the same question.

    >>> problem_text([{"role": "system", "content": "Solve it."}, {"role": "user", "content": "What is 2+3?"}])
    'What is 2+3?'
    """
    return question_text(prompt) or ""


def _prompt_messages(prompt: list[dict] | str) -> list[ChatMessage]:
    return [ChatMessageUser(content=prompt)] if isinstance(prompt, str) else chat_messages(prompt)


def _score(value: float | None, why: WhyPaid | None) -> Score:
    """The training reward with the reason it was paid; None (a reward that did not apply, e.g. a broken
    reference) is recorded as unscored, with its reason when the reward function gave one."""
    if why is None:
        return Score(value=float("nan") if value is None else float(value))
    details = {"answer": why.answer, "explanation": why.explanation, "metadata": {"reason": why.reason}}
    if value is None:
        return Score.unscored(reason=why.reason, **details)
    return Score(value=float(value), **details)


def policy_name(metadata: dict) -> str:
    """The policy as the log names it: a local model directory by its name, a Hub model by its id."""
    model = metadata.get("policy_model")
    if not model:
        return "policy"
    return os.path.basename(os.path.normpath(model)) if os.path.isabs(model) else str(model)


def _seconds(r: Rollout) -> float | None:
    if r.started_at is None or r.completed_at is None:
        return None
    return round((r.completed_at - r.started_at).total_seconds(), 3)


def has_tool_turns(completion) -> bool:
    """Whether a TRL completion holds tool results (a list of messages with a ``tool`` one)."""
    return isinstance(completion, list) and any(isinstance(m, dict) and m.get("role") == "tool" for m in completion)


def _turn_messages(r: Rollout, policy: str) -> list[ChatMessage]:
    """The completion as messages: one reply, or the turns of a rollout that called tools."""
    if not r.turns:
        return [ChatMessageAssistant(content=r.completion, model=policy, source="generate")]
    turns = chat_messages(r.turns)
    for message in turns:
        if isinstance(message, ChatMessageAssistant):
            message.model, message.source = policy, "generate"
    return turns


def _turn_events(r: Rollout, prompt: list[ChatMessage], turns: list[ChatMessage], policy: str) -> list[Event]:
    """A ModelEvent per assistant turn and a ToolEvent per tool call, as an Inspect agent's transcript has them."""
    timing = {"timestamp": r.started_at, "completed": r.completed_at, "working_start": 0.0}
    events: list[Event] = []
    results = {m.tool_call_id: m for m in turns if isinstance(m, ChatMessageTool)}
    for index, message in enumerate(turns):
        if not isinstance(message, ChatMessageAssistant):
            continue
        output = ModelOutput(model=policy, choices=[ChatCompletionChoice(message=message, stop_reason="stop")])
        events.append(
            ModelEvent(
                model=policy,
                input=[*prompt, *turns[:index]],
                tools=[],
                tool_choice="auto",
                config=GenerateConfig(**r.generation),
                output=output,
                **timing,
            )
        )
        for call in message.tool_calls or []:
            result = results.get(call.id)
            events.append(
                ToolEvent(
                    id=call.id,
                    function=call.function,
                    arguments=call.arguments,
                    result=result.text if result is not None else "",
                    **timing,
                )
            )
    return events


def _sample(r: Rollout, names: list[str], policy: str, facts: dict | None = None) -> EvalSample:
    prompt = _prompt_messages(r.prompt)
    turns = _turn_messages(r, policy)
    assistants = [m for m in turns if isinstance(m, ChatMessageAssistant)]
    reply = assistants[-1] if assistants else ChatMessageAssistant(content="", model=policy, source="generate")
    usage = None
    if r.completion_length is not None:
        prompt_tokens = r.prompt_tokens or 0
        usage = ModelUsage(
            input_tokens=prompt_tokens,
            output_tokens=r.completion_length,
            total_tokens=prompt_tokens + r.completion_length,
        )
    output = ModelOutput(
        model=policy,
        choices=[ChatCompletionChoice(message=reply, stop_reason="max_tokens" if r.truncated else "stop")],
        usage=usage,
    )
    scores = {train_score_name(name): _score(r.rewards.get(name), r.whys.get(name)) for name in names}
    seconds = _seconds(r)
    events: list[Event] = []
    if r.started_at is not None and r.completed_at is not None and r.turns:
        events.extend(_turn_events(r, prompt, turns, policy))
        events.extend(_score_events(scores, r.target, r.completed_at, seconds or 0.0))
    elif r.started_at is not None and r.completed_at is not None:
        events.append(
            ModelEvent(
                model=policy,
                input=prompt,
                tools=[],
                tool_choice="none",
                config=GenerateConfig(**r.generation),
                output=output,
                timestamp=r.started_at,
                completed=r.completed_at,
                working_start=0.0,
                working_time=seconds,
            )
        )
        events.extend(_score_events(scores, r.target, r.completed_at, seconds or 0.0))
    sample = EvalSample(
        id=f"{r.prompt_id}@{r.step}",
        epoch=r.position + 1,
        input=problem_text(r.prompt),
        target=r.target,
        messages=[*prompt, *turns],
        output=output,
        scores=scores,
        metadata={
            STEP_KEY: r.step,
            "group": r.group,
            "advantage": r.advantage,
            "completion_length": r.completion_length,
            "truncated": r.truncated,
            **({"tool_calls": sum(len(m.tool_calls or []) for m in assistants)} if r.turns else {}),
            **(facts or {}),
            **r.extra,
        },
        events=events,
        model_usage={policy: usage} if usage is not None else {},
        started_at=r.started_at.isoformat() if r.started_at else None,
        completed_at=r.completed_at.isoformat() if r.completed_at else None,
        total_time=seconds,
        working_time=seconds,
    )
    # as Inspect stores every sample it logs: the events' long texts (the prompt) go to the sample's attachments
    return condense_sample(sample)


def _score_events(scores: dict[str, Score], target: str, at: datetime, working_start: float) -> list[Event]:
    """Each score in a span named after its scorer, inside a ``scorers`` span, as an eval's transcript has them."""
    timing = {"timestamp": at, "working_start": working_start}
    outer = uuid4().hex
    events: list[Event] = [SpanBeginEvent(id=outer, type="scorers", name="scorers", **timing)]
    for name, score in scores.items():
        inner = uuid4().hex
        events += [
            SpanBeginEvent(id=inner, parent_id=outer, type="scorer", name=name, span_id=outer, **timing),
            ScoreEvent(score=score, target=target, scorer=name, span_id=inner, **timing),
            SpanEndEvent(id=inner, span_id=outer, **timing),
        ]
    return [*events, SpanEndEvent(id=outer, **timing)]


def _stats(rollouts: list[Rollout], samples: list[EvalSample]) -> EvalStats:
    """The interval's first generation start and last batch end, and the tokens it generated."""
    starts = [r.started_at for r in rollouts if r.started_at is not None]
    ends = [r.completed_at for r in rollouts if r.completed_at is not None]
    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for model, used in sample.model_usage.items():
            usage[model] = usage[model] + used if model in usage else used
    if not starts or not ends:
        return EvalStats(model_usage=usage)
    return EvalStats(started_at=min(starts).isoformat(), completed_at=max(ends).isoformat(), model_usage=usage)


def build_log(rollouts: list[Rollout], num_generations: int, metadata: dict) -> EvalLog:
    """An EvalLog of rollouts: one sample per completion, scores declared so metrics can be computed."""
    names = sorted({name for r in rollouts for name in r.rewards})
    policy = policy_name(metadata)
    # what a re-scorer reads from each sample: the answer format the prompt taught (as the eval tasks record it)
    facts = {ANSWER_FORMAT_KEY: metadata[ANSWER_FORMAT_KEY]} if metadata.get(ANSWER_FORMAT_KEY) else {}
    samples = [_sample(r, names, policy, facts) for r in rollouts]
    steps = [r.step for r in rollouts]
    groups = list(dict.fromkeys(sample.id for sample in samples))
    first, last = min(steps), max(steps)
    # shown in Inspect View's log list (Task Args), where the file name is hidden
    task_args = {"steps": f"{first}-{last}" if first != last else str(first), "policy": policy}
    if metadata.get("output_dir"):
        task_args = {"run": os.path.basename(os.path.normpath(metadata["output_dir"])), **task_args}
    metrics = [
        EvalMetricDefinition(name=GROUP_MEAN_METRIC),
        EvalMetricDefinition(name=PASS_AT_G_METRIC, options={"k": num_generations}),
    ]
    spec = EvalSpec(
        created=datetime.now(timezone.utc).isoformat(),
        task=ROLLOUT_TASK,
        task_args=task_args,
        task_args_passed=task_args,
        dataset=EvalDataset(name="grpo_rollouts", samples=len(groups), sample_ids=groups),
        model=ROLLOUT_MODEL,
        config=EvalConfig(epochs=num_generations, epochs_reducer=["mean", f"pass_at_{num_generations}"]),
        scorers=[EvalScorer(name=train_score_name(name), metrics=metrics) for name in names],
        metadata={**metadata, "first_step": first, "last_step": last},
    )
    log = EvalLog(status="success", eval=spec, samples=samples, stats=_stats(rollouts, samples))
    recompute_metrics(log)
    return log


def write_atomically(log: EvalLog, path: Path) -> Path:
    """Write ``log`` to ``path`` so that ``path`` is either absent or complete, never torn.

    A SIGKILL during Inspect's zip write used to leave a truncated ``.eval`` ("EOCD not found")
    that broke every later reader. Here the bytes go to ``.<name>.partial`` (not ``*.eval``, so
    ``inspect view`` and the audit never see it), are fsynced, then renamed: a rename within a
    directory is atomic on POSIX. The directory is fsynced too, so the rename survives a power loss.
    """
    partial = path.with_name(f".{path.name}.partial")
    write_eval_log(log, str(partial), format="eval")
    with open(partial, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return path


class RolloutRecorder:
    """Buffers rollouts and writes them as one .eval file per interval."""

    def __init__(self, directory: str | Path, every_steps: int, num_generations: int, metadata: dict) -> None:
        if every_steps < 1:
            raise ValueError(f"rollout_log_steps must be >= 1, got {every_steps}")
        self.directory = Path(directory)
        self.every_steps = every_steps
        self.num_generations = num_generations
        self.metadata = metadata
        self.buffer: list[Rollout] = []
        self.written: list[Path] = []

    def add(self, rollouts: list[Rollout]) -> None:
        self.buffer.extend(rollouts)
        steps = {r.step for r in self.buffer}
        if len(steps) > self.every_steps:  # a new step began after a full interval: write the full interval
            last_complete = max(steps) - 1
            self.flush(up_to_step=last_complete)

    def flush(self, up_to_step: int | None = None) -> Path | None:
        chunk = [r for r in self.buffer if up_to_step is None or r.step <= up_to_step]
        if not chunk:
            return None
        first, last = min(r.step for r in chunk), max(r.step for r in chunk)
        path = self.directory / f"rollouts-step{first:06d}-{last:06d}.eval"
        suffix = 2
        while path.exists():  # a resumed run re-doing steps: keep both
            path = self.directory / f"rollouts-step{first:06d}-{last:06d}-{suffix}.eval"
            suffix += 1
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(build_log(chunk, self.num_generations, self.metadata), path)
        # dropped only once written: a failed write keeps them for the next flush
        self.buffer = [r for r in self.buffer if not (up_to_step is None or r.step <= up_to_step)]
        self.written.append(path)
        logger.info("wrote %d rollouts (steps %d-%d) to %s", len(chunk), first, last, path)
        return path


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)  # TRL stores a None reward as NaN


def rollouts_from_batch(
    *,
    ids: list[str],
    answers: list[str],
    prompts: list,
    completions: list,
    rewards: dict[str, list[float | None]],
    advantages: list[float],
    lengths: list[int] | None,
    max_completion_length: int,
    terminated: list[bool] | None,
    num_generations: int,
    step: int,
    extra: dict | None = None,
    whys: dict[str, list[WhyPaid | None]] | None = None,
    prompt_lengths: list[int] | None = None,
    started_at: datetime | None = None,
    completed_at: datetime | None = None,
    generation: dict | None = None,
) -> list[Rollout]:
    """Rollouts of one generation batch (already gathered across processes), in group order.

    ``extra``: sample metadata every rollout of the batch shares (the adapter version that generated it).
    ``whys``: per reward name, why each completion got its reward (as the reward function logged it).
    ``started_at``/``completed_at``: the batch's generation and scoring span; ``generation``: sampling settings.
    """
    rollouts = []
    for index, (prompt_id, answer, prompt, completion) in enumerate(zip(ids, answers, prompts, completions)):
        length = lengths[index] if lengths is not None else None
        rollouts.append(
            Rollout(
                prompt_id=str(prompt_id),
                step=step,
                group=index // num_generations,
                position=index % num_generations,
                prompt=prompt,
                completion=completion_text(completion),
                target=str(answer),
                rewards={name: _finite_or_none(values[index]) for name, values in rewards.items()},
                advantage=float(advantages[index]),
                completion_length=length,
                truncated=None if terminated is None else not terminated[index],
                extra={"max_completion_length": max_completion_length, **(extra or {})},
                whys={name: values[index] for name, values in (whys or {}).items()},
                prompt_tokens=prompt_lengths[index] if prompt_lengths is not None else None,
                started_at=started_at,
                completed_at=completed_at,
                generation={"max_tokens": max_completion_length, **(generation or {})},
                turns=list(completion) if has_tool_turns(completion) else None,
            )
        )
    return rollouts
