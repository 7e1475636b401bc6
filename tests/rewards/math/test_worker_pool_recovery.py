"""The symbolic worker pool recovers from anything done to its workers (#39: after ~1,500 calls on a loaded
machine one failed restart left the pool raising ``VerifierUnavailable`` on every later call).

Workers are killed (SIGKILL while idle and in the middle of a request), stopped (SIGSTOP: a worker that
gets no CPU at all), starved (pinned to one core shared with busy loops), and made unable to start (a boot
line that exits); each test asserts that the pool comes back and later calls get their verdicts. Deadlines
are generous and nothing is timed: what is asserted is recovery, not speed, so machine load cannot fail them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from rewards.math import worker_pool
from rewards.math.worker_pool import Budget, VerifierOverloaded, VerifierUnavailable, WorkerPool

GENEROUS_S = 120.0  # a deadline no loaded machine misses: these tests assert verdicts, not time
PAIRS = [("2x", "x+x", "equal"), ("(x+1)^2", "x^2+2x+1", "equal"), (r"\sqrt{3}", r"\sqrt{2}", "different")]
FAILING_BOOT = "import sys; sys.stderr.write('no sympy here'); sys.exit(3)"


@pytest.fixture(scope="module")
def fast_retries():
    """Short backoff and abandoned-request waits, so recovery happens within a test (the defaults are for runs)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker_pool, "RESTART_BACKOFF_S", 0.05)
        patch.setattr(worker_pool, "RESTART_BACKOFF_MAX_S", 0.5)
        patch.setattr(worker_pool, "ABANDONED_WAIT_S", 2.0)
        yield


@pytest.fixture(scope="module")
def pool(fast_retries):
    """One pool of two for the module (a cold start costs seconds): each test leaves it recovered, and asserts so."""
    pool = WorkerPool(size=2)
    pool.wait_ready()
    yield pool
    pool.close()


def verdicts(pool: WorkerPool, rounds: int = 1) -> list[str]:
    return [pool.compare(c, r, None, Budget.start(GENEROUS_S))[0] for _ in range(rounds) for c, r, _ in PAIRS]


def expected(rounds: int = 1) -> list[str]:
    return [want for _ in range(rounds) for *_, want in PAIRS]


def eventually_verdicts(pool: WorkerPool, within_s: float = 300.0) -> list[str]:
    """Verdicts once the pool has recovered; VerifierOverloaded (a stopped worker still holding a call) is
    allowed until then, any other error is not."""
    give_up = time.monotonic() + within_s
    while True:
        try:
            return verdicts(pool)
        except VerifierOverloaded:
            if time.monotonic() > give_up:
                raise
            time.sleep(0.2)


def live_pids(pool: WorkerPool) -> list[int]:
    return [worker.proc.pid for worker in pool._live]


def wait_until_full(pool: WorkerPool, within_s: float = 300.0) -> None:
    give_up = time.monotonic() + within_s
    while not (len(pool._idle) == pool.size and all(worker.alive() for worker in pool._idle)):
        assert time.monotonic() < give_up, "the pool did not fill up again"
        time.sleep(0.1)


def kill_and_wait(workers) -> None:
    """SIGKILL, then wait until each is dead (the kill lands at once, whatever the load)."""
    for worker in workers:
        os.kill(worker.proc.pid, signal.SIGKILL)
    for worker in workers:
        worker.proc.wait()


def test_workers_killed_while_idle_are_replaced_and_calls_get_verdicts(pool):
    kill_and_wait(list(pool._live))
    assert verdicts(pool, rounds=3) == expected(3)
    pool.wait_ready()
    assert len(pool._live) == 2 and all(worker.alive() for worker in pool._live)


def test_a_worker_killed_during_a_request_is_retried_on_another(pool):
    """The request's worker is stopped first, so the kill lands while it holds the request, whatever the load."""
    busy = pool._idle[-1]  # the one the next call takes
    os.kill(busy.proc.pid, signal.SIGSTOP)
    result = {}
    call = threading.Thread(target=lambda: result.update(v=pool.compare("2x", "x+x", None, Budget.start(GENEROUS_S))))
    call.start()
    while busy in pool._idle:  # taken by the call (it then sends and waits on the stopped worker)
        time.sleep(0.01)
    time.sleep(0.2)
    os.kill(busy.proc.pid, signal.SIGKILL)
    call.join(GENEROUS_S + 10)
    assert result["v"][0] == "equal"
    assert busy not in pool._live
    assert verdicts(pool) == expected()


