"""The Inspect AI names verigrpo needs that Inspect does not export publicly: the one place an upgrade breaks.

Written against inspect-ai 0.3.285 (pinned in pyproject.toml). What checks each:

* ``registry_name`` (how Inspect qualifies a registered name): tests/evals/test_math_evals.py
  ``test_registered_scorer_name_is_the_same_everywhere`` and ``..._after_a_regular_install``.
* ``EvalScorer`` / ``EvalMetricDefinition`` (a log's scorer list, written by train/artifacts/rollout_log.py):
  tests/train/artifacts/test_rollout_log.py, which reads the written rollout logs back with ``inspect_ai.log.read_eval_log``.
* ``hf_model_api()`` (the ``hf/`` provider's class, which ``evals/checkpoint_model.py`` subclasses):
  tests/evals/test_checkpoint_model.py loads a checkpoint through ``--model verigrpo/<run dir>``.
* ``resolve_declared_headline`` (which score and metric a task's ``headline_metric`` names; tests only):
  tests/evals/test_math_evals.py and tests/evals/test_code_evals.py.

Public Inspect API is used everywhere else (``inspect_ai.util.registry_create`` included).
"""

from inspect_ai._util.registry import registry_name
from inspect_ai.log._headline import _resolve_declared as resolve_declared_headline
from inspect_ai.log._log import EvalMetricDefinition, EvalScorer

__all__ = ["EvalMetricDefinition", "EvalScorer", "hf_model_api", "registry_name", "resolve_declared_headline"]


def hf_model_api() -> type:
    """Inspect's ``hf/`` model provider class. Importing it imports torch and transformers."""
    from inspect_ai.model._providers.hf import HuggingFaceAPI

    return HuggingFaceAPI
