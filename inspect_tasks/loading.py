"""An Inspect task loaded by the name a user types, as ``inspect eval`` loads it: ``FILE.py@NAME`` (a file anywhere),
a registry name (``inspect_evals/gsm8k``, any package's ``@task`` under its ``inspect_ai`` entry point), ``hf/...``,
or a dotted path ``package.module:function`` / ``package.module.function``, with ``-T``-style arguments.

Inspect's own loader (``load_task_spec``, through inspect_tasks/seams.py) does the work, so a task trains exactly
as it evaluates; what is added here is what training needs of the result and Inspect does not check up front: one
task, samples that each carry an id (Inspect's own auto-ids where a dataset gives none: 1, 2, ... in dataset
order, so ``inspect eval --sample-id`` names the same samples), no id twice.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from inspect_ai import Task
from inspect_ai.dataset import Sample

from inspect_tasks.seams import load_task_spec, parse_cli_args, task_names_in_file
from problems.math_data import DatasetError


class TaskError(DatasetError):
    """A task that cannot be trained as given: one paragraph naming the task, what is wrong and what to do."""


# package.module:function, or package.module.function
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*|[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def parse_task_args(items: list[str] | tuple[str, ...] | dict | None) -> dict:
    """``["k=v", ...]`` (``-T k=v`` each, the config key ``inspect_task_args``) read as ``inspect eval`` reads ``-T``:
    YAML scalars, ``a,b`` a list. A mapping (YAML) is taken as it is.

    >>> parse_task_args(["fewshot=0", "level=hard", "seeds=1,2"])
    {'fewshot': 0, 'level': 'hard', 'seeds': ['1', '2']}
    """
    if not items:
        return {}
    if isinstance(items, dict):
        return dict(items)
    bad = [item for item in items if "=" not in item]
    if bad:
        raise TaskError(f"inspect_task_args: {bad} are not key=value pairs (as -T takes them, e.g. fewshot=0)")
    return parse_cli_args(list(items))


def _dotted_task(spec: str, args: dict) -> Task:
    """``package.module:function`` or ``package.module.function``: the function imported and called with ``args``."""
    module_name, _, attr = spec.partition(":") if ":" in spec else spec.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise TaskError(
            f"inspect_task {spec!r} does not load: {type(exc).__name__}: {exc} (a dotted path needs its module on "
            "PYTHONPATH or installed; a file is named FILE.py@NAME)"
        ) from None
    factory = getattr(module, attr, None)
    if factory is None:
        raise TaskError(f"inspect_task {spec!r}: module {module_name!r} has no {attr!r}")
    task = factory(**args) if callable(factory) and not isinstance(factory, Task) else factory
    if not isinstance(task, Task):
        raise TaskError(f"inspect_task {spec!r} gives a {type(task).__name__}, not an inspect_ai Task")
    return task


def _one_task_of_file(spec: str) -> str:
    """``FILE.py`` without ``@NAME``: ``FILE.py@NAME`` of its one task (Inspect's glob loader takes no absolute
    path); TaskError listing the names when it defines several or none."""
    path = Path(spec)
    if not path.is_file():
        return spec
    names = task_names_in_file(path.resolve())
    if len(names) == 1:
        return f"{spec}@{names[0]}"
    what = "no @task" if not names else f"{len(names)} tasks ({', '.join(names)})"
    raise TaskError(f"inspect_task {spec!r} names {what}: name one, as FILE.py@NAME")


def _file_hint(spec: str) -> str:
    file = spec.partition("@")[0]
    if file.endswith(".py") and not Path(file).is_file():
        return f" ({file} does not exist; resolved: {Path(file).resolve()})"
    return ""


def resolve_spec(spec: str) -> str:
    """``spec`` as the run records it: a file without ``@NAME`` that defines one task becomes ``FILE.py@NAME``."""
    return _one_task_of_file(spec) if spec.endswith(".py") else spec


def load_task(spec: str, args: dict | None = None) -> Task:
    """The one task ``spec`` names, created with ``args``; TaskError (naming the spec) when it names none or several,
    or the task fails to build (e.g. a dataset on the Hugging Face Hub without a connection)."""
    args = dict(args or {})
    if DOTTED.fullmatch(spec) and not spec.endswith(".py"):
        return _dotted_task(spec, args)
    spec = resolve_spec(spec)
    try:
        tasks = load_task_spec(spec, args)
    except Exception as exc:  # any failure to build the task is the user's to see, with the spec
        raise TaskError(
            f"inspect_task {spec!r} does not load{_file_hint(spec)}: {type(exc).__name__}: {str(exc).rstrip('.')}. "
            "Give a task as `inspect eval` takes it: FILE.py@NAME, a registry name (inspect_evals/gsm8k) or "
            "package.module:function; its arguments with inspect_task_args (k=v, as -T)."
        ) from None
    if len(tasks) != 1:
        names = [t.name for t in tasks]
        what = "no task" if not tasks else f"{len(tasks)} tasks ({', '.join(names)})"
        raise TaskError(f"inspect_task {spec!r} names {what}: name one, e.g. FILE.py@NAME{_file_hint(spec)}")
    return tasks[0]


def task_file(spec: str) -> str | None:
    """The task's file, absolute, when ``spec`` names one (``FILE.py@NAME``); None for registry and dotted names."""
    file = spec.partition("@")[0]
    return str(Path(file).resolve()) if file.endswith(".py") else None


def samples_with_ids(task: Task) -> list[Sample]:
    """The task's samples, each with an id: Inspect's auto-ids (1, 2, ... in dataset order, skipping ids the
    dataset already uses) where a sample has none, as ``inspect eval`` gives them. TaskError when an id repeats
    (as its text: ``inspect eval --sample-id`` and the run's records name ids as text) or the dataset is empty."""
    samples = list(task.dataset)
    if not samples:
        raise TaskError(f"task {task.name!r} has no samples")
    seen = {str(s.id) for s in samples if s.id is not None}
    auto = 0
    for sample in samples:
        if sample.id is None:
            auto += 1
            while str(auto) in seen:
                auto += 1
            sample.id = auto
    counts: dict[str, int] = {}
    for sample in samples:
        counts[str(sample.id)] = counts.get(str(sample.id), 0) + 1
    repeated = sorted(key for key, n in counts.items() if n > 1)
    if repeated:
        raise TaskError(
            f"task {task.name!r}: sample id(s) {repeated[:5]} occur more than once; training and held-out splits "
            "are made by id, so each sample needs its own"
        )
    return samples
