"""A sandbox's time limit counted in its own time: the wall clock minus the time it waited for a CPU.

Why: a plain wall-clock limit fires on a loaded host for a program that did nothing wrong (a correct
solution timed out at load ~7 on 2 cores), so a verdict would depend on the load. The kernel counts,
per task, the time it was runnable but waiting for a CPU (``/proc/PID/schedstat``, second field), so
the host can give that time back: a program that sleeps or blocks still meets its limit after the same
``wall_s``, whatever the load, and one that computes meets its CPU limit first, as on a quiet machine.

Two bounds keep this from being a leniency a program can use:

- time is given back only while the sandbox runs one process with one thread: a program that forks or
  starts threads could make itself wait (its own work competing with it) and so lengthen its limit, so
  from the first sign of a second task on it is back on the plain wall clock (what it was given stays);
  the waits given back are its own and those of the sandboxes timing it (the code judge);
- the wall clock never runs past ``STARVED_FACTOR`` x ``wall_s``; a program cut off there before its own
  time was up was starved by the host, which the caller treats as a sandbox failure, never a verdict.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

STARVED_FACTOR = 6.0  # the wall clock's hard stop, in multiples of the limit (under a load of ~6 per core)
_NS = 1e-9
_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def runqueue_wait_s(pid: int) -> float | None:
    """Seconds task ``pid`` has been runnable but waiting for a CPU since it started; None once it is gone."""
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * _NS
    except (OSError, IndexError, ValueError):
        return None


def process_stat(pid: int) -> tuple[int, float] | None:
    """(threads, CPU seconds of the children it has waited for) of process ``pid``; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rpartition(")")[2].split()  # from field 3 (state) on: the name may hold spaces
        return int(fields[17]), (int(fields[13]) + int(fields[14])) * _TICK_S  # num_threads; cutime + cstime
    except (OSError, IndexError, ValueError):
        return None


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (its main thread's; a sandbox's processes fork from main threads)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            return [int(child) for child in handle.read().split()]
    except (OSError, ValueError):
        return []


@dataclass
class _Tree:
    """One sandbox seen from the host: its namespace init (``timeout``, pid 1 inside) and the program it runs."""

    init_pid: int
    main_pid: int | None = None  # the program: init's one child
    waited_s: float = 0.0  # the program's runqueue wait, last read
    solo: bool = True  # no second process or thread seen yet

    def sample(self) -> None:
        programs = children(self.init_pid)
        if self.main_pid is None and programs:
            self.main_pid = programs[0]
        if len(programs) > 1:  # a second program, or an orphan re-parented to init
            self.solo = False
        if self.main_pid not in programs:  # not started yet, or gone (and its number free for another process)
            return
        waited, stat = runqueue_wait_s(self.main_pid), process_stat(self.main_pid)
        if waited is not None:
            self.waited_s = waited
        if stat is not None and (stat[0] > 1 or stat[1] > 0 or children(self.main_pid)):
            self.solo = False


class OwnClock:
    """Seconds since ``started`` that count against a sandbox's limit.

    ``watch(init_pid, timed=True)``: the sandbox whose limit this is (while it runs alone, waits are given
    back); ``timed=False``: a sandbox whose waits also stall it (the judge that times a solution).
    Call :meth:`sample` often enough that a short-lived process is seen (the caller's poll).
    """

    def __init__(self, started: float, limit_s: float) -> None:
        self.started = started
        self.limit_s = limit_s
        self._timed: _Tree | None = None
        self._others: list[_Tree] = []
        self._given_back_s = 0.0

    def watch(self, init_pid: int | None, *, timed: bool) -> None:
        if init_pid is None:
            return
        tree = _Tree(init_pid)
        if timed:
            self._timed = tree
        else:
            self._others.append(tree)

    def sample(self) -> None:
        trees = [t for t in (self._timed, *self._others) if t is not None]
        for tree in trees:
            tree.sample()
        if self._timed is not None and self._timed.solo:
            # Waits only ever grow: what was given back stays given back.
            self._given_back_s = max(self._given_back_s, sum(t.waited_s for t in trees))

    @property
    def wall_s(self) -> float:
        return time.monotonic() - self.started

    @property
    def own_s(self) -> float:
        return self.wall_s - self._given_back_s

    @property
    def given_back_s(self) -> float:
        return self._given_back_s

    @property
    def hard_stop_s(self) -> float:
        return STARVED_FACTOR * self.limit_s

    def until(self, limit_s: float) -> float:
        """Seconds to sleep before ``own_s`` could reach ``limit_s`` (never past the hard stop)."""
        return max(0.0, min(limit_s - self.own_s, self.hard_stop_s - self.wall_s))

    def reached(self, limit_s: float) -> bool:
        return self.own_s >= limit_s or self.wall_s >= self.hard_stop_s

    def starvation(self) -> str:
        """What a starved run's error says (the caller adds that no verdict is given)."""
        return (
            f"the host was overloaded: stopped after {self.wall_s:.1f} s, {self.given_back_s:.1f} s of them "
            "waiting for a CPU, before the time limit was reached in the sandbox's own time"
        )

    def starved(self, limit_s: float) -> bool:
        """Stopped by the hard stop while its own time was still under ``limit_s``: the host's doing."""
        return self.wall_s >= self.hard_stop_s and self.own_s < limit_s
