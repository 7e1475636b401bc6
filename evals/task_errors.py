"""A task argument that cannot work (a missing file, bad rows, an unregistered domain) as one message and a non-zero
exit of ``inspect eval``, not a traceback.

How Inspect runs ``inspect eval FILE@task -T ... --model M`` (inspect-ai 0.3.285, ``inspect_ai/_eval/eval.py``):
``eval_init`` builds the model first (``resolve_models``: a provider's constructor, where ``hf/`` loads its weights),
then ``eval_resolve_tasks`` calls the ``@task`` function (a task may ask for the model while it is built). An exception
there leaves the command wrapped in an exception group: 140-280 lines of traceback, exit 1. Inspect's command line
prints a ``PrerequisiteError`` as its message alone (its ``exception_hook``; stdout, or stderr with ``--json``) and
exits 1. So a task body's ``DatasetError`` leaves it as ``TaskArgumentError``: a ``PrerequisiteError`` for the command
line and still a ``DatasetError`` for Python callers (training's held-out evals, tests). The ``verigrpo/`` provider
loads its weights only when it first generates (``evals/providers/checkpoint_model.py``), so with it these errors come
before the model loads, as training's do.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.markup import escape

from problems.math_data import DatasetError
from records.inspect_seams import PrerequisiteError


class TaskArgumentError(DatasetError, PrerequisiteError):
    """A task's ``DatasetError``: ``str()`` is its text, ``message`` what ``inspect eval`` prints (``error: <task>:
    <text>``, escaped: Inspect prints it with rich, which would read ``[...]`` in a row's text as markup)."""

    def __init__(self, task: str, cause: DatasetError) -> None:
        DatasetError.__init__(self, str(cause))
        self.message = escape(f"error: {task}: {cause}")


@contextmanager
def task_errors(task: str) -> Iterator[None]:
    """Inside a ``@task`` body: a ``DatasetError`` leaves as ``TaskArgumentError`` naming ``task``."""
    try:
        yield
    except TaskArgumentError:
        raise
    except DatasetError as exc:
        raise TaskArgumentError(task, exc) from exc
