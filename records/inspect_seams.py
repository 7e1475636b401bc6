"""The Inspect AI names verigrpo needs that Inspect does not export publicly: the one place an upgrade breaks.

Here, below ``train`` and ``evals``, because both use it: training writes its rollout logs with Inspect's log
classes, the evals register scorers and load checkpoints with the rest.

Written against inspect-ai 0.3.285 (pinned in pyproject.toml). What checks each:

* ``registry_name`` (how Inspect qualifies a registered name): tests/evals/test_math_evals.py
  ``test_registered_scorer_name_is_the_same_everywhere`` and ``..._after_a_regular_install``.
* ``EvalScorer`` / ``EvalMetricDefinition`` (a log's scorer list, written by train/artifacts/rollout_log.py):
  tests/train/artifacts/test_rollout_log.py, which reads the written rollout logs back with ``inspect_ai.log.read_eval_log``.
* ``hf_model_api()`` (the ``hf/`` provider's class, which ``evals/providers/checkpoint_model.py`` subclasses):
  tests/evals/test_checkpoint_model.py loads a checkpoint through ``--model verigrpo/<run dir>``.
* ``resolve_declared_headline`` (which score and metric a task's ``headline_metric`` names; tests only):
  tests/evals/test_math_evals.py and tests/evals/test_code_evals.py.
* ``_registry`` / ``registry_key`` (the registry's dict and its keys): ``registry_alias`` makes a second key for one
  registered object, which Inspect's ``FILE@name`` resolution needs (``evals/verify.py``):
  tests/evals/test_scorer_names.py resolves every scorer name through Inspect and runs ``inspect score`` by file path.
* ``init_hooks`` (``inspect_ai.hooks._startup``: loads the registered hooks once per process and prints a banner,
  "inspect_ai v0.3.285 / hooks enabled: 1 / verigrpo/exit_status ...", on stdout when any are registered, the first
  time the process creates a model): ``load_hooks_quietly``; tests/records/test_inspect_seams.py.

* ``PrerequisiteError`` (an exception Inspect's command line prints as its message alone, exit 1, where any other
  raised while tasks are created is a traceback of 140-280 lines): tests/evals/test_task_errors.py runs
  ``inspect eval`` with bad task arguments and counts the lines.

``sample_state()``, which the python tool's eval turns need, is in ``python_tool/seams.py``.
Public Inspect API is used everywhere else (``inspect_ai.util.registry_create`` included).
"""

import contextlib
import io

from inspect_ai._util import registry as _inspect_registry
from inspect_ai._util.error import PrerequisiteError
from inspect_ai._util.registry import registry_name
from inspect_ai.log._headline import _resolve_declared as resolve_declared_headline
from inspect_ai.log._log import EvalMetricDefinition, EvalScorer

__all__ = [
    "load_hooks_quietly",
    "EvalMetricDefinition",
    "EvalScorer",
    "PrerequisiteError",
    "hf_model_api",
    "registry_alias",
    "registry_name",
    "resolve_declared_headline",
]


def hf_model_api() -> type:
    """Inspect's ``hf/`` model provider class. Importing it imports torch and transformers."""
    from inspect_ai.model._providers.hf import HuggingFaceAPI

    return HuggingFaceAPI


def registry_alias(kind: str, alias: str, registered: object) -> None:
    """Make ``alias`` a second registry key (of ``kind``: "scorer", ...) for the already registered ``registered``: a
    lookup of either name returns that one object, which keeps its own registry info (its name in logs)."""
    key = _inspect_registry.registry_key(kind, alias)
    if _inspect_registry._registry.get(key, registered) is not registered:
        raise ValueError(f"Inspect's registry already holds another {kind} named {alias!r}")
    _inspect_registry._registry[key] = registered
    _inspect_registry._registry_version += 1  # Inspect's caches keyed on the registry's contents


def load_hooks_quietly() -> str:
    """Load Inspect's hooks now and return the banner Inspect would print on stdout as it does (empty when there is
    none, or the hooks were loaded already). A training run calls it before its first step: the held-out evals and the
    rollout audit create Inspect models, and the banner (which on an ``inspect eval`` command line opens the output)
    would otherwise be printed inside the progress bar. The hooks themselves stay loaded and run as usual."""
    from inspect_ai.hooks._startup import init_hooks

    banner = io.StringIO()
    with contextlib.redirect_stdout(banner):  # rich's print writes to the sys.stdout of the moment
        init_hooks()
    return banner.getvalue()
