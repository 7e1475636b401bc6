r"""The safety net around symbolic comparison: warm worker processes, a CPU guard and one deadline per call.

Python cannot interrupt a thread, and SIGALRM-based limits only fire in the main thread (which is
why Math-Verify silently scores 0 inside threaded trainers). So sympy work runs in a few
long-lived worker processes (started with ``subprocess``, not ``multiprocessing``, so the
caller's ``__main__`` is never re-imported).

No verdict comes from a clock. What is too complex is decided from the expression's structure before
any work (``rewards.math.complexity``: the same on every machine), and within those limits the
comparison is a deterministic procedure. Two guards remain, and both raise instead of returning a verdict:

* **A CPU guard per comparison** (``cpu_net_s()``, ``VERIGRPO_VERIFY_CPU_S``, default 1 s). A worker
  measures its own CPU time and stops a comparison that runs past it; the host kills a worker whose CPU
  use runs past it anyway (stuck in C code). Either raises ``VerifierTooSlow``: a comparison within the
  structural limits should never get there (a verifier defect to report, not the candidate's fault).
* **The caller's deadline is wall time** (``call_deadline_s()``): one deadline per call covering the
  wait for a free worker, a worker's start-up and the work. Missing it is the machine's fault,
  not the candidate's, so it raises ``VerifierOverloaded`` (an error) instead of returning a
  wrong verdict. The worker keeps running the abandoned request to its end (or the CPU guard) and
  goes back to the pool, so overload does not turn into a storm of cold starts.

Workers only take requests once warm (imports done and a warm-up corpus compared), and a worker
that is killed is replaced by one that warms in the background. They get the caller's import path
(``sys.path``), so packages found through ``PYTHONPATH`` or a ``.pth`` file work in them too.

**Nothing poisons the pool for good.** A worker that cannot start or restart (a fork refused on a busy
machine, a warm-up past ``STARTUP_TIMEOUT_S``, an exit during its imports) is started again after a
backoff (``RESTART_BACKOFF_S`` doubling to ``RESTART_BACKOFF_MAX_S``), for as long as the pool lives.
Until the pool has had one warm worker, a failed start is most likely a broken installation: calls and
``warm_up()`` raise ``VerifierUnavailable`` with the worker's own error (and the retries go on, so a
transient failure heals). Once it has been warm, a failed restart only leaves it short-handed: calls wait
for a worker within their deadline (``VerifierOverloaded`` when none comes, naming the last start error).
A worker found dead before a request (killed while idle) is replaced and the call takes another; one
that dies during a request has it retried on another worker within the deadline, and only
``DEATHS_PER_CALL`` deaths in one call are a ``VerifierBug`` (then the pair itself kills workers).

The pool's first start in a process (one worker's imports and warm-up, 1-2 s of CPU) is announced, not
hidden in a call: ``rewards.warm_up()`` does it (the trainer calls it while the model loads, the Inspect
math scorer starts it in the background when a task is built). A process that skips it pays the start in
its first symbolic call: that call waits for the *first* warm worker (the others start after it, so they
do not compete with it), and calls made while the first start is under way are not held to the deadline.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from rewards.common import brief, clip

logger = logging.getLogger(__name__)

# The settings below are read at each use (not frozen at import): an override set on this module (tests do)
# wins, then the environment variable, then the default.
CPU_NET_S: float | None = None  # VERIGRPO_VERIFY_CPU_S, default 1.0
DEADLINE_S: float | None = None  # VERIGRPO_VERIFY_DEADLINE_S, default 0.9
POOL_SIZE: int | None = None  # VERIGRPO_VERIFY_WORKERS, default cores clamped to 4..8
STARTUP_TIMEOUT_S = 120.0  # a worker's imports and warm-up, on a very busy machine
RESTART_BACKOFF_S = 0.5  # wait before starting again a worker that failed to start; doubles per failure in a row
RESTART_BACKOFF_MAX_S = 30.0  # ... up to this
KILL_GRACE_CPU_S = 0.3  # CPU a worker may use past the guard (its own stop failed) before the host kills it
DEATHS_PER_CALL = 3  # workers that may die during one call (killed from outside) before the pair is blamed
ABANDONED_WAIT_S = 60.0  # wall time an abandoned request may take to finish before its worker is killed
_POLL_S = 0.02
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding rewards/ (this is rewards/math/)
# In the worker only, Python's int->str limit (4,300 digits) is raised to the structural bound on values
# (``complexity.MAX_LOG10``, 20,000 digits) plus a margin: sympy prints and reprs integers inside a
# comparison (messages, ``srepr``), and a number within the documented allowance must not turn into a
# ValueError there. The limit guards against quadratic-time conversion; at 21,000 digits one conversion
# costs ~20 ms here, and the worker's CPU guard bounds the whole comparison anyway.
_BOOT = (
    "import json, sys; sys.path[:0] = [p for p in json.loads(sys.argv[1]) if p not in sys.path]; "
    "from rewards.math.complexity import MAX_LOG10; "
    "hasattr(sys, 'set_int_max_str_digits') and sys.set_int_max_str_digits(int(MAX_LOG10) + 1000); "
    "from rewards.math.symbolic import serve; serve()"
)


def cpu_net_s() -> float:
    """The CPU guard of one comparison, in seconds: past it the call raises ``VerifierTooSlow``."""
    return CPU_NET_S if CPU_NET_S is not None else float(os.environ.get("VERIGRPO_VERIFY_CPU_S", "1.0"))


def call_deadline_s() -> float:
    """The wall-clock deadline of one call, in seconds."""
    return DEADLINE_S if DEADLINE_S is not None else float(os.environ.get("VERIGRPO_VERIFY_DEADLINE_S", "0.9"))


def pool_size() -> int:
    """How many workers a new pool starts. More than cores on purpose: a slow comparison must not hold up
    the quick ones queued behind it."""
    if POOL_SIZE is not None:
        return POOL_SIZE
    return int(os.environ.get("VERIGRPO_VERIFY_WORKERS", str(max(4, min(8, os.cpu_count() or 4)))))


class VerifierError(RuntimeError):
    """The verifier itself failed (never the candidate's fault, so never a False verdict)."""


class VerifierBug(VerifierError):
    """The worker raised an unexpected exception or died: a bug, never reported as a wrong answer."""


class VerifierUnavailable(VerifierError):
    """The worker processes cannot start (a missing package, a broken environment): raised only while the pool
    has never had a warm worker, or once it is closed."""


class VerifierOverloaded(VerifierError):
    """No verdict within the call's wall-clock deadline: the machine is too busy, the candidate is not at fault."""


class VerifierTooSlow(VerifierOverloaded):
    """A comparison within the structural limits ran past the CPU guard (or the worker's memory limit).

    A verifier defect (its limits are too loose for this pair), never the candidate's fault: like a missed
    deadline, the reward is ``None`` and an eval sample errors, and no verdict is returned.
    """


@dataclass
class Budget:
    """One call's guards: a wall-clock deadline (``time.monotonic()``) and each comparison's CPU guard."""

    deadline: float
    cpu_net: float
    seconds: float = 0.9  # the deadline's length (start() always sets it), to restart it after the pool's first start

    @classmethod
    def start(cls, deadline_s: float | None = None, cpu_s: float | None = None) -> Budget:
        seconds = call_deadline_s() if deadline_s is None else deadline_s
        return cls(time.monotonic() + seconds, cpu_s or cpu_net_s(), seconds)


def import_path() -> list[str]:
    """The caller's ``sys.path`` as absolute directories, this package's parent first."""
    paths = [_PACKAGE_PARENT]
    for entry in sys.path:
        entry = os.path.abspath(entry or os.getcwd())
        if entry not in paths:
            paths.append(entry)
    return paths


_CLOCK_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process from /proc (None where /proc is not available)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICK  # utime, stime (fields 14 and 15)


class _WorkerDied(VerifierBug):
    """The worker process exited (or its pipe broke) during a request."""


class _Worker:
    def __init__(self) -> None:
        self._stderr = tempfile.TemporaryFile()
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}
        if "PYTHONPATH" in os.environ:
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps(import_path())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                close_fds=True,
            )
        except BaseException:
            self._stderr.close()
            raise
        self._buffer = b""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_some(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for output; True when a whole line is buffered."""
        if b"\n" in self._buffer:
            return True
        fd = self.proc.stdout.fileno()
        if select.select([fd], [], [], max(timeout, 0))[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise _WorkerDied(f"verifier worker exited with code {self.proc.wait()}: {self.stderr_tail()}")
            self._buffer += chunk
        return b"\n" in self._buffer

    def _take_line(self) -> bytes:
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def stderr_tail(self) -> str:
        if self._stderr.closed:
            return "(killed)"
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-1500:].strip()

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self._read_some(min(_POLL_S * 10, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                raise VerifierUnavailable(f"verifier worker did not start within {timeout:.0f}s")
        line = self._take_line()
        if line != b"ready":
            raise VerifierUnavailable(f"verifier worker did not start ({brief(line)}): {self.stderr_tail()}")

    def send(self, payload: dict) -> float | None:
        """Send one request; returns the worker's CPU seconds at that moment (None if unknown)."""
        cpu = _cpu_seconds(self.proc.pid)
        self.proc.stdin.write((json.dumps(payload) + "\n").encode())
        self.proc.stdin.flush()
        return cpu

    def await_reply(self, cpu_start: float | None, cpu_limit: float, deadline: float) -> dict | None:
        """The reply; None when the worker overran its CPU limit (the caller kills it); ``_Late`` at the deadline.

        A process cannot use more CPU than wall time, so its CPU use is only read (from /proc) once
        the wall time since the request passes the limit: until then one ``select`` waits.
        """
        check_from = time.monotonic() + cpu_limit + KILL_GRACE_CPU_S
        while True:
            now = time.monotonic()
            wait = min(deadline, check_from) - now if now < check_from else min(0.05, deadline - now)
            if self._read_some(wait):
                line = self._take_line()
                try:
                    reply = json.loads(line)
                    reply["status"], reply["detail"]
                except (ValueError, TypeError, KeyError):
                    raise VerifierBug(f"verifier worker sent an unreadable reply: {brief(line)}") from None
                return reply
            now = time.monotonic()
            if now >= check_from:
                cpu_now = _cpu_seconds(self.proc.pid) if cpu_start is not None else None
                used = cpu_now - cpu_start if cpu_now is not None else now - check_from + cpu_limit  # no /proc: wall
                if used > cpu_limit + KILL_GRACE_CPU_S:
                    return None
            if now >= deadline:
                raise _Late

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:  # already reaped
            pass
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr):
            try:
                stream.close()
            except BrokenPipeError:  # stdin's unsent request: the worker is gone, nothing to flush to
                pass


