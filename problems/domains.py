"""One record per answer domain (math, code): everything training, the evals, the audit and the plot need.

A domain is the kind of answer a problem wants and how it is judged. Its record names the dataset
sources that yield it, how problems load and become training rows (the prompt builder included), the
reward functions that can score it, the Inspect scorer its tasks use, which training score the rollout
audit re-judges with which scorer, the per-step metrics the run plot draws, and the Inspect task a
training run's held-out evals run (with that task's arguments for the problems a config does not train on). ``train/data/rows.py``,
``train/config/`` (sources and reward names), ``evals/log_stats/rollout_audit.py`` and ``scripts/plot_run.py``
read ``DOMAINS`` at use time. A domain of one's own needs no edit here: a module outside this package that defines a
``Domain`` registers it through the entry point group ``verigrpo.domains`` of its own package (``name =
"module:OBJECT"``, as Inspect's plugins register through ``inspect_ai``) or, without a package, through the
environment (``VERIGRPO_DOMAINS=module:OBJECT[,module:OBJECT]``, the module on ``PYTHONPATH``). ``DOMAINS`` reads
both the first time it is read; the built-in rows are declared in the same group (pyproject.toml).

A row declares its judge in one of two ways. A built-in domain names functions registered elsewhere:
``reward_names`` (``rewards.REWARD_FUNCS``) and ``scorer`` (a registered Inspect scorer) and ``eval_task``. A new
domain gives ``grade(completion_text, target) -> float in [0, 1]`` instead, and the row derives the rest from that
one function: the reward ``<name>_grade`` (reading the training row's ``answer`` column as the target), the scorer
``verigrpo/domain_scorer``, the eval task ``evals/domain_task.py@domain_verified`` (``-T domain=<name>``) and the run
plot's line for the reward, so its
training reward and its eval metric are one function (docs/adding-a-domain.md; tests/integration/test_new_domain.py
trains one step on a toy domain and evaluates it with ``inspect eval``). ``reward_funcs`` resolves reward names over
both kinds.

Standard library, ``problems.math_data``, ``problems.code_data`` and ``rewards`` only: no Inspect, no torch.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from problems.code_data import CodeProblem, load_code_problems
from problems.math_data import SOURCES as MATH_SOURCES
from problems.math_data import DatasetError, MathProblem, load_problems
from records.rollout_format import train_score_name
from rewards import REWARD_FUNCS, build_messages, get_reward_funcs
from rewards.common import completion_text

DOMAIN_SCORER = "verigrpo/domain_scorer"  # a ``grade`` domain's scorer (evals/inspect_plugin), -S domain=<name>
DOMAIN_TASK = "evals/domain_task.py@domain_verified"  # a ``grade`` domain's eval task, -T domain=<name>


@dataclass(frozen=True, kw_only=True)
class Domain:
    name: str
    sources: tuple[str, ...]  # the `dataset` values (config key, task argument) that yield this domain
    problem_type: type  # what ``load`` returns a list of
    # (source, *, path, split, limit, seed, shuffle, **options) -> problems; options: source-specific settings
    load: Callable[..., list]
    training_row: Callable[[object, int], dict]  # (problem, num_shots) -> {"prompt", "id", + the reward's column}
    # (completion text, target) -> score in [0, 1]: a new domain's one judge, from which the row derives its reward
    # ``<name>_grade``, its scorer and its eval task (the training row then carries the target as "answer")
    grade: Callable[[str, str], float] | None = None
    reward_names: frozenset[str] = frozenset()  # rewards.REWARD_FUNCS names that score this domain (and no other)
    scorer: str = ""  # the registered Inspect scorer of its eval tasks (also the audit's re-scorer)
    # training score in a rollout log -> the key of the re-scorer's dict value that grades it
    audited: Mapping[str, str] = field(default_factory=dict)
    metrics: tuple[tuple[str, str, str], ...] = ()  # plot lines: (log-history key, label, line style)
    worked_examples: bool = False  # whether num_shots > 0 means anything for its prompt
    # the Inspect task its problems are evaluated with, as `inspect eval` names it (None: no eval task)
    eval_task: str | None = None
    # (config, problems, max_tokens) -> eval_task's arguments for the problems that config does not train
    # on; DatasetError when there are none. ``config``: the training config's ScriptArguments (or alike).
    held_out: Callable[[object, int | None, int], dict] | None = None
    # the held-out eval's headline in the trainer's log history: (key, label); the eval logs every metric
    eval_metric: tuple[str, str] | None = None
    # (problem, num_shots) -> the training row when the run offers the python tool (config ``tools``); None: no tool
    tool_row: Callable[[object, int], dict] | None = None

    def __post_init__(self):
        if self.grade is None:
            if not (self.reward_names and self.scorer):
                raise ValueError(f"domain {self.name!r}: give grade, or reward_names and scorer")
            return
        set_ = object.__setattr__  # frozen: the derived fields are set once, here
        set_(self, "reward_names", frozenset(self.reward_names) | {self.grade_reward})
        set_(self, "scorer", self.scorer or DOMAIN_SCORER)
        set_(self, "eval_task", self.eval_task or DOMAIN_TASK)
        set_(self, "metrics", self.metrics or ((f"rewards/{self.grade_reward}/mean", f"{self.name} grade", "-."),))

    @property
    def grade_reward(self) -> str:
        """The name of the reward a ``grade`` domain derives (``reward_funcs: [<name>_grade]``)."""
        return f"{self.name}_grade"

    def rewards(self) -> dict[str, Callable[..., list[float | None]]]:
        """The reward functions this row brings itself (name -> TRL reward function): its ``grade`` as a reward."""
        if self.grade is None:
            return {}
        grade = self.grade

        def reward(completions, answer, **kwargs) -> list[float]:
            return [float(grade(completion_text(c), target)) for c, target in zip(completions, answer)]

        reward.__name__ = self.grade_reward  # TRL logs rewards/<__name__>/mean
        return {self.grade_reward: reward}


def _load_math(source: str, *, path=None, split="train", limit=None, seed=0, shuffle=False, **options) -> list:
    return load_problems(source, path=path, split=split, limit=limit, seed=seed, shuffle=shuffle, **options)


def _math_row(problem: MathProblem, num_shots: int) -> dict:
    return {"prompt": build_messages(problem.question, num_shots), "answer": problem.answer, "id": problem.id}


# sources whose problems come in a split training never sees; the others need eval_dataset_path
HELD_OUT_SPLITS = {"arithmetic": "test", "gsm8k": "test"}


def _held_out_file(config) -> str:
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


def _math_held_out(config, problems: int | None, max_tokens: int) -> dict:
    """``math_verified`` arguments: the source's held-out split (arithmetic: the 'test' problems of the same
    generator, operations, range and seed) or ``eval_dataset_path``; the training prompt and think setting."""
    source = config.dataset
    args = {"dataset": source, "limit": problems, "num_shots": config.num_shots, "think": config.think}
    split = HELD_OUT_SPLITS.get(source)
    if split is not None and getattr(config, "eval_dataset_path", None) is None:
        if config.dataset_split == split:
            raise DatasetError(
                f"dataset_split is {split!r}, the split held-out evals use: train on 'train', or give the "
                "held-out problems with eval_dataset_path"
            )
        args["split"] = split
    else:
        if source == "arithmetic":
            raise DatasetError("eval_dataset_path: arithmetic's held-out problems are its generated 'test' split")
        args["path"] = _held_out_file(config)
    if source == "arithmetic":
        args.update(
            seed=config.dataset_seed,
            operations=",".join(config.arithmetic_operations),  # as `-T operations=...` takes it
            min_value=config.arithmetic_min_value,
            max_value=config.arithmetic_max_value,
            steps=config.arithmetic_steps,
        )
    if getattr(config, "tools", None):  # the tool training offered, with the run's limits (evals/tool_turns.py)
        args.update(
            tools=True,
            tool_timeout_s=config.tool_timeout_s,
            tool_memory_mb=config.tool_memory_mb,
            tool_output_chars=config.tool_output_chars,
            tool_max_calls=config.tool_max_calls,
        )
    return {**args, "max_tokens": max_tokens}


def _math_tool_row(problem: MathProblem, num_shots: int) -> dict:
    return {
        "prompt": build_messages(problem.question, num_shots, tools=True),
        "answer": problem.answer,
        "id": problem.id,
    }


def _load_code(source: str, *, path=None, limit=None, **_ignored) -> list:
    return load_code_problems(path, limit)  # one bundled set or a file: split, seed and shuffle do not apply


def _code_row(problem: CodeProblem, num_shots: int) -> dict:
    return {"prompt": problem.messages(), "tests": problem.tests, "id": problem.id}


def _code_held_out(config, problems: int | None, max_tokens: int) -> dict:
    """``code_verified`` arguments: the problems of ``eval_dataset_path`` (the bundled set is the training set)."""
    return {"path": _held_out_file(config), "limit": problems, "max_tokens": max_tokens}


MATH = Domain(
    name="math",
    sources=MATH_SOURCES,
    problem_type=MathProblem,
    load=_load_math,
    training_row=_math_row,
    reward_names=frozenset({"correctness", "format"}),
    scorer="verigrpo/math_verifier",
    audited={train_score_name("correctness"): "correct"},
    metrics=(
        ("rewards/correctness/mean", "correctness (verifier)", "--"),
        ("rewards/format_reward/mean", "format rate", ":"),
    ),
    worked_examples=True,
    eval_task="evals/math_task.py@math_verified",
    held_out=_math_held_out,
    eval_metric=("eval_correct/accuracy", "held-out accuracy"),
    tool_row=_math_tool_row,
)
CODE = Domain(
    name="code",
    sources=("code",),
    problem_type=CodeProblem,
    load=_load_code,
    training_row=_code_row,
    reward_names=frozenset({"code_tests"}),
    scorer="verigrpo/unit_test_scorer",
    audited={train_score_name("code_tests"): "fraction"},
    metrics=(("rewards/code_tests/mean", "unit tests passed (fraction)", "-."),),
    eval_task="evals/code_task.py@code_verified",
    held_out=_code_held_out,
    eval_metric=("eval_fraction/mean", "held-out unit tests passed (fraction)"),
)

ENTRY_POINT_GROUP = "verigrpo.domains"
DOMAINS_ENV = "VERIGRPO_DOMAINS"
HOW_TO_REGISTER = (
    f"a domain of your own registers through the entry point group {ENTRY_POINT_GROUP!r} of your package or "
    f"{DOMAINS_ENV}=module:OBJECT (docs/adding-a-domain.md)"
)


class DomainRegistrationError(DatasetError):
    """A registered domain that does not load: names the entry point or variable and what went wrong."""


def _entry_points() -> list[EntryPoint]:
    """The group's entry points, then ``VERIGRPO_DOMAINS``'s ``module:OBJECT`` items as entry points of their own."""
    found = list(entry_points(group=ENTRY_POINT_GROUP))
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
    """The table: the built-in rows, then every registered domain, loaded the first time the table is read (a domain's
    module may import this one). A name given twice by different objects is an error naming both."""

    def __init__(self, builtin):
        super().__init__((domain.name, domain) for domain in builtin)
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


DOMAINS: dict[str, Domain] = RegisteredDomains((MATH, CODE))


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
    return MATH


def domain_rewards() -> dict[str, Callable[..., list[float | None]]]:
    """The reward functions the rows bring themselves (``grade`` domains), by name."""
    return {name: func for domain in DOMAINS.values() for name, func in domain.rewards().items()}


def reward_choices() -> list[str]:
    """Every reward name a config may use: ``rewards.REWARD_FUNCS`` and the rows' own."""
    return sorted({*REWARD_FUNCS, *domain_rewards()})


def unknown_reward_names(names: list[str] | tuple[str, ...]) -> list[str]:
    """The names that are no reward function, built in or a row's own."""
    known = reward_choices()
    return [name for name in names if name not in known]


def reward_funcs(names: list[str] | tuple[str, ...], think: str) -> list[Callable[..., list[float | None]]]:
    """The reward functions for ``names`` in order (``rewards.get_reward_funcs`` for the built-in ones, ``think``
    frozen into those that read an answer); an unknown name raises with the valid ones."""
    own = domain_rewards()
    unknown = unknown_reward_names(names)
    if unknown:
        raise ValueError(f"unknown reward function(s) {unknown}: valid names are {reward_choices()}; {HOW_TO_REGISTER}")
    return [own[name] if name in own else get_reward_funcs([name], think=think)[0] for name in names]


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
