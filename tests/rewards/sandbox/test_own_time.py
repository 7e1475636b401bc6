"""A sandbox's time limit counts its own time, so no verdict changes with the host's load.

The load is made here, not hoped for: the test pins itself (so every sandbox it starts) and four busy
processes to one CPU, which leaves a sandboxed program about a fifth of it. A program that needs 0.4 s of
CPU then takes ~2 s of wall clock: a plain 1 s wall-clock limit would stop it, its own time does not.
"""

import asyncio
import os
import subprocess
import sys
import time

import pytest

from rewards import grade_code, grade_code_sync, sandbox
from rewards.sandbox import SandboxError, SandboxLimits, own_time, run_sandboxed_sync

BURNERS = 4
COMPUTE = "import time\nwhile time.process_time() < {cpu}: pass\nprint('done')\n"  # the same CPU on any machine
SUM = {
    "asserts": ["assert total([1, 2, 3]) == 6", "assert total([]) == 0", "assert total([-1, 1]) == 0"],
    "entry_point": "total",
}


def _busy_for(cpu_s: float) -> str:
    return (
        "```python\nimport time\n"
        "def total(xs):\n"
        f"    start = time.process_time()\n    while time.process_time() - start < {cpu_s}: pass\n"
        "    return sum(xs)\n```"
    )


@pytest.fixture
def one_loaded_cpu(request):
    """Pin this thread (so every sandbox it starts) and BURNERS busy processes to one CPU, then undo it. The
    test's parameter, if any: (how many, whether in this process's session so they slow the host's own waking)."""
    count, load_the_host = getattr(request, "param", (BURNERS, False))
    before = os.sched_getaffinity(0)
    cpu = min(before)
    # Each in its own session, as a sandbox is (bwrap --new-session): with the kernel's autogroup scheduling a
    # session shares a CPU with other sessions, not with their processes.
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=not load_the_host)
        for _ in range(count)
    ]
    try:
        for burner in burners:
            os.sched_setaffinity(burner.pid, {cpu})
        os.sched_setaffinity(0, {cpu})
        time.sleep(0.2)
        yield
    finally:
        os.sched_setaffinity(0, before)
        for burner in burners:
            burner.kill()
            burner.wait()


def test_the_kernel_counts_waits_per_task():
    assert own_time.runqueue_wait_s(os.getpid()) >= 0.0
    dead = subprocess.Popen(["true"])
    dead.wait()
    assert own_time.runqueue_wait_s(dead.pid) is None and own_time.process_stat(dead.pid) is None


@pytest.mark.parametrize(
    "program, solo",
    [
        ("import time; time.sleep(0.4)", True),
        ("import threading, time; threading.Thread(target=time.sleep, args=(0.4,)).start(); time.sleep(0.4)", False),
        ("import os, time\nif os.fork() == 0: time.sleep(0.4)\nelse: time.sleep(0.4)", False),
        (
            "import subprocess, sys, time\n"
            "subprocess.run([sys.executable, '-c', 'import time\\nwhile time.process_time() < 0.05: pass'])\n"
            "time.sleep(0.4)",
            False,
        ),
    ],
    ids=["one thread", "a thread", "a fork", "a finished child"],
)
def test_time_is_given_back_only_to_a_program_running_alone(program, solo):
    init = subprocess.Popen(["/usr/bin/timeout", "--foreground", "0", sys.executable, "-c", program])
    tree = own_time._Tree(init.pid)
    try:
        deadline = time.monotonic() + 0.3
        while time.monotonic() < deadline:
            tree.sample()
            time.sleep(0.02)
    finally:
        init.wait()
    assert tree.main_pid is not None and tree.solo is solo


@pytest.mark.usefixtures("needs_sandbox", "one_loaded_cpu")
def test_a_computing_program_is_not_stopped_by_the_load():
    result = run_sandboxed_sync(
        sandbox.python_argv("/sandbox/main.py"),
        files={"/sandbox/main.py": COMPUTE.format(cpu=0.4).encode()},
        limits=SandboxLimits(wall_s=1.0, cpu_s=5),
    )
    assert (result.timed_out, result.stdout) == (False, b"done\n"), result.flags
    assert result.elapsed_s > 1.0 and result.waited_s > 0.3  # a wall-clock limit would have stopped it


