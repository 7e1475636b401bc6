"""The TRL reward for code: the fraction of unit tests passed, from the same core the Inspect scorer awaits.

Contract as in ``rewards.math.math_rewards``: ``code_tests(completions, tests, **kwargs)`` with ``tests`` the
dataset column (a dict or JSON text per row, see ``rewards.code.code_spec``); one float per completion, or
``None`` with a reason (``CODE_OUTCOMES_WITHOUT_A_VERDICT``). No completion can stop a run: each is graded on
its own, so one that upsets the machinery costs its own reward, never the batch. Only a sandbox that cannot
be set up at all (``SandboxUnavailable``: a broken installation) raises. Each completion's code, outcome and
explanation go to TRL's ``log_extra`` for the rollout log (``rewards.reward_log``), and the share of each
outcome per step to ``log_metric`` as ``code_verdict/<outcome>``.
"""

from __future__ import annotations

import asyncio
import logging

from rewards.code.code_spec import InvalidTests, parse_test_spec
from rewards.code.code_verifier import JudgeError, grade_code
from rewards.common import brief, clip, completion_text, run_blocking
from rewards.reward_log import WhyPaid, log_why
from rewards.sandbox import SandboxError, SandboxUnavailable
from rewards.verdict import Reason

logger = logging.getLogger(__name__)

# No verdict, reward None (TRL leaves the completion out of its group), a warning naming the sample, counted.
CODE_OUTCOMES_WITHOUT_A_VERDICT = (
    "invalid_tests",  # InvalidTests: the row's tests are malformed, or their own setup fails in the judge
    "judge_error",  # JudgeError: the trusted judge fails even against a stand-in solution (the tests' fault)
    "sandbox_error",  # SandboxError: the sandbox machinery failed on this run (not the program in it)
    "verifier_bug",  # any other exception while grading: please report the completion
)
CODE_OUTCOMES = (
    *(r.value for r in (Reason.CORRECT, Reason.TESTS_FAILED, Reason.NO_ANSWER, Reason.TOO_COMPLEX)),
    *CODE_OUTCOMES_WITHOUT_A_VERDICT,
)
METRIC_PREFIX = "code_verdict/"


def code_tests(completions, tests, log_extra=None, log_metric=None, **kwargs) -> list[float | None]:
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
    results = run_blocking(_grade_each(usable))
    for (index, _, _), result in zip(usable, results):
        if isinstance(result, WhyPaid):
            whys[index] = result
        else:
            rewards[index], whys[index] = result.fraction, WhyPaid.of(result)
    log_why("code_tests", whys, log_extra)
    if log_metric is not None and whys:
        shares = [why.reason for why in whys if why is not None]
        for outcome in CODE_OUTCOMES:
            log_metric(METRIC_PREFIX + outcome, shares.count(outcome) / len(whys))
    return rewards


async def _grade_each(items):
    """Each item's Verdict, or a WhyPaid with no verdict; concurrently, bounded as ``grade_code`` bounds itself."""

    async def one(index: int, text: str, spec):
        try:
            return await grade_code(text, spec)
        except SandboxUnavailable:
            raise  # no isolation on this machine: a broken installation stops the run
        except InvalidTests as exc:  # the tests' own setup failed in the judge
            logger.warning("code_tests: sample %d has unusable tests, reward is None: %s", index, exc)
            return WhyPaid(None, "invalid_tests", str(exc))
        except JudgeError as exc:
            logger.warning("code_tests: sample %d: the judge failed on its own, reward is None: %s", index, exc)
            return WhyPaid(None, "judge_error", clip(str(exc)))
        except SandboxError as exc:
            logger.warning("code_tests: sample %d: the sandbox failed, reward is None: %s", index, exc)
            return WhyPaid(None, "sandbox_error", clip(str(exc)))
        except Exception as exc:  # the judge's own code failed: a bug, never the completion's 0.0
            logger.exception("code_tests: sample %d (%s): grading raised, reward is None", index, brief(text))
            return WhyPaid(None, "verifier_bug", f"verifier bug: {type(exc).__name__}: {clip(str(exc), 1000)}")

    return await asyncio.gather(*(one(index, text, spec) for index, text, spec in items))
