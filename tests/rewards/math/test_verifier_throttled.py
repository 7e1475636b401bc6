"""The verifier tables graded twice, quiet and then with the workers throttled to one loaded core: same verdicts.

What is too complex is decided from the expression's structure (``rewards.math.complexity``), never a
clock, so starving the workers of CPU must not change one verdict. The throttle: the workers pinned to one
core (``os.sched_setaffinity``) shared with four busy-loop burners, so they get about a sixth of a core.
The deadline is made generous here, so the only guard that could fire is the CPU safety net
(``VerifierTooSlow``): it must not fire on a table pair, and it is counted apart from verdicts. The default
suite grades every eighth pair (a few seconds); the slow test grades them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from rewards import InvalidReference, correctness
from rewards.math import math_verifier, worker_pool
from rewards.math.math_verifier import check
from rewards.math.worker_pool import VerifierError, VerifierTooSlow, WorkerPool
from tests.rewards.math import test_sets_tuples_and_lists as sets
from tests.rewards.math import test_verifier_limits as limits
from tests.rewards.math import test_verifier_table as table

BURNERS = 4
HEAVY = ("(x+1)^{3000}(x+2)", "(x+1)^{3001}+(x+1)^{3000}")  # ~0.2 s of CPU within the limits: the 1 ms guard fires
DEADLINE_S = 120.0  # the wall clock is not under test here: only the CPU safety net may stop a comparison


def _pairs(rows) -> list[tuple[str, str]]:
    return [tuple(getattr(row, "values", row)[:2]) for row in rows]


TABLE_PAIRS = list(
    dict.fromkeys(
        _pairs(table.POSITIVES)
        + _pairs(table.NEGATIVES)
        + _pairs(sets.INTERVAL_SETS)
        + _pairs(sets.PLUS_MINUS_EQUATIONS)
        + _pairs(sets.SOLUTION_TUPLES)
        + _pairs(sets.DOUBLED_BACKSLASHES)
        + _pairs(sets.LISTS_OF_BOXES)
        + _pairs(limits.DECIDED_WITHOUT_A_CLOCK)
    )
)


def verdict(pair: tuple[str, str]):
    """(equal, reason), "invalid_reference", or the VerifierError's class name (an error, not a verdict)."""
    try:
        outcome = check(*pair, deadline_s=DEADLINE_S)
    except InvalidReference:
        return "invalid_reference"
    except VerifierError as exc:
        return type(exc).__name__
    return outcome.equal, outcome.reason


@pytest.fixture(scope="module")
def own_pool():
    """A two-worker pool of this module's own (so pinning it leaves the session's pool alone), result cache off."""
    with pytest.MonkeyPatch.context() as patch:
        pool = WorkerPool(size=2)
        patch.setattr(worker_pool, "_pool", pool)
        patch.setattr(math_verifier, "_SYMBOLIC_CACHE_SIZE", 0)
        try:
            pool.wait_ready()
            yield pool
        finally:
            pool.close()


def throttled(pool: WorkerPool, grade):
    """Run ``grade()`` with the pool's workers pinned to one core shared with ``BURNERS`` busy loops."""
    core = {min(os.sched_getaffinity(0))}
    pids = [worker.proc.pid for worker in pool._live]
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BURNERS)]
    try:
        for pid in pids + [proc.pid for proc in burners]:
            os.sched_setaffinity(pid, core)
        time.sleep(0.2)
        return grade()
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()


def assert_same_verdicts_when_throttled(pool: WorkerPool, pairs: list[tuple[str, str]]) -> None:
    quiet = {pair: verdict(pair) for pair in pairs}
    loaded = throttled(pool, lambda: {pair: verdict(pair) for pair in pairs})
    errors = {
        pair: got for pair, got in {**quiet, **loaded}.items() if isinstance(got, str) and got.startswith("Verifier")
    }
    assert not errors, f"a safety net fired on table pairs (an error, not a verdict): {errors}"
    changed = {pair: (quiet[pair], loaded[pair]) for pair in pairs if quiet[pair] != loaded[pair]}
    assert not changed, f"verdicts changed when the CPU was throttled: {changed}"


def test_table_subset_has_the_same_verdicts_on_a_throttled_loaded_core(own_pool):
    assert len(TABLE_PAIRS) > 400  # the imported tables, not a hand-picked few
    assert_same_verdicts_when_throttled(own_pool, TABLE_PAIRS[::8])


@pytest.mark.slow
def test_all_table_pairs_have_the_same_verdicts_on_a_throttled_loaded_core(own_pool):
    assert_same_verdicts_when_throttled(own_pool, TABLE_PAIRS)


def test_the_safety_net_raises_and_is_seen_as_an_error(own_pool, monkeypatch):
    """With the CPU guard at 1 ms the net fires on a symbolic pair: an error (``VerifierTooSlow``), never a False."""
    monkeypatch.setattr(worker_pool, "CPU_NET_S", 0.001)
    assert verdict(HEAVY) == VerifierTooSlow.__name__
    metrics = {}
    rewards = correctness([f"ANSWER: {HEAVY[0]}", "ANSWER: 4"], answer=[HEAVY[1], "4"], log_metric=metrics.__setitem__)
    assert rewards == [None, 1.0] and metrics["verdict/verifier_too_slow"] == 0.5  # left out by TRL, and logged
