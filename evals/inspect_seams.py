"""The Inspect AI names verigrpo needs that Inspect does not export publicly: the one place an upgrade breaks.

Written against inspect-ai 0.3.285 (pinned in pyproject.toml). What checks each:

* ``registry_name`` (how Inspect qualifies a registered name): tests/test_evals.py
  ``test_registered_scorer_name_is_the_same_everywhere`` and ``..._after_a_regular_install``.
* ``EvalScorer`` / ``EvalMetricDefinition`` (a log's scorer list, written by train/rollouts.py):
  tests/test_rollouts.py, which reads the written rollout logs back with ``inspect_ai.log.read_eval_log``.

Public Inspect API is used everywhere else (``inspect_ai.util.registry_create`` included).
"""

from inspect_ai._util.registry import registry_name
from inspect_ai.log._log import EvalMetricDefinition, EvalScorer

__all__ = ["EvalMetricDefinition", "EvalScorer", "registry_name"]
