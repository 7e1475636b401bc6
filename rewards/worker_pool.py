"""A wall-clock limit on symbolic comparison that works in any thread and under asyncio.

Python cannot interrupt a thread, and SIGALRM-based limits only fire in the main thread (which is
why Math-Verify silently scores 0 inside threaded trainers). The one timeout that always holds
is a process we can kill: sympy work runs in a few long-lived worker processes, started with
``subprocess`` (not ``multiprocessing``, so no re-import of the caller's ``__main__``), and a
worker that overruns is SIGKILLed and replaced.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

TIMEOUT_S = float(os.environ.get("VERIGRPO_VERIFY_TIMEOUT_S", "0.6"))
POOL_SIZE = int(os.environ.get("VERIGRPO_VERIFY_WORKERS", "2"))
STARTUP_TIMEOUT_S = 60.0
_PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from rewards.symbolic import serve; serve(sys.argv[2] == 'warm')"


class VerifierBug(RuntimeError):
    """The worker raised an unexpected exception: a bug, never reported as a wrong answer."""


class _Timeout(Exception):
    pass


class _Worker:
    def __init__(self, warm: bool = True) -> None:
        # a replacement for a killed worker skips the warm-up corpus: it must be ready again quickly
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _BOOT, _PACKAGE_PARENT, "warm" if warm else "cold"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={"PATH": os.environ.get("PATH", ""), "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"},
            close_fds=True,
        )
        self._buffer = b""
        self._ready = False

    def _readline(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise _Timeout
            chunk = os.read(fd, 65536)
            if not chunk:
                raise VerifierBug(f"verifier worker exited with code {self.proc.wait()}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def is_ready(self) -> bool:
        """Non-blocking: has the worker finished starting?"""
        if not self._ready and b"\n" not in self._buffer:
            fd = self.proc.stdout.fileno()
            if select.select([fd], [], [], 0)[0]:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise VerifierBug(f"verifier worker exited with code {self.proc.wait()}")
                self._buffer += chunk
        return self._ready or b"\n" in self._buffer

    def request(self, payload: dict, timeout: float) -> dict:
        if not self._ready:
            try:
                self._readline(time.monotonic() + STARTUP_TIMEOUT_S)
            except _Timeout:
                raise VerifierBug(f"verifier worker did not start within {STARTUP_TIMEOUT_S:.0f}s") from None
            self._ready = True
        self.proc.stdin.write((json.dumps(payload) + "\n").encode())
        self.proc.stdin.flush()
        return json.loads(self._readline(time.monotonic() + timeout))

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            stream.close()


class WorkerPool:
    def __init__(self, size: int = POOL_SIZE) -> None:
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._all: list[_Worker] = []
        self.pid = os.getpid()

    def _spawn(self) -> _Worker:
        worker = _Worker()
        with self._lock:
            self._all.append(worker)
        return worker

    def compare(
        self, candidate: str, reference: str, places: int | None, timeout: float = TIMEOUT_S
    ) -> tuple[str, str]:
        """Run ``rewards.symbolic.compare`` in a worker; a timeout is reported as ``timeout``."""
        with self._slots:
            with self._lock:
                worker = self._take_idle()
            worker = worker or self._spawn()
            try:
                reply = worker.request({"candidate": candidate, "reference": reference, "places": places}, timeout)
            except _Timeout:
                self._retire(worker)
                return "timeout", f"no result within {timeout:g}s"
            except BaseException:
                self._retire(worker)
                raise
            with self._lock:
                self._idle.append(worker)
        if reply["status"] == "error":
            raise VerifierBug(f"verifier worker raised on {candidate!r} vs {reference!r}:\n{reply['detail']}")
        return reply["status"], reply["detail"]

    def _take_idle(self) -> _Worker | None:
        """A ready idle worker if there is one (a replacement may still be starting), else the oldest."""
        if not self._idle:
            return None
        for worker in reversed(self._idle):
            if worker.is_ready():
                self._idle.remove(worker)
                return worker
        return self._idle.pop(0)

    def _retire(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            self._all.remove(worker)
            # start the replacement now so its imports overlap with the caller's next work
            self._idle.insert(0, _Worker(warm=False))
            self._all.append(self._idle[0])

    def close(self) -> None:
        with self._lock:
            workers, self._all, self._idle = self._all, [], []
        for worker in workers:
            worker.kill()


def warm_up() -> None:
    """Start the worker processes now (~0.5 s each) instead of on the first symbolic comparison."""
    pool = get_pool()
    threads = [
        threading.Thread(target=pool.compare, args=("x", "x", None, STARTUP_TIMEOUT_S)) for _ in range(POOL_SIZE)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


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