@pytest.mark.usefixtures("needs_sandbox", "one_loaded_cpu")
def test_a_sleeping_program_still_times_out_on_time():
    started = time.monotonic()
    result = run_sandboxed_sync(
        sandbox.python_argv("/sandbox/main.py"),
        files={"/sandbox/main.py": b"import time\ntime.sleep(60)\n"},
        limits=SandboxLimits(wall_s=1.0),
    )
    assert result.timed_out and not result.starved and result.flags == ["timeout after 1 s"]
    assert time.monotonic() - started < 4.0


@pytest.mark.parametrize("one_loaded_cpu", [(3, True)], indirect=True, ids=["the host loaded"])
@pytest.mark.usefixtures("needs_sandbox", "one_loaded_cpu")
def test_a_program_that_only_computes_meets_its_time_limit_not_the_kernels():
    """With cpu_s == wall_s both limits fall due together for a loop: the kernel's, exact, once won the race
    against a host that woke late (the full suite, the host sharing its CPU with another worker's training:
    "[exit status 137]" instead of "[killed: time limit of 5 s]" in test_tool_parity.py). The kernel's limit
    now sits a second later; here the host's process shares its CPU with three busy ones."""
    result = run_sandboxed_sync(
        sandbox.python_argv("/sandbox/main.py"),
        files={"/sandbox/main.py": b"while True: pass\n"},
        limits=SandboxLimits(wall_s=1.0, cpu_s=1),
    )
    assert (result.timed_out, result.returncode, result.flags) == (True, None, ["timeout after 1 s"])
    assert sandbox.cpu_rlimit(SandboxLimits(wall_s=1.0, cpu_s=1)) == 2
    assert sandbox.cpu_rlimit(SandboxLimits(wall_s=3.0, cpu_s=1)) == 1


@pytest.mark.usefixtures("needs_sandbox", "one_loaded_cpu")
def test_a_program_that_starts_a_thread_is_back_on_the_wall_clock():
    program = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
    result = run_sandboxed_sync(
        sandbox.python_argv("/sandbox/main.py"),
        files={"/sandbox/main.py": (program + COMPUTE.format(cpu=0.4)).encode()},
        limits=SandboxLimits(wall_s=1.0, cpu_s=5),
    )
    assert result.timed_out and result.stdout == b"", result.stdout


@pytest.mark.usefixtures("needs_sandbox", "one_loaded_cpu")
def test_code_verdicts_do_not_change_with_the_load():
    limits = SandboxLimits(wall_s=1.0, cpu_s=5)
    right = grade_code_sync(_busy_for(0.1), SUM, limits)  # 0.3 s of CPU and two starts: ~2.5 s of wall clock here
    assert (right.passed, right.total) == (3, 3), right.explanation
    sleeping = grade_code_sync("```python\nimport time\ndef total(xs):\n    time.sleep(60)\n```", SUM, limits)
    assert sleeping.passed == 0 and "limits hit: timeout" in sleeping.explanation


@pytest.mark.usefixtures("needs_sandbox", "one_loaded_cpu")
def test_a_starved_run_is_a_sandbox_error_never_a_verdict(monkeypatch):
    monkeypatch.setattr(own_time, "STARVED_FACTOR", 1.0)  # the hard stop at the limit: any wait given back starves
    limits = SandboxLimits(wall_s=0.8, cpu_s=5)
    with pytest.raises(SandboxError, match="host was overloaded"):
        grade_code_sync(_busy_for(0.2), SUM, limits)
    io_tests = {"io": [{"input": "1\n", "output": "done\n"}]}
    with pytest.raises(SandboxError, match="host was overloaded"):
        asyncio.run(grade_code(f"```python\n{COMPUTE.format(cpu=0.6)}```", io_tests, limits))
