"""The table of answer domains (math, code, and any registered one): one ``Domain`` row each, and how rows register.

A domain is the kind of answer a problem wants and how it is judged. Its row names the dataset sources that yield
it, how problems load and become training rows (the prompt builder included), the reward functions that score it
(name -> function: this table is the one place a config's ``reward_funcs`` names are looked up), the Inspect scorer
its tasks use, which training score the rollout audit re-judges with which scorer, the per-step metrics the run
plot draws, and the Inspect task a training run's held-out evals run (with that task's arguments for the problems a
config does not train on). A training run looks its dataset source and reward names up once (``run_domain``, from
``train/config/resolved.py``); ``evals/log_stats/rollout_audit.py`` and ``scripts/plot_run.py`` read ``DOMAINS`` at use
time.

Every row registers the same way: a module that defines a ``Domain`` names it in the entry point group
``verigrpo.domains`` of its package (``name = "module:OBJECT"``, as Inspect's plugins register through
``inspect_ai``) or, without a package, in the environment (``VERIGRPO_DOMAINS=module:OBJECT[,module:OBJECT]``, the
module on ``PYTHONPATH``). The built-in rows are two such modules, ``problems/math_domain.py`` and
``problems/code_domain.py``, declared in this project's ``pyproject.toml``; ``BUILTIN`` lists them too so that they
come first, in that order, whatever an install's metadata holds. ``DOMAINS`` loads them all the first time it is
read (a row's module imports this one).

A row declares its judge in one of two ways. A built-in domain gives ``rewards`` (name -> TRL reward function, the
plain functions of ``rewards``), ``scorer`` (a registered Inspect scorer) and ``eval_task``. A new domain gives
``grade(completion_text, target) -> float in [0, 1]`` instead (a plain function, or ``async def`` when it awaits an
async scorer: ``grade_all`` runs either kind from training's reward, ``evals/domain_task.py`` awaits it in the eval's
event loop), and the row derives the rest from that one function:
the reward ``<name>_grade`` (reading the training row's ``answer`` column as the target), the scorer
``verigrpo/domain_scorer``, the eval task ``evals/domain_task.py@domain_verified`` (``-T domain=<name>``) and the run
plot's line for the reward, so its training reward and its eval metric are one function (docs/adding-a-domain.md;
tests/integration/test_new_domain.py trains one step on a toy domain and evaluates it with ``inspect eval``).

Standard library, ``problems.math_data``, ``rewards.common`` and ``rewards.math.answer_format`` only: no Inspect, no
torch.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from problems.math_data import DatasetError
from rewards.common import completion_text, run_blocking
from rewards.math.answer_format import DEFAULT_ANSWER_FORMAT

DOMAIN_SCORER = "verigrpo/domain_scorer"  # a ``grade`` domain's scorer (evals/inspect_plugin), -S domain=<name>
DOMAIN_TASK = "evals/domain_task.py@domain_verified"  # a ``grade`` domain's eval task, -T domain=<name>

RewardFunc = Callable[..., list[float | None]]


@dataclass(frozen=True, kw_only=True)
class Domain:
    name: str
    sources: tuple[str, ...]  # the `dataset` values (config key, task argument) that yield this domain
    problem_type: type  # what ``load`` returns a list of
    # (source, *, path, split, limit, seed, shuffle, **options) -> problems; options: source-specific settings
    load: Callable[..., list]
    training_row: Callable[[object, int], dict]  # (problem, num_shots) -> {"prompt", "id", + the reward's column}
    # (completion text, target) -> score in [0, 1], or an awaitable of it (``async def grade``): a new domain's one
    # judge, from which the row derives its reward ``<name>_grade``, its scorer and its eval task (the training row
    # then carries the target as "answer")
    grade: Callable[[str, str], float | Awaitable[float]] | None = None
    # the reward functions that score this domain (and no other), by the name a config's reward_funcs gives;
    # a ``grade`` row's derived ``<name>_grade`` is added to them
    rewards: Mapping[str, RewardFunc] = field(default_factory=dict)
    # (reward, think) -> the reward with the run's <think> setting frozen in (None: its rewards take no setting)
    with_think: Callable[[RewardFunc, str], RewardFunc] | None = None
    scorer: str = ""  # the registered Inspect scorer of its eval tasks (also the audit's re-scorer)
    # training score in a rollout log -> the key of the re-scorer's dict value that grades it
    audited: Mapping[str, str] = field(default_factory=dict)
    metrics: tuple[tuple[str, str, str], ...] = ()  # plot lines: (log-history key, label, line style)
    worked_examples: bool = False  # whether num_shots > 0 means anything for its prompt
    # the Inspect task its problems are evaluated with, as `inspect eval` names it (None: no eval task)
    eval_task: str | None = None
    # (held_out's arguments) -> the Inspect Task the held-out eval runs; None: the @task function eval_task names,
    # imported (a row made at run time from an Inspect task builds its own: inspect_tasks/domain.py)
    eval_task_factory: Callable[..., object] | None = None
    # (config, problems, max_tokens) -> eval_task's arguments for the problems that config does not train
    # on; DatasetError when there are none. ``config``: the training config's ScriptArguments (or alike).
    held_out: Callable[[object, int | None, int], dict] | None = None
    # the held-out eval's headline in the trainer's log history: (key, label); the eval logs every metric
    eval_metric: tuple[str, str] | None = None
    # (problem, num_shots) -> the training row when the run offers the python tool (config ``tools``); None: no tool
    tool_row: Callable[[object, int], dict] | None = None
    # the named answer formats (config ``answer_format``, rewards.ANSWER_FORMATS) its prompt and rewards take: then
    # training_row, tool_row and with_think take ``answer_format=`` and held_out reads the config's. Empty: the default
    answer_formats: tuple[str, ...] = ()

    def __post_init__(self):
        if self.grade is None:
            if not (self.rewards and self.scorer):
                raise ValueError(f"domain {self.name!r}: give grade, or rewards and scorer")
            return
        set_ = object.__setattr__  # frozen: the derived fields are set once, here
        set_(self, "rewards", {**self.rewards, self.grade_reward: _grade_reward(self.grade, self.grade_reward)})
        set_(self, "scorer", self.scorer or DOMAIN_SCORER)
        set_(self, "eval_task", self.eval_task or DOMAIN_TASK)
        set_(self, "metrics", self.metrics or ((f"rewards/{self.grade_reward}/mean", f"{self.name} grade", "-."),))

    @property
    def grade_reward(self) -> str:
        """The name of the reward a ``grade`` domain derives (``reward_funcs: [<name>_grade]``)."""
        return f"{self.name}_grade"

    @property
    def reward_names(self) -> frozenset[str]:
        """The names of the rewards that score this domain."""
        return frozenset(self.rewards)


def grade_all(grade: Callable, pairs: list[tuple[str, str]]) -> list[float]:
    """``grade`` of each (completion text, target), from sync code (training's reward, the exploit probe): a plain
    ``grade``'s scores as they are; an ``async def`` one's (or awaitables a plain one returns) awaited, a batch's at once
    in one event loop, in a thread of its own when the caller's thread already runs one (``run_blocking``)."""
    scores = [grade(text, target) for text, target in pairs]  # coroutines of an async grade start below, in a loop
    if any(inspect.isawaitable(score) for score in scores):
        scores = run_blocking(_gather(scores))
    return [float(score) for score in scores]


async def _gather(scores: list) -> list:
    return await asyncio.gather(*(awaited(score) for score in scores))


async def awaited(score):
    """``score``, awaited if it is awaitable (a ``grade`` may return either)."""
    return await score if inspect.isawaitable(score) else score


def _grade_reward(grade: Callable[[str, str], float], name: str) -> RewardFunc:
    """``grade`` as a TRL reward function: each completion against the training row's ``answer`` (``grade_all``)."""

    def reward(completions, answer, **kwargs) -> list[float]:
        return grade_all(grade, [(completion_text(c), target) for c, target in zip(completions, answer)])

    reward.__name__ = name  # TRL logs rewards/<__name__>/mean
    return reward


def held_out_file(config) -> str:
    """The held-out file a source without a held-out split needs: ``eval_dataset_path``, not the training file."""
    path = getattr(config, "eval_dataset_path", None)
    if not path:
        raise DatasetError(
            f"dataset {config.dataset!r} has no split that training leaves out: give the held-out problems "
            "in a file of the same format with eval_dataset_path"
        )
    if config.dataset_path and Path(path).resolve() == Path(config.dataset_path).resolve():
        raise DatasetError(f"eval_dataset_path is the training file ({path}): held-out problems must be others")
    return path


ENTRY_POINT_GROUP = "verigrpo.domains"
DOMAINS_ENV = "VERIGRPO_DOMAINS"
HOW_TO_REGISTER = (
    f"a domain of your own registers through the entry point group {ENTRY_POINT_GROUP!r} of your package or "
    f"{DOMAINS_ENV}=module:OBJECT (docs/adding-a-domain.md)"
)


class DomainRegistrationError(DatasetError):
    """A registered domain that does not load: names the entry point or variable and what went wrong."""


# this project's rows, as its pyproject.toml declares them in the group: read first, so the table starts math, code
BUILTIN = {"math": "problems.math_domain:MATH", "code": "problems.code_domain:CODE"}


def _entry_points() -> list[EntryPoint]:
    """The built-in rows, the group's entry points, then ``VERIGRPO_DOMAINS``'s ``module:OBJECT`` items as entry
    points of their own."""
    found = [EntryPoint(name=name, value=value, group=ENTRY_POINT_GROUP) for name, value in BUILTIN.items()]
    found += entry_points(group=ENTRY_POINT_GROUP)
    for item in filter(None, (part.strip() for part in os.environ.get(DOMAINS_ENV, "").split(","))):
        found.append(EntryPoint(name=item, value=item, group=DOMAINS_ENV))
    return found


def _load(entry: EntryPoint) -> Domain:
    where = f"{entry.group} {entry.name} = {entry.value!r}"
    module, _, attr = entry.value.partition(":")
    if not attr:
        raise DomainRegistrationError(f"{where}: write module:OBJECT (e.g. my_domain:PARITY)")
    try:
        obj = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise DomainRegistrationError(f"{where} does not load: {type(exc).__name__}: {exc}") from None
    if not isinstance(obj, Domain):
        raise DomainRegistrationError(f"{where} is a {type(obj).__name__}, not a problems.domains.Domain")
    return obj


class RegisteredDomains(dict):
    """The table: every registered domain, the built-in ones first, loaded the first time the table is read (a
    domain's module imports this one). A name given twice by different objects is an error naming both."""

    def __init__(self):
        super().__init__()
        self.loaded = False

    def load_registered(self) -> None:
        if self.loaded:
            return
        self.loaded = True
        for entry in _entry_points():
            domain = _load(entry)
            known = dict.get(self, domain.name)
            if known is not None and known is not domain:
                raise DomainRegistrationError(
                    f"{entry.group} {entry.name} = {entry.value!r} registers domain {domain.name!r}, a name already "
                    "taken: give the Domain another name"
                )
            dict.__setitem__(self, domain.name, domain)

    def __getitem__(self, key):
        self.load_registered()
        return super().__getitem__(key)

    def __iter__(self):
        self.load_registered()
        return super().__iter__()

    def __len__(self):
        self.load_registered()
        return super().__len__()

    def __contains__(self, key):
        self.load_registered()
        return super().__contains__(key)

    def get(self, key, default=None):
        self.load_registered()
        return super().get(key, default)

    def keys(self):
        self.load_registered()
        return super().keys()

    def values(self):
        self.load_registered()
        return super().values()

    def items(self):
        self.load_registered()
        return super().items()


DOMAINS: dict[str, Domain] = RegisteredDomains()


_RUN_ROWS: set[str] = set()  # the names of the rows add_run_row made


def add_run_row(domain: Domain) -> None:
    """Add a row made at run time (an Inspect task a run trains on: inspect_tasks/domain.py) to this process's table,
    after the registered ones; it replaces an earlier run-time row of the same name, never a built-in one."""
    DOMAINS.load_registered()
    known = dict.get(DOMAINS, domain.name)
    if known is not None and known.name in BUILTIN:
        raise DomainRegistrationError(f"a run-time row cannot replace the built-in domain {domain.name!r}")
    dict.__setitem__(DOMAINS, domain.name, domain)
    _RUN_ROWS.add(domain.name)


def drop_run_rows() -> None:
    """Remove the rows made at run time, for a process that goes on after its run (a test session, a notebook)."""
    for name in _RUN_ROWS:
        dict.pop(DOMAINS, name, None)
    _RUN_ROWS.clear()


def all_sources() -> tuple[str, ...]:
    """Every dataset source of every domain, in table order."""
    return tuple(source for domain in DOMAINS.values() for source in domain.sources)


def domain_of_source(source: str) -> Domain:
    """The domain a dataset source yields; DatasetError naming the valid sources otherwise."""
    for domain in DOMAINS.values():
        if source in domain.sources:
            return domain
    raise DatasetError(f"unknown dataset {source!r}: choose from {list(all_sources())}; {HOW_TO_REGISTER}")


def domain_of_problems(problems: list) -> Domain:
    """The domain whose problem type ``problems`` holds (math for an empty list)."""
    for domain in DOMAINS.values():
        if problems and isinstance(problems[0], domain.problem_type):
            return domain
    return DOMAINS["math"]


def reward_owners() -> dict[str, Domain]:
    """Every reward name a config may use -> the row that brings it: the one reward-name table."""
    return {name: domain for domain in DOMAINS.values() for name in domain.rewards}


def reward_choices() -> list[str]:
    """Every reward name a config may use, sorted."""
    return sorted(reward_owners())


def unknown_reward_names(names: list[str] | tuple[str, ...]) -> list[str]:
    """The names that are no row's reward function."""
    known = reward_owners()
    return [name for name in names if name not in known]


def reward_funcs(
    names: list[str] | tuple[str, ...], think: str, answer_format: str = DEFAULT_ANSWER_FORMAT
) -> list[RewardFunc]:
    """The reward functions for ``names`` in order, ``think`` (and for a domain with ``answer_formats``, the
    ``answer_format``) frozen into those that read an answer (the settings the eval scorer takes as ``-S think=``,
    ``-S answer_format=``); an unknown name, or a format a reward's domain does not take, raises with the valid ones.

    >>> [f.__name__ for f in reward_funcs(["correctness", "format"], think="after_last_close")]
    ['correctness', 'format_reward']
    """
    owners = reward_owners()
    unknown = unknown_reward_names(names)
    if unknown:
        raise ValueError(f"unknown reward function(s) {unknown}: valid names are {reward_choices()}; {HOW_TO_REGISTER}")
    funcs = []
    for name in names:
        domain = owners[name]
        func = domain.rewards[name]
        if answer_format != DEFAULT_ANSWER_FORMAT and answer_format not in domain.answer_formats:
            raise ValueError(
                f"answer_format {answer_format!r}: the {domain.name} domain's reward {name!r} reads no named answer "
                f"format (it takes {list(domain.answer_formats) or [DEFAULT_ANSWER_FORMAT]})"
            )
        if domain.with_think and domain.answer_formats:
            func = domain.with_think(func, think, answer_format=answer_format)
        elif domain.with_think:
            func = domain.with_think(func, think)
        funcs.append(func)
    return funcs


@dataclass(frozen=True)
class RunDomain:
    """What a training config's ``dataset`` and ``reward_funcs`` come to, in one look-up of the table: the config's
    checks (train/config/validation.py) read its lists, the run its domain and reward functions."""

    domain: Domain | None  # the dataset's domain; None: no row yields that source
    sources: tuple[str, ...]  # every dataset source of every row
    reward_choices: tuple[str, ...]  # every reward name a config may use, sorted
    unknown_rewards: tuple[str, ...]  # the config's reward names that are no row's
    rewards_elsewhere: tuple[str, ...]  # the config's reward names that belong to a domain other than ``domain``
    reward_funcs: tuple[RewardFunc, ...]  # the config's rewards in order, think frozen in (empty: see not_built)
    not_built: str | None = None  # why reward_funcs is empty: an unknown name, a think setting a reward does not take


def run_domain(
    source: str, names: list[str] | tuple[str, ...], think: str, answer_format: str = DEFAULT_ANSWER_FORMAT
) -> RunDomain:
    """The domain of dataset ``source`` and the reward functions ``names`` give it (``think`` and ``answer_format``
    frozen in), with what a config check refuses: an unknown source or reward name, a reward of another domain."""
    sources = all_sources()
    domain = domain_of_source(source) if source in sources else None
    elsewhere = reward_names_elsewhere(domain) if domain is not None else frozenset()
    try:
        funcs, not_built = tuple(reward_funcs(names, think=think, answer_format=answer_format)), None
    except ValueError as exc:
        funcs, not_built = (), str(exc)
    return RunDomain(
        domain=domain,
        sources=sources,
        reward_choices=tuple(reward_choices()),
        unknown_rewards=tuple(unknown_reward_names(names)),
        rewards_elsewhere=tuple(name for name in names if name in elsewhere),
        reward_funcs=funcs,
        not_built=not_built,
    )


def reward_names_elsewhere(domain: Domain) -> frozenset[str]:
    """Rewards that belong to other domains (naming one for this domain's data is a config error)."""
    return frozenset().union(*(d.reward_names for d in DOMAINS.values() if d is not domain))


def audited_scores() -> dict[str, tuple[str, str]]:
    """Training score in a rollout log -> (default re-scorer, the key of its dict value that grades)."""
    return {score: (d.scorer, key) for d in DOMAINS.values() for score, key in d.audited.items()}


def plot_metrics() -> tuple[tuple[str, str, str], ...]:
    """Every domain's per-step plot lines (a run's log history holds only its own domain's keys)."""
    return tuple(metric for domain in DOMAINS.values() for metric in domain.metrics)


def held_out_metrics() -> tuple[tuple[str, str], ...]:
    """Every domain's held-out eval headline (log-history key, label): what the run plot marks per eval."""
    return tuple(domain.eval_metric for domain in DOMAINS.values() if domain.eval_metric)


def __getattr__(name: str):
    """``problems.domains:MATH`` and ``:CODE``: an install made before the built-in rows had their own modules names
    them in its entry points until it is reinstalled (``make setup`` reinstalls when pyproject.toml changes)."""
    if name in ("MATH", "CODE"):
        module, _, attr = BUILTIN[name.lower()].partition(":")
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
