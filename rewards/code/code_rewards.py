"""The TRL reward for code: the fraction of unit tests passed, from the same core the Inspect scorer awaits.

Contract as in ``rewards.math.math_rewards``: ``code_tests(completions, tests, **kwargs)`` with ``tests`` the
dataset column (a dict or JSON text per row, see ``rewards.code.code_spec``); one float per completion,
``None`` (left out by TRL, with a warning) when a row's tests are unusable (malformed, or their setup
code fails when run). A sandbox that cannot be set up raises: a broken verifier must not look like a
wrong answer. Nothing a completion does raises: at worst it fails its own remaining tests. Each verdict's
code, reason and explanation (which tests failed, the first failure) go to TRL's ``log_extra`` for the
rollout log (``rewards.reward_log``).
"""

from __future__ import annotations

import logging

from rewards.code.code_spec import InvalidTests, parse_test_spec
from rewards.code.code_verifier import grade_code_many
from rewards.common import completion_text, run_blocking
from rewards.reward_log import WhyPaid, log_why

logger = logging.getLogger(__name__)


def code_tests(completions, tests, log_extra=None, **kwargs) -> list[float | None]:
    """Passed/total unit tests for the last ```python block of each completion, run in sandboxes.

    >>> tests = {"asserts": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"], "entry_point": "add"}
    >>> code_tests(["```python\\ndef add(a, b):\\n    return a + b\\n```",
    ...             "```python\\ndef add(a, b):\\n    return 3\\n```",
    ...             "no code"], tests=[tests] * 3)
    [1.0, 0.5, 0.0]
    """
    if len(completions) != len(tests):
        raise ValueError(f"{len(completions)} completions but {len(tests)} test specs")
    rewards: list[float | None] = [None] * len(completions)
    whys: list[WhyPaid | None] = [None] * len(completions)
    usable = []
    for index, (completion, raw) in enumerate(zip(completions, tests)):
        try:
            usable.append((index, completion_text(completion), parse_test_spec(raw)))
        except InvalidTests as exc:
            logger.warning("code_tests: sample %d has unusable tests, reward is None: %s", index, exc)
            whys[index] = WhyPaid(None, "invalid_tests", str(exc))
    verdicts = run_blocking(grade_code_many([(text, spec) for _, text, spec in usable], skip_invalid=True))
    for (index, _, _), verdict in zip(usable, verdicts):
        if isinstance(verdict, InvalidTests):  # the tests' own setup failed in the judge
            whys[index] = WhyPaid(None, "invalid_tests", str(verdict))
        else:
            rewards[index], whys[index] = verdict.fraction, WhyPaid.of(verdict)
    log_why("code_tests", whys, log_extra)
    return rewards
