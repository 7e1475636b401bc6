"""The Inspect AI names the task bridge needs that Inspect does not export publicly: the one place an upgrade breaks.

Written against inspect-ai 0.3.285 (pinned in pyproject.toml). Each is what ``inspect eval`` itself runs, so a task is
loaded, solved and scored here by the code that evaluates it, never by a copy:

* ``load_task_spec`` (``inspect eval``'s loader: ``FILE.py@NAME``, a registry name such as ``inspect_evals/gsm8k``,
  ``hf/...``), ``task_names_in_file`` (the ``@task`` names a file defines) and ``parse_cli_args`` (how ``-T k=v``
  values are read): inspect_tasks/loading.py.
* ``resolve_plan`` (the task's setup + solver chain as one plan), ``task_generate`` (the ``generate`` a solver gets),
  ``sample_messages`` (a sample's input as the first messages), ``init_task_context`` / ``init_transcript`` /
  ``init_subtask_store`` / ``set_sample_state`` / ``init_sample_model_data`` (the per-sample context a solver and a
  scorer read), ``current_span_id`` (which solver is running), ``unique_scorer_name`` (a scorer's name in a log),
  ``scorer_metrics`` (its declared metrics), ``sandboxenv_context`` (a sample's sandbox: files, setup, cleanup):
  inspect_tasks/replay.py.
* ``registry_info`` / ``registry_params`` / ``registry_log_name`` / ``registry_unqualified_name`` (a scorer's or
  solver's registered name and arguments, as a log records them): inspect_tasks/domain.py, training_task.py.

tests/inspect_tasks/ exercises every name here on real tasks (a file task, a ``multiple_choice`` task, an
``inspect_evals`` task, a sandboxed task); tests/test_seams.py lets no other module name them (records/inspect_seams.py
and python_tool/seams.py hold Inspect's other private names, for the packages below this one).
"""

from inspect_ai._eval.context import init_task_context
from inspect_ai._eval.loader import _load_task_specs as task_names_in_file
from inspect_ai._eval.loader import load_task_spec
from inspect_ai._eval.task.generate import task_generate
from inspect_ai._eval.task.run import resolve_plan
from inspect_ai._eval.task.sandbox import sandboxenv_context
from inspect_ai._eval.task.util import sample_messages
from inspect_ai._util.config import parse_cli_args
from inspect_ai._util.registry import (
    is_registry_object,
    registry_info,
    registry_log_name,
    registry_params,
    registry_unqualified_name,
)
from inspect_ai.log._transcript import Transcript, init_transcript, transcript
from inspect_ai.model._model import init_sample_model_data
from inspect_ai.scorer._scorer import scorer_metrics, unique_scorer_name
from inspect_ai.solver._task_state import set_sample_state
from inspect_ai.util._sandbox.registry import registry_find_sandboxenv
from inspect_ai.util._span import current_span_id
from inspect_ai.util._store import init_subtask_store

__all__ = [
    "Transcript",
    "current_span_id",
    "init_sample_model_data",
    "init_subtask_store",
    "init_task_context",
    "init_transcript",
    "is_registry_object",
    "load_task_spec",
    "parse_cli_args",
    "registry_find_sandboxenv",
    "registry_info",
    "registry_log_name",
    "registry_params",
    "registry_unqualified_name",
    "resolve_plan",
    "sample_messages",
    "sandboxenv_context",
    "scorer_metrics",
    "set_sample_state",
    "task_generate",
    "task_names_in_file",
    "transcript",
    "unique_scorer_name",
]
