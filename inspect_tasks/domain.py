"""A prepared Inspect task as a row of the domain table (problems/domains.py), made at run time: one path, not two.

A run on ``inspect_task`` does not take a path of its own. The task becomes a ``Domain`` row like math and code,
registered for the run's process, so every stage after the plan reads it as it reads theirs:

* ``load`` gives the task's samples (``TaskSample``) of a split made **by sample id**: ``split="train"`` the training
  ids, ``"test"`` the held-out ids (``held_out`` of them, chosen by a seeded hash of each id, so the same ids on any
  machine and in any process); run.json records both lists;
* ``training_row`` gives the GRPO prompt the task's chain sends at its first ``generate()`` (inspect_tasks/replay.py),
  the target as ``answer`` and the id;
* ``rewards`` holds one TRL reward function per reward of the task (``scorer``, or ``scorer.key`` for a dict value):
  each completion replayed through the rest of the chain and scored by the task's scorers, ``value_to_float``; the
  first function called for a batch scores it whole, the others read the same scores (one replay per completion);
  each reports the score's answer, reason and explanation through TRL's ``log_extra`` for the rollout log, and the
  batch's scorer errors through ``log_metric`` (``inspect_errors/<reward>``);
* ``eval_task`` is the task's spec and ``eval_task_factory`` builds the held-out eval's task: the same task (its own
  solver chain and scorers) on the held-out ids, greedy, which ``train/artifacts/held_out.py`` runs through Inspect.

The built-in domains stay modules of their own (problems/math_domain.py); evals/math_task.py is the task a math
row evaluates with, and the bridge on that task gives the native rows' prompts and rewards
(tests/inspect_tasks/test_parity.py).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from dataclasses import dataclass

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score

from inspect_tasks.loading import parse_task_args
from inspect_tasks.replay import ScoredCompletion
from inspect_tasks.seams import registry_info, registry_log_name, registry_params, registry_unqualified_name
from inspect_tasks.seams import scorer_metrics as declared_metrics
from inspect_tasks.training_task import TrainingTask, prepare_task
from problems.domains import Domain, RewardFunc
from problems.math_data import DatasetError
from rewards.common import completion_text
from rewards.reward_log import WhyPaid, log_why

DOMAIN_NAME = "inspect_task"
ERROR_METRIC = "inspect_errors/{reward}"  # the batch's completions whose reward a chain or scorer error left None
CACHE_COMPLETIONS = 8192  # scored (id, completion) pairs kept: a few generation batches


@dataclass(frozen=True)
class TaskSample:
    """One sample of the task, as the domain's problem type (``id``: the sample's id as text)."""

    id: str
    sample: Sample

    @property
    def answer(self) -> str:
        return target_text(self.sample.target)


def target_text(target: str | list[str]) -> str:
    """A sample's target as one text column (a list as JSON): what a rollout log records as its target."""
    return target if isinstance(target, str) else json.dumps(list(target))


def split_ids(ids: list[str], held_out: float, seed: int) -> tuple[list[str], list[str]]:
    """(training ids, held-out ids), each in dataset order. ``held_out``: a share in (0, 1) of the ids or a count
    (>= 1); the held-out ids are those first by ``sha256(seed:id)``, so the split depends on the ids and the seed
    alone, never on their order or on the machine.

    >>> split_ids(["a", "b", "c", "d"], 0.5, 0)
    (['b', 'c'], ['a', 'd'])
    >>> split_ids(["a", "b", "c", "d"], 0, 0)
    (['a', 'b', 'c', 'd'], [])
    """
    if held_out < 0 or (held_out >= 1 and held_out != int(held_out)):
        raise DatasetError(f"inspect_held_out must be a share in (0, 1) or a whole count, got {held_out}")
    count = int(held_out) if held_out >= 1 else round(held_out * len(ids))
    if count >= len(ids) and count:
        raise DatasetError(
            f"inspect_held_out {held_out:g} holds out {count} of the task's {len(ids)} samples: none would train"
        )
    ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    chosen = set(ranked[:count])
    return [i for i in ids if i not in chosen], [i for i in ids if i in chosen]


class BatchScores:
    """Scores of (sample id, completion) pairs, computed once per pair: the first reward function called for a batch
    scores every completion it has not seen (concurrently), the others read them."""

    def __init__(self, task: TrainingTask, capacity: int = CACHE_COMPLETIONS):
        self.task, self.capacity = task, capacity
        self.scored: OrderedDict[tuple[str, str], ScoredCompletion] = OrderedDict()

    def get(self, ids: list, texts: list[str]) -> list[ScoredCompletion]:
        keys = [(str(i), t) for i, t in zip(ids, texts)]
        missing = list(dict.fromkeys(k for k in keys if k not in self.scored))
        if missing:
            for key, scored in zip(missing, self.task.score_many(missing)):
                self.scored[key] = scored
            while len(self.scored) > self.capacity:
                self.scored.popitem(last=False)
        return [self.scored[k] for k in keys]