def test_a_stopped_worker_costs_one_overloaded_call_and_is_replaced(fast_retries):
    """SIGSTOP: a worker that gets no CPU at all. Its call misses the deadline (an error, not a verdict); the
    abandoned request is given up after ABANDONED_WAIT_S, the worker replaced, and the pool serves again."""
    pool = WorkerPool(size=1)
    try:
        pool.wait_ready()
        (stopped,) = pool._idle
        os.kill(stopped.proc.pid, signal.SIGSTOP)
        with pytest.raises(VerifierOverloaded):
            pool.compare("2x", "x+x", None, Budget.start(1.0))
        assert eventually_verdicts(pool) == expected()
        assert stopped not in pool._live and stopped.proc.poll() is not None
    finally:
        pool.close()


def test_a_failed_restart_never_poisons_the_pool(pool, monkeypatch):
    """Both workers die and their replacements cannot start: calls miss their deadline (VerifierOverloaded,
    naming the start error) instead of VerifierUnavailable for good; once starts work again, verdicts."""
    good_boot = worker_pool._BOOT
    monkeypatch.setattr(worker_pool, "_BOOT", FAILING_BOOT)
    kill_and_wait(list(pool._live))
    with pytest.raises(VerifierOverloaded, match="no sympy here"):
        while True:  # each call finds dead workers and replaces them; the replacements fail to start
            pool.compare("2x", "x+x", None, Budget.start(2.0))
    assert pool._start_failures >= 1 and pool._failure is None
    monkeypatch.setattr(worker_pool, "_BOOT", good_boot)
    assert eventually_verdicts(pool) == expected()
    wait_until_full(pool)  # every retry chain ended in a warm worker
    assert pool._start_failures == 0 and pool._failure is None


def test_a_pool_that_never_started_raises_unavailable_then_heals(fast_retries, monkeypatch):
    """Before any worker was warm, a failed start is most likely a broken installation: warm_up and calls say
    so with the worker's own error. The retries go on, so a transient failure heals by itself."""
    good_boot = worker_pool._BOOT
    monkeypatch.setattr(worker_pool, "_BOOT", FAILING_BOOT)
    pool = WorkerPool(size=2)
    try:
        with pytest.raises(VerifierUnavailable, match="no sympy here"):
            pool.wait_ready(timeout=GENEROUS_S)
        with pytest.raises(VerifierUnavailable, match="no sympy here"):
            pool.compare("2x", "x+x", None, Budget.start(GENEROUS_S))
        monkeypatch.setattr(worker_pool, "_BOOT", good_boot)
        give_up = time.monotonic() + 300
        while True:
            try:
                pool.wait_ready(timeout=GENEROUS_S)
                break
            except VerifierUnavailable:  # the last failure stands until a retry's worker is warm
                assert time.monotonic() < give_up
                time.sleep(0.2)
        assert verdicts(pool) == expected()
        assert pool._failure is None
    finally:
        pool.close()


def test_killed_and_starved_workers_under_many_calls(pool):
    """Workers pinned to one core shared with busy loops; three threads call at once, then a worker is killed
    while idle, twice over: every call gets its verdict (each killed worker is found dead by a call,
    replaced, and its replacement warms on the same starved core)."""
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("needs os.sched_setaffinity")
    core = {sorted(os.sched_getaffinity(0))[0]}
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]

    def pin():
        for pid in live_pids(pool) + [proc.pid for proc in burners]:
            try:
                os.sched_setaffinity(pid, core)
            except OSError:  # gone already
                pass

    results: list[list[str]] = []
    killed = []
    try:
        for _ in range(2):
            pin()  # the replacements too
            threads = [threading.Thread(target=lambda: results.append(verdicts(pool))) for _ in range(3)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            if pool._idle:  # no call is running: every warm worker is idle
                killed.append(pool._idle[-1])
                kill_and_wait(killed[-1:])
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()
    assert results == [expected()] * 6
    assert len(killed) == 2  # dead workers are found and replaced by the calls that take them
    assert eventually_verdicts(pool) == expected()
