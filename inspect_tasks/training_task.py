"""An Inspect task made ready to train on, or refused before any model loads: ``prepare_task``.

    task = prepare_task("my_task.py@marbles", {"level": 2})
    task.prompt_messages(sample_id)          # the GRPO prompt: the chain's messages at its first generate()
    task.score(sample_id, completion)        # ScoredCompletion: the task's scorers after the rest of the chain
    task.score_many([(sample_id, completion), ...])

``score`` / ``score_many`` are the one function that scores a completion for a sample the way training rewards it
(the reward functions, the exploit probe and the benchmarks call them): the chain replayed on the completion, then
every scorer, each value through ``value_to_float`` (inspect_tasks/replay.py). They never raise for what a chain
or scorer does: an error is a None reward with its message in ``ScoredCompletion.errors``.

What is refused here, each as one paragraph naming the solver or scorer (``TaskError``, exit 2 from
``train/grpo.py``): a task with no scorer; a chain that calls ``generate`` twice in a sample, or an agent that calls
its model itself; a chain whose first ``generate`` offers tools; prompts that are not text (images) or hold tool
turns; a scorer that calls a model when no grader is named (``grader_model``); a sandbox other than the project's
``bwrap`` (docker, local, k8s) unless mapped to it (``sandbox="bwrap"``), or ``bwrap`` where this machine cannot
run it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, Model, get_model
from inspect_ai.util import SandboxEnvironmentSpec

from inspect_tasks.loading import TaskError, load_task, resolve_spec, samples_with_ids, task_file
from inspect_tasks.replay import (
    ChainError,
    FirstGenerate,
    Replayer,
    ReplayLoop,
    ScoredCompletion,
    ScorerSlot,
    message_texts,
)
from inspect_tasks.seams import registry_unqualified_name, scorer_metrics, unique_scorer_name
from rewards.sandbox import sandbox_problem

BWRAP = "bwrap"  # the project's sandbox provider (python_tool/inspect_sandbox.py), registered as verigrpo/bwrap
DRY_RUN_SAMPLES = 3  # samples the chain is replayed on before training, to find a second generate or a grader
CONCURRENT_REPLAYS = 32  # samples replayed at once (a sandboxed sample holds a sandbox meanwhile)
DEFAULT_TIMEOUT_S = 300.0  # one completion's chain + scorers; then its rewards are None (counted)


@dataclass
class TrainingTask:
    """A loaded task with its samples (by id, as text), each sample's first-generate prompt, its scorers and the
    replayer that scores a completion; built by ``prepare_task``."""

    spec: str
    args: dict
    task: Task
    samples: dict[str, Sample]  # id (as text) -> sample, in dataset order
    prompts: dict[str, FirstGenerate]  # id -> what the chain sends at its first generate
    scorers: tuple[ScorerSlot, ...]
    replayer: Replayer
    sandbox: str | None  # the sandbox type each sample gets (None: none)
    mapped_from: str | None  # the task's own sandbox type when the run maps it to bwrap
    grader_model: str | None

    @property
    def name(self) -> str:
        return self.task.name

    @property
    def file(self) -> str | None:
        """The task file (absolute) when the spec names one."""
        return task_file(self.spec)

    @property
    def reward_names(self) -> tuple[str, ...]:
        """One reward per scorer, or per key of a scorer whose value is a dict (``scorer.key``), in scorer order."""
        return tuple(name for slot in self.scorers for name in slot.reward_names)

    @property
    def solvers(self) -> list[str]:
        """The plan's steps by name (setup first), as a log's plan lists them."""
        return [registry_unqualified_name(step) for step in self.replayer.plan.steps]

    def sample(self, sample_id) -> Sample:
        return self.samples[str(sample_id)]

    def prompt_messages(self, sample_id) -> list[dict]:
        """The GRPO prompt of a sample: ``[{"role", "content"}]`` (text), as TRL takes a conversational prompt."""
        return [{"role": m.role, "content": m.text} for m in self.prompts[str(sample_id)].messages]

    def target(self, sample_id) -> str | list[str]:
        return self.samples[str(sample_id)].target

    async def score_async(self, sample_id, completion: str) -> ScoredCompletion:
        """``score`` on the caller's event loop (Inspect's contexts are set inside the coroutine)."""
        key = str(sample_id)
        expected = message_texts(self.prompts[key].messages)
        return await self.replayer.score(self.samples[key], completion, expected)

    def score(self, sample_id, completion: str) -> ScoredCompletion:
        """One completion for one sample, scored as training rewards it."""
        return ReplayLoop.run(self.score_async(sample_id, completion))

    def score_many(self, pairs: Sequence[tuple[object, str]]) -> list[ScoredCompletion]:
        """``score`` of each (sample id, completion), concurrently, in order."""
        return ReplayLoop.run(_gather([self.score_async(sample_id, text) for sample_id, text in pairs]))


async def _gather(coroutines: list, limit: int = CONCURRENT_REPLAYS) -> list:
    semaphore = asyncio.Semaphore(limit)

    async def bounded(coroutine):
        async with semaphore:
            return await coroutine

    return await asyncio.gather(*(bounded(c) for c in coroutines))


def scorer_slots(task: Task) -> tuple[ScorerSlot, ...]:
    """The task's scorers, named as its log names them, each with the keys of a dict value when its metrics are
    declared per key (``@scorer(metrics={"correct": [...], "format": [...]})``)."""
    if not task.scorer:
        raise TaskError(
            f"task {task.name!r} has no scorer: there is nothing to reward. Give the Task a scorer (the reward and "
            "the eval metric are that one function)"
        )
    slots, used = [], []
    for scorer in task.scorer:
        name = unique_scorer_name(scorer, used)
        used.append(name)
        metrics = scorer_metrics(scorer)
        keys = None
        if isinstance(metrics, dict):
            keys = tuple(metrics)
        elif isinstance(metrics, list):
            keyed = [key for m in metrics if isinstance(m, dict) for key in m]
            keys = tuple(keyed) or None
        slots.append(ScorerSlot(name=name, scorer=scorer, keys=keys))
    return tuple(slots)


def _sandbox_types(task: Task, samples: list[Sample]) -> set[str]:
    specs = [task.sandbox, *(s.sandbox for s in samples)]
    return {spec.type.split("/")[-1] for spec in specs if spec is not None}


def run_sandbox(
    task: Task, samples: list[Sample], mapped: str | None
) -> tuple[SandboxEnvironmentSpec | None, str | None]:
    """(the sandbox each sample gets, the task's own type when mapped to bwrap). The task's or its samples' sandbox
    must be the project's ``bwrap`` (its files and setup then run in it per sample), or be mapped to it."""
    types = _sandbox_types(task, samples)
    if mapped is not None and mapped.split("/")[-1] != BWRAP:
        raise TaskError(f"inspect_sandbox: {mapped!r}: a task's sandbox can be mapped only to {BWRAP!r}")
    if not types:
        return None, None
    own = ", ".join(sorted(types))
    if types != {BWRAP} and mapped is None:
        raise TaskError(
            f"task {task.name!r} runs its samples in a {own} sandbox, which training here does not start (no Docker; "
            f"model text never runs on the host): map it to the project's bubblewrap sandbox with "
            f"`inspect_sandbox: {BWRAP}` (each sample's files and setup script run there; a compose file's services "
            "and images do not), or train another task"
        )
    problem = sandbox_problem()
    if problem:
        raise TaskError(f"task {task.name!r} needs the {BWRAP} sandbox, which is unavailable here: {problem}")
    return SandboxEnvironmentSpec(type=BWRAP), (own if types != {BWRAP} else None)


def _prompt_problem(first: FirstGenerate) -> str | None:
    """Why a first-generate prompt cannot be a GRPO prompt (None: it can)."""
    if first.tools:
        names = ", ".join(getattr(t, "name", str(t)) for t in first.tools)
        return (
            f"{first.solver} offers tools ({names}) at its first generate(): a tool-calling task is an agent loop, "
            "which training through a task does not run yet (the project's own python tool trains with `tools: "
            "[python]` on its own domains: docs/tool-use.md)"
        )
    for message in first.messages:
        if isinstance(message, ChatMessageTool) or (isinstance(message, ChatMessageAssistant) and message.tool_calls):
            return f"the prompt {first.solver} sends holds tool calls or results, which a text prompt cannot carry"
        if not isinstance(message.content, str) and any(c.type != "text" for c in message.content):
            kinds = sorted({c.type for c in message.content if c.type != "text"})
            return f"the prompt {first.solver} sends holds {', '.join(kinds)} content: only text prompts train here"
    return None


def _refusal(task: Task, error: ChainError, grader: str | None) -> str:
    if error.kind == "grader":
        return (
            f"task {task.name!r}: {error}. A model-graded scorer needs a grader model: name one with "
            "`inspect_grader_model: PROVIDER/MODEL` (bound to the 'grader' role). Each completion then costs one "
            "grader call (num_generations per prompt, every step), and the reward is only as deterministic and as "
            "hard to game as that grader"
            + ("" if grader is None else f" (the grader {grader!r} was named: this scorer does not use its role)")
        )
    if error.kind == "chain_failed":
        return f"task {task.name!r} cannot train: {error}"
    return (
        f"task {task.name!r} cannot train: {error}. A GRPO prompt is what the chain sends at its first generate() and "
        "the reward is the scorer after the rest of the chain on that one completion; a chain that generates again "
        "(self_critique, multi-turn) or an agent needs the turns in the rollout, which training does not run. Train "
        "the task with a single-generate chain (e.g. task_with(task, solver=[...the prompt solvers..., generate()]))"
    )


def _load_grader(name):
    """The grader model: ``PROVIDER/MODEL`` loaded by Inspect, or a ``Model`` as it is (None: none)."""
    if name is None or isinstance(name, Model):
        return name
    try:
        return get_model(name, memoize=False)
    except Exception as exc:  # a provider that cannot start (no key, not installed): the user's to fix, named
        raise TaskError(f"inspect_grader_model: {name!r} does not load: {type(exc).__name__}: {exc}") from None


def prepare_task(
    spec: str,
    args: dict | None = None,
    *,
    sandbox: str | None = None,
    grader_model: str | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
) -> TrainingTask:
    """Load ``spec`` (inspect_tasks/loading.py), record every sample's first-generate prompt, replay the chain and
    the scorers on a few samples, and return the task ready to score completions; TaskError for what cannot train
    (the module's docstring lists it). ``sandbox``: the provider the task's docker/local sandbox is mapped to (only
    ``bwrap``); ``grader_model``: the model a model-graded scorer's ``grader`` role is bound to."""
    args = dict(args or {})
    spec = resolve_spec(spec)
    task = load_task(spec, args)
    samples = samples_with_ids(task)
    slots = scorer_slots(task)
    sandbox_spec, mapped_from = run_sandbox(task, samples, sandbox)
    grader = _load_grader(grader_model)
    replayer = Replayer(task, slots, sandbox=sandbox_spec, grader=grader, timeout_s=timeout_s)
    try:
        firsts = ReplayLoop.run(_gather([replayer.first_generate(s) for s in samples]))
    except ChainError as exc:
        raise TaskError(_refusal(task, exc, grader_model)) from None
    prompts = {str(s.id): first for s, first in zip(samples, firsts)}
    for sample_id, first in prompts.items():
        problem = _prompt_problem(first)
        if problem:
            raise TaskError(f"task {task.name!r} (sample {sample_id}): {problem}")
    slots = _dry_run(task, replayer, samples[:DRY_RUN_SAMPLES], prompts, grader_model)
    replayer.scorers = slots
    return TrainingTask(
        spec=spec,
        args=args,
        task=task,
        samples={str(s.id): s for s in samples},
        prompts=prompts,
        scorers=slots,
        replayer=replayer,
        sandbox=sandbox_spec.type if sandbox_spec else None,
        mapped_from=mapped_from,
        grader_model=str(grader_model) if grader_model is not None else None,
    )


def _dry_run(task, replayer: Replayer, samples: list[Sample], prompts, grader_model) -> tuple[ScorerSlot, ...]:
    """The chain and scorers on a stand-in completion (``ANSWER: <target>``) for a few samples: a second generate,
    an agent or a scorer calling a model is refused here; a scorer declared with one value that returns a dict gets
    one reward per key."""
    slots = list(replayer.scorers)
    for sample in samples:
        target = sample.target if isinstance(sample.target, str) else ", ".join(sample.target)
        expected = message_texts(prompts[str(sample.id)].messages)
        try:
            scored = ReplayLoop.run(replayer.score_or_raise(sample, f"ANSWER: {target}", expected))
        except ChainError as exc:
            raise TaskError(_refusal(task, exc, grader_model)) from None
        except Exception:  # the chain's own failure on a stand-in answer: training counts such errors per completion
            continue
        for index, slot in enumerate(slots):
            score = scored.scores.get(slot.name)
            if slot.keys is None and score is not None and isinstance(score.value, dict):
                slots[index] = ScorerSlot(slot.name, slot.scorer, tuple(score.value))
    return tuple(slots)