def _why(scored: ScoredCompletion, reward: str, scorer: str) -> WhyPaid:
    """What the rollout log shows of one reward: the score's answer, reason and explanation, or the error."""
    if reward in scored.errors:
        return WhyPaid(None, "error", scored.errors[reward])
    score: Score | None = scored.scores.get(scorer)
    if score is None:
        return WhyPaid(None, "error", "not scored")
    reason = score.reason or ("unscored" if scored.rewards.get(reward) is None else "scored")
    answer = None if score.answer is None else str(score.answer)
    return WhyPaid(answer, str(reason), str(score.explanation or ""))


def reward_function(batch: BatchScores, reward: str, scorer: str, name: str) -> RewardFunc:
    """The TRL reward function of one of the task's rewards (``reward``: its name in ``ScoredCompletion.rewards``;
    ``name``: the name the run gives it, its ``__name__``)."""

    def task_reward(completions, id, log_extra=None, log_metric=None, **kwargs) -> list[float | None]:  # noqa: A002 - TRL passes the dataset's id column by its name
        scored = batch.get(list(id), [completion_text(c) for c in completions])
        log_why(name, [_why(s, reward, scorer) for s in scored], log_extra)
        if log_metric is not None:
            log_metric(ERROR_METRIC.format(reward=name), float(sum(reward in s.errors for s in scored)))
        return [s.rewards.get(reward) for s in scored]

    task_reward.__name__ = name  # TRL logs rewards/<__name__>/mean
    return task_reward


def scorer_record(task: TrainingTask, slot) -> dict:
    """How a log names one of the task's scorers, and the ``inspect score`` arguments that re-create it."""
    registered = registry_info(slot.scorer).name
    params = registry_params(slot.scorer)
    file_scorer = "/" not in registered and task.file is not None
    spec = f"{task.file}@{registered}" if file_scorer else registry_log_name(slot.scorer)
    options = " ".join(f"-S {key}={json.dumps(value)}" for key, value in params.items())
    replayed = f"--scorer verigrpo/task_scorer -S task={task.spec} -S scorer={slot.name}"
    if task.args:
        replayed += " -S task_args=" + ",".join(f"{key}={json.dumps(value)}" for key, value in task.args.items())
    return {
        "name": slot.name,
        "registry_name": registered,
        "params": params,
        "keys": list(slot.keys) if slot.keys else None,
        "rewards": list(slot.reward_names),
        # the scorer alone: exact for a scorer that reads only the completion (match, includes, your own)
        "inspect_score": f"--scorer {spec}" + (f" {options}" if options else ""),
        # the chain replayed on the completion, then the scorer: exact for every task (multiple_choice + choice too)
        "inspect_score_replayed": replayed,
    }


def headline(task: TrainingTask) -> tuple[str, str]:
    """The held-out eval's headline in the trainer's log (``eval_<score>/<metric>``): the first scorer's first
    declared metric (its first key's, for a dict value), as Inspect names it in the eval log's results."""
    slot = task.scorers[0]
    metrics = declared_metrics(slot.scorer)
    score = slot.keys[0] if slot.keys else slot.name
    first = None
    if isinstance(metrics, dict):
        first = (metrics.get(score) or [None])[0]
    elif isinstance(metrics, list):
        for metric in metrics:
            if isinstance(metric, dict):
                if score in metric:
                    first = (metric[score] or [None])[0]
                    break
            else:
                first = metric
                break
    metric_name = registry_unqualified_name(first) if first is not None else "mean"
    return f"eval_{score}/{metric_name}", f"held-out {score} ({metric_name})"