class _Late(Exception):
    pass


class _Waiter:
    """A caller queued for a worker; ``_release`` hands one over directly, in arrival order."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.worker: _Worker | None = None


class WorkerPool:
    """``size`` warm workers; callers wait for a free one within their deadline."""

    def __init__(self, size: int | None = None) -> None:
        size = pool_size() if size is None else size
        self.size = size
        self.pid = os.getpid()
        self._cond = threading.Condition()
        self._idle: list[_Worker] = []
        self._waiters: deque[_Waiter] = deque()
        self._live: set[_Worker] = set()
        self._ready_count = 0  # workers that have finished starting
        self._first_ready = threading.Event()  # one worker is warm: calls can be served
        self._started = threading.Event()  # every worker of the first start is warm
        self._failure: str | None = None  # why the pool has no warm worker yet (set only before the first one)
        self._start_failures = 0  # failed starts in a row (the backoff doubles with each)
        self._last_start_error: str | None = None
        self._closed = False
        self._start_worker()  # one first, alone on the CPU: the others start once it is warm

    # -- worker lifecycle ------------------------------------------------------------------

    def _start_worker(self) -> None:
        with self._cond:
            if self._closed:  # a start that was due when the pool closed (the exit of a process still warming)
                return
        try:
            worker = _Worker()  # outside the lock: a fork under load is slow, and callers must not wait on it
        except OSError as exc:  # fork or exec refused (EAGAIN, ENOMEM, too many open files): try again later
            self._start_failed(f"verifier worker could not be started: {exc}")
            return
        with self._cond:
            closed = self._closed
            if not closed:
                self._live.add(worker)
        if closed:
            worker.kill()
            return
        threading.Thread(target=self._warm, args=(worker,), name="verifier-worker-start", daemon=True).start()

    def _warm(self, worker: _Worker) -> None:
        try:
            worker.wait_ready(STARTUP_TIMEOUT_S)
        except Exception as exc:  # a start that failed, or pipes closed under us by close()
            with self._cond:
                if self._closed:
                    return
            self._discard(worker)
            self._start_failed(str(exc) if isinstance(exc, VerifierError) else f"{type(exc).__name__}: {exc}")
            return
        with self._cond:
            self._start_failures, self._failure = 0, None
            self._ready_count += 1
            first = not self._first_ready.is_set()
            self._first_ready.set()
            if self._ready_count >= self.size:
                self._started.set()
        self._release(worker)
        if first:
            for _ in range(self.size - 1):
                self._start_worker()

    def _start_failed(self, message: str) -> None:
        """A worker did not start: say why, and start one again after a backoff (never give up for good)."""
        with self._cond:
            if self._closed:
                return
            self._start_failures += 1
            failures, self._last_start_error = self._start_failures, message
            if not self._first_ready.is_set():
                self._failure = message  # no warm worker yet: calls raise VerifierUnavailable with this
            else:
                self._started.set()  # the first start is over; the pool runs short-handed until the retry
            self._cond.notify_all()
        delay = min(RESTART_BACKOFF_MAX_S, RESTART_BACKOFF_S * 2 ** min(failures - 1, 30))  # no float overflow
        logger.warning(
            "verifier worker failed to start (%d in a row), trying again in %.1fs: %s", failures, delay, message
        )
        timer = threading.Timer(delay, self._start_worker)
        timer.daemon = True
        timer.name = "verifier-worker-restart"
        timer.start()

    def _release(self, worker: _Worker) -> None:
        """Hand a free worker to the longest-waiting caller (first come, first served), else park it."""
        with self._cond:
            if self._closed or worker not in self._live:
                return
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.worker = worker
                waiter.event.set()
            else:
                self._idle.append(worker)

    def _discard(self, worker: _Worker) -> None:
        with self._cond:
            self._live.discard(worker)
            if worker in self._idle:
                self._idle.remove(worker)
        worker.kill()

    def _replace(self, worker: _Worker) -> None:
        self._discard(worker)
        with self._cond:
            closed = self._closed
        if not closed:  # forks and warms in the background (a fork under load is slow); takes requests when ready
            threading.Thread(target=self._start_worker, name="verifier-worker-start", daemon=True).start()

    def _acquire(self, budget: Budget) -> _Worker:
        if not self._started.is_set():
            # the pool's first start in this process is a one-time cost, not the call's: wait for the first
            # warm worker, and while the others still start (and compete for the CPU) hold calls to the
            # start-up limit instead of the deadline; the verdict does not depend on either
            self.wait_ready(first_only=True)
            budget.deadline = max(budget.deadline, time.monotonic() + STARTUP_TIMEOUT_S)
        while True:
            worker = self._take_worker(budget.deadline)
            if worker.alive():
                return worker
            logger.warning(
                "verifier worker %d was found dead (exit %s) before a request: replaced",
                worker.proc.pid,
                worker.proc.returncode,
            )
            self._replace(worker)

    def _take_worker(self, deadline: float) -> _Worker:
        with self._cond:
            self._check_usable()
            if self._idle and not self._waiters:
                return self._idle.pop()
            waiter = _Waiter()
            self._waiters.append(waiter)
        while not waiter.event.wait(max(0.0, min(deadline - time.monotonic(), 0.5))):
            with self._cond:
                if waiter.worker is not None:
                    break
                failed = self._failure is not None or self._closed
                if failed or time.monotonic() >= deadline:
                    self._waiters.remove(waiter)
                    self._check_usable()
                    raise VerifierOverloaded(self._no_worker_message())
        if waiter.worker is None:  # woken by close()
            with self._cond:
                self._check_usable()
            raise VerifierOverloaded(self._no_worker_message())
        if time.monotonic() >= deadline:  # handed one in time, but this thread ran too late to use it
            self._release(waiter.worker)
            raise VerifierOverloaded(self._no_worker_message())
        return waiter.worker

    def _no_worker_message(self) -> str:
        message = "no verifier worker became free before the call's deadline"
        if self._start_failures:
            message += f" ({self._start_failures} worker start(s) failed in a row, retrying: {self._last_start_error})"
        return message

    def _check_usable(self) -> None:
        if self._failure is not None:
            raise VerifierUnavailable(self._failure)
        if self._closed:
            raise VerifierUnavailable("the verifier pool is closed")

    def _finish_abandoned(self, worker: _Worker, cpu_start: float | None, cpu_limit: float) -> None:
        """Let an abandoned request finish (bounded by the CPU guard), then reuse the worker."""
        try:
            reply = worker.await_reply(cpu_start, cpu_limit, time.monotonic() + ABANDONED_WAIT_S)
        except Exception:  # late, dead, unreadable, or its pipes closed under us by close()
            reply = None
        if reply is None:
            self._replace(worker)
        else:
            self._release(worker)

    # -- the API ---------------------------------------------------------------------------

    def compare(self, candidate: str, reference: str, places: int | None, budget: Budget) -> tuple[str, str]:
        """Run ``rewards.math.symbolic.compare`` in a worker within ``budget``'s guards.

        Returns (status, detail), a verdict that does not depend on time. Raises ``VerifierOverloaded`` at
        the deadline, ``VerifierTooSlow`` when the CPU guard (or the memory limit) stops the comparison,
        and ``VerifierBug`` / ``VerifierUnavailable`` when the verifier itself fails. A worker that dies during
        the request (killed from outside, or by the pair) is replaced and the request retried on another worker
        within the deadline; ``DEATHS_PER_CALL`` deaths in one call raise ``VerifierBug`` (the pair kills workers).
        """
        for attempt in range(1, DEATHS_PER_CALL + 1):
            try:
                return self._compare_once(candidate, reference, places, budget)
            except _WorkerDied as exc:
                if attempt == DEATHS_PER_CALL or time.monotonic() >= budget.deadline:
                    raise VerifierBug(
                        f"{brief(candidate)} vs {brief(reference)}: {attempt} worker(s) died on this call: {exc}"
                    ) from None
                logger.warning(
                    "verifier worker died during %s vs %s, retrying: %s", brief(candidate), brief(reference), exc
                )
        raise AssertionError("unreachable")

    def _compare_once(self, candidate: str, reference: str, places: int | None, budget: Budget) -> tuple[str, str]:
        worker = self._acquire(budget)
        cpu_limit = budget.cpu_net
        cpu_start = None
        try:
            cpu_start = worker.send(
                {"candidate": candidate, "reference": reference, "places": places, "cpu": cpu_limit}
            )
            reply = worker.await_reply(cpu_start, cpu_limit, budget.deadline)
        except _Late:
            threading.Thread(
                target=self._finish_abandoned, args=(worker, cpu_start, cpu_limit), name="verifier-drain", daemon=True
            ).start()
            raise VerifierOverloaded(
                f"no verdict within the {budget.seconds:g}s deadline: the machine is busy"
            ) from None
        except OSError as exc:  # a broken pipe: the worker died under us
            self._replace(worker)
            raise _WorkerDied(f"verifier worker died: {exc}") from None
        except BaseException:
            self._replace(worker)
            raise
        pair = f"{brief(candidate)} vs {brief(reference)}"
        if reply is None:  # its own CPU stop did not land: a stuck C call
            self._replace(worker)
            raise VerifierTooSlow(f"{pair}: the comparison ran past the {cpu_limit:g}s CPU guard (worker killed)")
        self._release(worker)
        if reply["status"] == "error":
            raise VerifierBug(f"verifier worker raised on {pair}:\n{clip(str(reply['detail']))}")
        if reply["status"] == "net":
            raise VerifierTooSlow(f"{pair}: {clip(str(reply['detail']), 500)} (the safety net)")
        return reply["status"], str(reply["detail"])

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT_S, first_only: bool = False) -> None:
        """Block until the first start is complete, or (``first_only``) until one worker is warm.

        Raises ``VerifierUnavailable`` if a worker cannot start.
        """
        deadline = time.monotonic() + timeout
        event = self._first_ready if first_only else self._started
        while not event.wait(0.05):
            with self._cond:
                if self._failure is not None:
                    raise VerifierUnavailable(self._failure)
            if time.monotonic() >= deadline:
                raise VerifierUnavailable(f"verifier workers not ready within {timeout:.0f}s")

    def close(self) -> None:
        with self._cond:
            self._closed = True
            workers, self._live, self._idle = list(self._live), set(), []
            for waiter in self._waiters:
                waiter.event.set()
        for worker in workers:
            worker.kill()


def warm_up(wait: bool = True) -> None:
    """Start the symbolic workers now, so no verdict pays for their start; raises ``VerifierUnavailable`` if they cannot.

    ``wait=True`` blocks until every worker is warm (1-3 s, once per process): call it before training or
    scoring, so a pool that cannot start stops the run with the worker's own error message. ``wait=False``
    starts them in the background and returns at once (the first call that needs one waits for it, and
    reports a failure to start).
    """
    pool = get_pool()
    if wait:
        pool.wait_ready()


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> WorkerPool:
    """The process-wide pool; a forked child gets its own instead of sharing the parent's pipes."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool.pid != os.getpid():
            _pool = WorkerPool()
        return _pool


@atexit.register
def _close_pool() -> None:
    if _pool is not None and _pool.pid == os.getpid():
        _pool.close()
