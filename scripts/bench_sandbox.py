"""Sandbox cost: per-run latency against plain Python, and grading throughput for GRPO-sized batches.

    python scripts/bench_sandbox.py [--runs 60] [--completions 64] [--tests 8] [--host-gb 4]

Part 1 runs a trivial program (``print('hi')``) interleaved under plain ``python3 -I`` (the issue's
baseline), ``python3 -I -S`` (the flags the sandbox uses, to separate interpreter start-up from
isolation) and the full sandbox (bwrap + seccomp + prlimit), and prints median / p95 and the overhead.
Part 2 grades ``--completions`` completions (a mix of right, partly right and wrong) against a problem
with ``--tests`` asserts at the default concurrency: two sandboxes per completion (judge + solution).
``--host-gb N`` first fills N GB of this process's memory, like a trainer holding a model: spawning
must not get slower with the host's size (sandboxes start through vfork + setpriv, not fork).
Targets (issue #5): overhead <= 60 ms median; 64 x 8 in <= 3 s on 2 cores. The load average is printed
before and after: on a shared box other jobs' load shows up directly in both numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time

from rewards import sandbox
from rewards.code.code_verifier import DEFAULT_CONCURRENCY, concurrency, grade_code_many

TRIVIAL = "print('hi')\n"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def latency(runs: int) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(TRIVIAL)
    timings: dict[str, list[float]] = {"python3 -I": [], "python3 -I -S": [], "sandbox": []}
    plain = {
        "python3 -I": [sandbox.sandbox_python(), "-I", handle.name],
        "python3 -I -S": [sandbox.sandbox_python(), "-I", "-S", handle.name],
    }
    files = {"/sandbox/main.py": TRIVIAL.encode()}
    try:
        for index in range(runs + 3):
            for name, argv in plain.items():
                started = time.perf_counter()
                out = subprocess.run(argv, capture_output=True, check=True).stdout
                elapsed = time.perf_counter() - started
                assert out == b"hi\n"
                if index >= 3:  # warm-up rounds are not counted
                    timings[name].append(elapsed)
            started = time.perf_counter()
            result = sandbox.run_sandboxed_sync(sandbox.python_argv("/sandbox/main.py"), files=files)
            elapsed = time.perf_counter() - started
            assert result.stdout == b"hi\n", result
            if index >= 3:
                timings["sandbox"].append(elapsed)
    finally:
        os.unlink(handle.name)
    print(f"latency of one trivial program, {runs} interleaved runs each:")
    for name, values in timings.items():
        print(
            f"  {name:14s} median {statistics.median(values) * 1e3:6.1f} ms   p95 {percentile(values, 0.95) * 1e3:6.1f} ms"
        )
    base = statistics.median(timings["python3 -I"])
    boxed = statistics.median(timings["sandbox"])
    verdict = "OK" if boxed - base <= 0.060 else "OVER TARGET"
    print(
        f"  sandbox overhead vs python3 -I: {(boxed - base) * 1e3:+.1f} ms median (target <= 60 ms: {verdict}), ratio {boxed / base:.2f}x"
    )


def batch(completions: int, tests: int) -> None:
    asserts = [f"assert poly({x}) == {x * x + 3 * x + 1}" for x in range(tests)]
    spec = {"asserts": asserts, "entry_point": "poly"}
    bodies = [
        "def poly(x):\n    return x * x + 3 * x + 1\n",  # right
        "def poly(x):\n    return x * x + 3 * x + 1 if x < 4 else 0\n",  # half right
        "def poly(x):\n    return x * x\n",  # wrong
        "def poly(x):\n    total = 1\n    for _ in range(x):\n        total += 0\n    return x ** 2 + 3 * x + total\n",  # right, slower
    ]
    items = [(f"Solution:\n```python\n{bodies[i % len(bodies)]}```", spec) for i in range(completions)]
    asyncio.run(grade_code_many(items[:2]))  # start-up (seccomp filter, availability probe) outside the timing
    started = time.perf_counter()
    verdicts = asyncio.run(grade_code_many(items))
    elapsed = time.perf_counter() - started
    mean = sum(v.fraction for v in verdicts) / len(verdicts)
    slots = concurrency()
    verdict = "OK" if elapsed <= 3.0 else "OVER TARGET"
    print(
        f"grading {completions} completions x {tests} tests (2 sandboxes each) at concurrency {slots} "
        f"(default {DEFAULT_CONCURRENCY}, {os.cpu_count()} cores): {elapsed:.2f} s wall "
        f"(target <= 3 s: {verdict}), {completions / elapsed:.1f} completions/s, mean reward {mean:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--completions", type=int, default=64)
    parser.add_argument("--tests", type=int, default=8)
    parser.add_argument("--host-gb", type=float, default=0.0, help="resident memory to hold while measuring")
    args = parser.parse_args()
    sandbox.ensure_available()
    ballast = bytearray(int(args.host_gb * (1 << 30)))
    for offset in range(0, len(ballast), 4096):  # touch every page so it is resident
        ballast[offset] = 1
    if ballast:
        print(f"holding {args.host_gb:g} GB resident in the host process")
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (the targets assume an idle box)")
    latency(args.runs)
    batch(args.completions, args.tests)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
