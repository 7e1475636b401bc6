"""Tool calls that attack the sandbox earn nothing and break nothing: each runs through the training adapter
(python_tool/trl_environment.py; the Inspect adapter runs the same session, tests/python_tool/test_tool_parity.py), the attack's aim is
not met, the result stays within the limits, and the next call of a fresh rollout still works."""

import asyncio
import os

import pytest

from python_tool.session import ToolLimits
from python_tool.trl_environment import PythonToolEnvironment, tool_metrics

pytestmark = pytest.mark.usefixtures("needs_sandbox")

# 5 s: a loaded box starts python slowly; calls meant to finish must not time out
LIMITS = ToolLimits(timeout_s=5.0, memory_mb=256, output_chars=400, max_calls=3)
SECRET = "reference-4817"


def call(environment, code: str) -> str:
    return asyncio.run(environment.python(code=code))


def fresh(**row) -> PythonToolEnvironment:
    environment = PythonToolEnvironment(LIMITS)
    environment.reset(prompt=[{"role": "user", "content": "q"}], answer=SECRET, id="p-1", **row)
    return environment


ATTACKS = {
    "network_outside": (
        "import socket\ns = socket.create_connection(('1.1.1.1', 53), timeout=1)\nprint('CONNECTED')",
        "CONNECTED",
    ),
    "network_loopback": (
        "import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\nprint('BOUND')",
        "BOUND",
    ),
    "read_host_files": (
        "import os\nfor p in ('/etc/passwd', '/root', '/home', '/work/../etc/hostname'):\n"
        "    try:\n        print(p, os.listdir(p) if os.path.isdir(p) else open(p).read())\n"
        "    except OSError as e:\n        print('DENIED', type(e).__name__)",
        "root:",
    ),
    "reference_from_environment": (
        "import os\nprint(dict(os.environ))\nprint(open('/proc/1/environ', 'rb').read())\n"
        "print(open('/proc/self/cmdline', 'rb').read())",
        SECRET,
    ),
    "fork_bomb": ("import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass", "FORKED"),
    "memory_hog": ("x = bytearray(1 << 30)\nprint('ALLOCATED')", "ALLOCATED"),
    "output_flood": ("import sys\nwhile True:\n    sys.stdout.write('A' * 65536)", "A" * 401),
    "daemon_outlives_call": (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(30)\nprint('PARENT DONE')",
        "never-matches",
    ),
}


@pytest.mark.parametrize(("code", "aim"), ATTACKS.values(), ids=ATTACKS.keys())
def test_an_attack_misses_its_aim_and_the_next_rollout_still_works(code, aim, monkeypatch):
    monkeypatch.setenv("VERIGRPO_TEST_SECRET", SECRET)  # the trainer's own environment is not the sandbox's
    environment = fresh()
    result = call(environment, code)
    assert aim not in result and SECRET not in result
    assert len(result) <= LIMITS.output_chars + 120  # the cut notice and the status line
    environment.reset(prompt=[], answer="1")
    assert call(environment, "print(1 + 1)") == "2\n"


def test_files_stay_with_their_rollout():
    """A file one call writes is there for the same rollout's next call and for no other rollout."""
    writer = fresh()
    call(writer, "open('answer.txt', 'w').write('ANSWER: 42')\nopen('/tmp/t.txt', 'w').write('t')")
    assert call(writer, "print(open('answer.txt').read())") == "ANSWER: 42\n"
    assert "FileNotFoundError" in call(writer, "print(open('/tmp/t.txt').read())")  # /tmp is one call's
    other = fresh()
    assert "FileNotFoundError" in call(other, "print(open('answer.txt').read())")
    directory = writer.session.workdir
    writer.reset(prompt=[], answer="1")  # the next batch: the old directory is gone
    assert not os.path.exists(directory)
    assert "FileNotFoundError" in call(writer, "print(open('answer.txt').read())")


def test_the_call_limit_runs_nothing_more_and_is_counted():
    environment = fresh()
    results = [call(environment, f"print({i})") for i in range(LIMITS.max_calls + 2)]
    assert results[: LIMITS.max_calls] == [f"{i}\n" for i in range(LIMITS.max_calls)]
    assert all(r.startswith("[call limit: 3 calls") for r in results[LIMITS.max_calls :])
    metrics = tool_metrics([environment, fresh()])
    assert metrics["tools/calls_per_rollout"] == 1.5 and metrics["tools/refused_per_rollout"] == 1.0
    assert metrics["tools/errors_per_rollout"] == 0.0


def test_a_failing_sandbox_stops_the_run_instead_of_talking_to_the_policy(monkeypatch):
    from rewards import sandbox

    environment = fresh()

    async def broken(*args, **kwargs):
        raise sandbox.SandboxError("bubblewrap did not start the sandbox (test)")

    monkeypatch.setattr(sandbox, "run_sandboxed", broken)
    with pytest.raises(sandbox.SandboxError):
        call(environment, "print(1)")
    with pytest.raises(sandbox.SandboxError, match="did not start"):
        tool_metrics([environment])
