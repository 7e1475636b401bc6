"""Grade a code answer by running its unit tests in sandboxes the model's code cannot tamper with.

Function tests use two sandboxes per completion, joined only by two pipes the host makes: the
*solution* sandbox holds the model's code and ``sandbox_programs/server.py``; the *judge* sandbox
holds the trusted tests and ``sandbox_programs/judge.py``, whose ``candidate`` is a proxy that sends
``repr()`` of the arguments across and gets plain literals back. The judge reports one verdict per
test; the host counts them and fails every test it got no verdict for. stdin/stdout tests run the
program once per case with only the input inside; the host compares the output.

``grade_code`` is the one async core; the TRL reward (``rewards.code.code_rewards``) and the Inspect scorer
(``evals.code_scoring``) both call it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rewards import sandbox
from rewards.code.code_format import MAX_CODE_CHARS, extract_code
from rewards.code.code_spec import InvalidTests, IOCase, TestSpec, outputs_match, parse_test_spec
from rewards.code.sandbox_programs import source
from rewards.common import run_blocking
from rewards.sandbox import SandboxLimits
from rewards.sandbox.own_time import OwnClock
from rewards.verdict import Reason, TestOutcome, Verdict

logger = logging.getLogger(__name__)

DEFAULT_CONCURRENCY = max(2, 2 * (os.cpu_count() or 1))  # sandboxes mostly wait on each other: 2 per core
JUDGE_GRACE_S = 2.0  # the judge outlives the solution's wall limit by this much to report the timeout


class JudgeError(RuntimeError):
    """The trusted judge itself failed (a bug, or tests too slow on their own), so no verdict can be trusted.

    Never raised for something the solution did: a judge that dies or overruns on the solution's answers
    (but not against a stand-in that only raises) fails that completion's remaining tests instead.
    """


def concurrency() -> int:
    """Sandboxes run at once per event loop: ``VERIGRPO_CODE_CONCURRENCY`` (read when a loop first grades),
    default ``DEFAULT_CONCURRENCY``."""
    value = os.environ.get("VERIGRPO_CODE_CONCURRENCY")
    return int(value) if value else DEFAULT_CONCURRENCY


_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()
_slots_lock = threading.Lock()


def _slot() -> asyncio.Semaphore:
    """One semaphore per event loop bounds all grading in it (Inspect scores many samples at once)."""
    loop = asyncio.get_running_loop()
    with _slots_lock:
        if loop not in _slots:
            _slots[loop] = asyncio.Semaphore(concurrency())
        return _slots[loop]


async def grade_code(completion: str, tests: Any, limits: SandboxLimits | None = None) -> Verdict:
    """Run ``tests`` against the code in ``completion``. Raises ``InvalidTests`` for unusable tests,
    ``SandboxUnavailable`` when isolation cannot be set up and ``SandboxError`` / ``JudgeError`` when the
    machinery fails: never a silent 0."""
    spec = parse_test_spec(tests)
    limits = limits or SandboxLimits()
    code = extract_code(completion)
    if code is None:
        return Verdict(False, None, Reason.NO_ANSWER, "no closed ```python block", 0, spec.total)
    if len(code) > MAX_CODE_CHARS:
        return Verdict(
            False, code[:200], Reason.TOO_COMPLEX, f"code is {len(code)} chars (limit {MAX_CODE_CHARS})", 0, spec.total
        )
    sandbox.ensure_available()
    async with _slot():
        if spec.is_io:
            outcomes, flags = await _run_io_cases(code, spec.io_cases, limits)
        else:
            outcomes, flags = await _run_function_tests(code, spec, limits)
    return _verdict(code, outcomes, flags)


def _verdict(code: str, outcomes: list[TestOutcome], flags: list[str]) -> Verdict:
    passed = sum(o.passed for o in outcomes)
    total = len(outcomes)
    summary = f"passed {passed}/{total} tests"
    failures = [o for o in outcomes if not o.passed]
    if failures:
        first = failures[0]
        summary += f"; failed: {', '.join(str(o.index) for o in failures[:20])}{' ...' if len(failures) > 20 else ''}"
        summary += f"; first failure (test {first.index}): {first.message}"
    if flags:
        summary += f"; limits hit: {', '.join(sorted(set(flags)))}"
    reason = Reason.TESTS_FAILED if failures else Reason.CORRECT
    return Verdict(not failures, code, reason, summary, passed, total, tuple(outcomes))


@dataclass
class _JudgeRun:
    """What one run of the judge against a solution left: its report lines, exit, and how it ended."""

    stdout: bytes
    stderr: bytes
    returncode: int | None
    timed_out: bool  # the judge did not finish within the wall limit plus its grace
    over: bool  # the judge wrote more than its output cap
    solution_status: int | None  # the solution sandbox's exit, if it died before the judge was done


async def _run_function_tests(
    code: str, spec: TestSpec, limits: SandboxLimits, stand_in: bool = False
) -> tuple[list[TestOutcome], list[str]]:
    """Run the judge against ``code``. If the judge dies or overruns, decide whose doing it was by running
    it again against a stand-in (``stand_in=True``) that raises on every call: the judge fails again
    only if the tests fail on their own (JudgeError), otherwise it was this solution's answers, and its
    tests without a verdict fail. No solution can make this raise."""
    solution, judge, time_up = await _start_solution_and_judge(code, spec, limits)
    run = await _await_judge(solution, judge, time_up, spec, limits)
    report = _read_report(run.stdout.decode(errors="replace"), len(spec.tests))
    if report.setup_error is not None:
        raise InvalidTests(f"the tests' own setup code failed in the judge: {report.setup_error}")
    outcomes, flags = report.outcomes, report.limits
    if run.timed_out or run.over or run.returncode != 0 or not report.done:
        failure = (
            f"the judge did not finish within {limits.wall_s + JUDGE_GRACE_S:g} s"
            if run.timed_out
            else f"the judge failed (exit {run.returncode}{', output over its cap' if run.over else ''})"
        )
        if stand_in:
            raise JudgeError(f"{failure}: {run.stderr.decode(errors='replace')[-2000:]}")
        try:
            await _run_function_tests(_stand_in_code(spec), spec, limits, stand_in=True)
        except JudgeError as exc:
            raise JudgeError(f"{failure}, and again against a stand-in that only raises: {exc}") from None
        # Without this solution the judge works: its answers stopped it. Its tests without a verdict fail
        # (the honest fraction stays) and the batch goes on.
        logger.warning("%s on a solution's answers (not on a stand-in's); its remaining tests fail", failure)
        message = f"{failure} on the solution's answers"
        outcomes = [o if o.index in report.verdicts else TestOutcome(o.index, False, message) for o in outcomes]
        flags.append("timeout" if run.timed_out else "judge stopped")
    if run.solution_status is not None and run.solution_status > 128:
        flags.append(_signal_flag(run.solution_status - 128))
    return outcomes, flags


async def _start_solution_and_judge(
    code: str, spec: TestSpec, limits: SandboxLimits
) -> tuple[sandbox.Sandbox, sandbox.Sandbox, int]:
    """The solution sandbox (the model's code behind server.py) and the judge sandbox (the trusted tests),
    joined only by two pipes the host makes and then closes on its side, and the write end of the judge's
    time signal (the host closes it when the solution's time is up). If the second fails to start, the
    first is reaped before the error propagates."""
    request_read, request_write = os.pipe()
    answer_read, answer_write = os.pipe()
    time_read, time_up = os.pipe()
    boxes: list[sandbox.Sandbox] = []
    try:
        solution = await sandbox.start(
            sandbox.python_argv("/sandbox/server.py"),
            {"/sandbox/server.py": source("server.py"), "/sandbox/solution.py": code.encode("utf-8", "surrogatepass")},
            limits,
            stdin=request_read,
            stdout=answer_write,
        )
        boxes.append(solution)
        judge_spec = {
            "prelude": spec.prelude,
            "tests": list(spec.tests),
            "names": list(spec.names),
            "entry_point": spec.entry_point,
        }
        judge = await sandbox.start(
            sandbox.python_argv("/judge/judge.py", str(answer_read), str(request_write), str(time_read)),
            {"/judge/judge.py": source("judge.py"), "/judge/spec.json": json.dumps(judge_spec).encode()},
            limits,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(answer_read, request_write, time_read),
        )
        boxes.append(judge)
    finally:
        for fd in (request_read, request_write, answer_read, answer_write, time_read):
            os.close(fd)
        if len(boxes) < 2:
            os.close(time_up)
            for box in boxes:
                await box.reap()
    return solution, judge, time_up


async def _await_judge(
    solution: sandbox.Sandbox, judge: sandbox.Sandbox, time_up: int, spec: TestSpec, limits: SandboxLimits
) -> _JudgeRun:
    """Read the judge's report until it exits or its time is up; both sandboxes are reaped and ``time_up``
    closed on the way out.

    Time is the solution's own (``own_time``: the wall clock less the waits of the solution and of the judge
    for a CPU): when ``limits.wall_s`` of it have passed the host closes ``time_up`` and the judge fails the
    test in progress and the rest as timed out; a judge still running ``JUDGE_GRACE_S`` later has overrun.
    A host so loaded that the hard stop comes first raises ``SandboxError``: no verdict from a starved run.
    """
    stdout, stderr = bytearray(), bytearray()
    returncode: int | None = None
    timed_out = over = False
    started = time.monotonic()
    reading: asyncio.Future | None = None
    signalled = starved = False
    try:
        started_both = await asyncio.gather(solution.read_info(limits.wall_s), judge.read_info(limits.wall_s))
        if not all(started_both):
            raise sandbox.SandboxError("bubblewrap did not start the solution or the judge sandbox")
        clock = OwnClock(started, limits.wall_s)
        clock.watch(solution.init_pid, timed=True)
        clock.watch(judge.init_pid, timed=False)
        # Each judge line is at most 2048 bytes (judge.MAX_LINE).
        reading = asyncio.ensure_future(
            asyncio.gather(
                _collect(judge.process.stdout, stdout, 4096 * (len(spec.tests) + 2)),
                _collect(judge.process.stderr, stderr, 65536),
            )
        )
        while not reading.done():
            clock.sample()
            if not signalled and clock.reached(limits.wall_s):
                starved = clock.starved(limits.wall_s)
                signalled = True
                os.close(time_up)  # the judge's time signal: the solution's time is up
            if clock.reached(limits.wall_s + JUDGE_GRACE_S):
                starved |= clock.starved(limits.wall_s + JUDGE_GRACE_S)
                timed_out = True
                break
            budget = limits.wall_s if not signalled else limits.wall_s + JUDGE_GRACE_S
            await asyncio.wait({reading}, timeout=min(clock.until(budget), sandbox.POLL_S))
        if not timed_out:
            over = reading.result()[0]
            try:
                returncode = await asyncio.wait_for(judge.process.wait(), JUDGE_GRACE_S)
            except asyncio.TimeoutError:
                timed_out = True
            # The judge is done, so the solution's requests are closed and it exits (a killed one already has).
            # Wait for asyncio to see that exit: read at once, a solution killed by RLIMIT_CPU could still look
            # alive on a loaded machine, and its "cpu time" flag depended on the load. Not when its time ran out:
            # it is still in the call the judge gave up on (reaped below).
            if returncode is not None and not signalled:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(solution.process.wait(), JUDGE_GRACE_S)
        if starved:
            raise sandbox.SandboxError(f"{clock.starvation()}; no verdict is given")
        solution_status = solution.process.returncode  # None: still running when we stopped waiting
    finally:
        if not signalled:
            os.close(time_up)
        if reading is not None and not reading.done():
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
        await asyncio.gather(solution.reap(), judge.reap())
    return _JudgeRun(bytes(stdout), bytes(stderr), returncode, timed_out, over, solution_status)


def _stand_in_code(spec: TestSpec) -> str:
    """A solution that answers every call with an exception: the counterfactual for blaming a judge failure."""
    return f"def {spec.entry_point}(*args, **kwargs):\n    raise NotImplementedError('stand-in')\n"


async def _collect(stream: asyncio.StreamReader | None, sink: bytearray, cap: int) -> bool:
    """Read ``stream`` to EOF into ``sink``, keeping at most ``cap`` bytes; True when there was more.

    Reads on past the cap (the writer must never block on a full pipe) and fills ``sink`` as it goes,
    so a caller that cancels it on a deadline still has what arrived.
    """
    over = False
    while stream is not None and (chunk := await stream.read(65536)):
        room = cap - len(sink)
        over |= len(chunk) > room
        sink += chunk[: max(room, 0)]
    return over


def _signal_flag(number: int) -> str:
    """bwrap exits 128 + N when the program died of signal N. RLIMIT_CPU's soft and hard limits are equal, so
    the kernel ends the program with SIGKILL (no SIGXCPU first): the only SIGKILL it gets before the host's own kill."""
    names = {signal.SIGKILL: "cpu time (SIGKILL)", signal.SIGXCPU: "cpu time", signal.SIGXFSZ: "file size"}
    return names.get(number, f"killed by signal {number}")


@dataclass
class _JudgeReport:
    outcomes: list[TestOutcome]
    verdicts: set[int]  # the tests the judge gave a verdict for
    limits: list[str]  # "timeout" / "memory", from the judge's own field
    setup_error: str | None
    done: bool


def _read_report(lines: str, total: int) -> _JudgeReport:
    """One outcome per test; a test with no (or a garbled) verdict line fails: fail closed. Also the
    limits the judge reported (its own field, not text the solution could have written)."""
    seen: dict[int, TestOutcome] = {}
    report = _JudgeReport([], set(), [], None, False)
    for line in lines.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        index, passed, message = record.get("test"), record.get("passed"), record.get("message")
        if record.get("setup_error") is True:
            report.setup_error = str(message)
        elif record.get("done") is True:
            report.done = True
        elif isinstance(index, int) and 0 <= index < total and isinstance(passed, bool) and index not in seen:
            seen[index] = TestOutcome(index, passed, "" if passed else str(message))
            if record.get("limit") in ("timeout", "memory"):
                report.limits.append(record["limit"])
    report.verdicts = set(seen)
    report.outcomes = [
        seen.get(index, TestOutcome(index, False, "no verdict from the judge")) for index in range(total)
    ]
    return report


async def _run_io_cases(
    code: str, cases: Sequence[IOCase], limits: SandboxLimits
) -> tuple[list[TestOutcome], list[str]]:
    files = {"/sandbox/solution.py": code.encode("utf-8", "surrogatepass")}
    outcomes, flags = [], []
    for index, case in enumerate(cases):
        result = await sandbox.run_sandboxed(
            sandbox.python_argv("/sandbox/solution.py"), files, limits, stdin=case.input.encode()
        )
        if result.starved:
            raise sandbox.SandboxError(f"{'; '.join(result.flags)}; no verdict is given")
        flags += ["timeout"] * result.timed_out + ["output"] * result.output_limited
        stdout = result.stdout.decode(errors="replace")
        if result.timed_out or result.output_limited:
            message = "; ".join(result.flags)
        elif result.returncode != 0:
            last = result.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            message = f"exit status {result.returncode}: {last[0][:300]}"
            if result.returncode > 128:
                flags.append(_signal_flag(result.returncode - 128))
        elif not outputs_match(stdout, case.output):
            message = f"input {case.input[:100]!r}: expected {case.output[:100]!r}, got {stdout[:100]!r}"
        else:
            outcomes.append(TestOutcome(index, True))
            continue
        outcomes.append(TestOutcome(index, False, message))
    return outcomes, flags


async def grade_code_many(
    items: Iterable[tuple[str, Any]], limits: SandboxLimits | None = None, *, skip_invalid: bool = False
) -> list[Verdict | InvalidTests]:
    """Grade ``(completion, tests)`` pairs concurrently (bounded by VERIGRPO_CODE_CONCURRENCY).

    ``skip_invalid``: a pair whose tests turn out unusable (``InvalidTests``, e.g. their setup code fails
    in the judge) gives that error in its place, logged, instead of raising for the whole batch. Other
    errors still raise.
    """

    async def one(completion: str, tests: Any) -> Verdict | InvalidTests:
        try:
            return await grade_code(completion, tests, limits)
        except InvalidTests as exc:
            if not skip_invalid:
                raise
            logger.warning("unusable tests, not graded: %s", exc)
            return exc

    return list(await asyncio.gather(*(one(completion, tests) for completion, tests in items)))


def grade_code_sync(completion: str, tests: Any, limits: SandboxLimits | None = None) -> Verdict:
    """Blocking :func:`grade_code`."""
    return run_blocking(grade_code(completion, tests, limits))