def task_domain(task: TrainingTask, *, held_out: float = 0.0, seed: int = 0, taken: frozenset[str] = frozenset()):
    """The task as a ``Domain`` row: (the row, the names its rewards take in the run -> the task's reward names (a
    reward named like another row's, in ``taken``, is prefixed with the task's name), (training ids, held-out ids))."""
    ids = list(task.samples)
    train_ids, held_ids = split_ids(ids, held_out, seed)
    names = {}
    for reward in task.reward_names:
        names[f"{task.name}.{reward}" if reward in taken else reward] = reward
    batch = BatchScores(task)
    owner = {reward: slot.name for slot in task.scorers for reward in slot.reward_names}
    rewards = {name: reward_function(batch, reward, owner[reward], name) for name, reward in names.items()}

    def load(source, *, split="train", limit=None, **_ignored) -> list[TaskSample]:
        chosen = held_ids if split == "test" else train_ids
        return [TaskSample(i, task.samples[i]) for i in chosen][:limit]

    def training_row(problem: TaskSample, num_shots: int) -> dict:
        return {"prompt": task.prompt_messages(problem.id), "answer": problem.answer, "id": problem.id}

    def held_out_args(config, problems: int | None, max_tokens: int) -> dict:
        if not held_ids:
            raise DatasetError(
                f"the task {task.spec!r} has no held-out samples: set inspect_held_out (a share such as 0.1, or a "
                "count) to hold some out of training"
            )
        return {"limit": problems, "max_tokens": max_tokens}

    def eval_task(limit: int | None = None, max_tokens: int | None = None):
        """The task on its held-out samples, greedy: its own chain and scorers (a copy: the loaded task is kept)."""
        held = copy.copy(task.task)
        held.dataset = MemoryDataset([task.samples[i] for i in held_ids][:limit], name=f"{task.name} (held out)")
        held.config = task.task.config.merge(GenerateConfig(temperature=0.0, max_tokens=max_tokens))
        return held

    domain = Domain(
        name=DOMAIN_NAME,
        sources=(task.spec,),
        problem_type=TaskSample,
        load=load,
        training_row=training_row,
        rewards=rewards,
        scorer=registry_info(task.scorers[0].scorer).name,
        metrics=tuple((f"rewards/{name}/mean", name, "-") for name in names),
        eval_task=task.spec,
        eval_task_factory=eval_task,
        held_out=held_out_args,
        eval_metric=headline(task),
    )
    return domain, names, (train_ids, held_ids)


@dataclass(frozen=True)
class TaskRow:
    """A run's Inspect task, prepared and made a row: the task, its row, the run's reward names -> the task's, the
    split (training ids, held-out ids) and run.json's ``inspect_task`` section."""

    task: TrainingTask
    domain: Domain
    reward_names: dict[str, str]  # the run's reward name -> the task's
    split: tuple[list[str], list[str]]
    record: dict

    def prompts_of(self, eval_task) -> list:
        """The messages the chain sends at its first generate for each sample of ``eval_task`` (the held-out eval's
        task), as recorded: what the policy sees, by which it plans its batches."""
        return [self.task.prompts[str(sample.id)].messages for sample in eval_task.dataset]


def prepared_row(
    spec: str,
    task_args: list[str] | dict | None,
    *,
    sandbox: str | None = None,
    grader_model: str | None = None,
    held_out: float = 0.0,
    seed: int = 0,
    taken: frozenset[str] = frozenset(),
) -> TaskRow:
    """``prepare_task`` (the task loaded, its prompts recorded, what cannot train refused: TaskError) and
    ``task_domain``, for a run: ``task_args`` as the config gives them (``k=v`` items)."""
    task = prepare_task(spec, parse_task_args(task_args), sandbox=sandbox, grader_model=grader_model)
    domain, names, split = task_domain(task, held_out=held_out, seed=seed, taken=taken)
    return TaskRow(task, domain, names, split, run_record(task, domain, names, split, held_out, seed))


def run_record(
    task: TrainingTask, domain: Domain, names: dict, split: tuple[list[str], list[str]], held_out: float, seed: int
) -> dict:
    """run.json's ``inspect_task``: the task as ``inspect eval`` names it, its arguments, the solvers and scorers
    (with the ``inspect score`` arguments that re-create each), the rewards, and the split by id."""
    train_ids, held_ids = split
    return {
        "spec": task.spec,
        "file": task.file,
        "name": task.name,
        "args": task.args,
        "solvers": task.solvers,
        "scorers": [scorer_record(task, slot) for slot in task.scorers],
        "rewards": names,
        "sandbox": task.sandbox,
        "sandbox_mapped_from": task.mapped_from,
        "grader_model": task.grader_model,
        "held_out": {"rule": f"sha256(seed:id), first {len(held_ids)}", "share_or_count": held_out, "seed": seed},
        "samples": len(task.samples),
        # what the run's curve draws of this row (scripts/plot_run.py reads it here: the row is made at run time)
        "plot": {"metrics": [list(m) for m in domain.metrics], "eval_metric": list(domain.eval_metric)},
        "train_ids": train_ids,
        "held_out_ids": held_ids,
    }
