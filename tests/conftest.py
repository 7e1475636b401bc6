"""Shared test fixtures: offline mockllm models for Inspect runs, the sandbox rule (skip where bubblewrap
cannot isolate, fail in CI; no sandbox process may outlive a test), and a generous verifier deadline for verdict tests."""

import contextlib
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# the Hub is never reached from a test (models and data come from the repository)
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture
def mock_output():
    from inspect_ai.model import ModelOutput, ModelUsage

    def make(text: str) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", text)
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    return make


@pytest.fixture
def mock_model(mock_output):
    """A mockllm model answering each sample from ``answers[sample target]`` (order-independent)."""
    from inspect_ai.model import get_model

    def make(reply_for_target: dict[str, str], default: str = "I don't know."):
        def respond(messages, tools, tool_choice, config):
            question = messages[-1].text
            return mock_output(reply_for_target.get(question, default))

        return get_model("mockllm/model", custom_outputs=respond)

    return make


def _become_subreaper() -> None:
    """Orphans of this test process's descendants are re-parented to it, not to the host's pid 1, so a
    sandbox process that escaped its bwrap still counts as this run's (PR_SET_CHILD_SUBREAPER)."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _process_table() -> dict[int, tuple[int, int | None, str, str]]:
    """pid -> (parent pid, real uid, state, name) of every process on the machine."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue  # gone meanwhile
        uid = int(fields["Uid"].split()[0]) if "Uid" in fields else None
        table[int(entry.name)] = (int(fields["PPid"]), uid, fields["State"].strip(), fields["Name"].strip())
    return table


def _in_another_pid_namespace(pid: int) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") != os.readlink("/proc/self/ns/pid")
    except OSError:
        return False


def sandbox_processes(root: int | None = None) -> list[str]:
    """Sandbox processes (bwrap and everything inside) that descend from ``root`` (this process): must be
    none after any run. Only this run's: other test runs and other bwrap users on the machine are not
    descendants, while orphans of this run's are (it is a child subreaper, see ``needs_sandbox``).

    Zombies count (a process left for the host's pid 1 to reap is the bug); those re-parented to this
    process are reaped once reported, so one leak fails one test, not every later one.
    """
    from rewards.sandbox import SANDBOX_UID

    root = os.getpid() if root is None else root
    table = _process_table()
    left = []
    for pid, (parent, uid, state, name) in table.items():
        ancestor, hops = parent, 0
        while ancestor not in (root, 0, 1) and ancestor in table and hops < 1000:
            ancestor, hops = table[ancestor][0], hops + 1
        if pid == root or ancestor != root:
            continue
        sandboxed = uid == SANDBOX_UID if os.geteuid() == 0 else (name == "bwrap" or _in_another_pid_namespace(pid))
        if sandboxed:
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()[:120]
            except OSError:
                command = b"?"
            left.append(f"{pid} {name} ({state}): {command!r}")
            if parent == os.getpid() and state.startswith("Z"):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
    return left


@pytest.fixture
def needs_sandbox():
    """Skip where bubblewrap cannot isolate, except in CI (VERIGRPO_REQUIRE_SANDBOX=1), where that fails."""
    from rewards.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        if os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"sandbox unavailable in CI: {problem}")
        pytest.skip(f"sandbox unavailable: {problem}")
    _become_subreaper()
    yield
    assert sandbox_processes() == [], "a sandboxed process outlived its run"


SANDBOX_DOCTESTS = {"rewards.code.code_rewards.code_tests"}  # doctests that run real sandboxes


def pytest_collection_modifyitems(config, items):
    """Sandbox doctests follow the ``needs_sandbox`` rule: skip where bwrap cannot run, fail in CI."""
    hits = [item for item in items if item.name in SANDBOX_DOCTESTS]
    if not hits or os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
        return
    from rewards.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        for item in hits:
            item.add_marker(pytest.mark.skip(reason=f"sandbox unavailable: {problem}"))


@pytest.fixture(scope="module")
def generous_verifier_deadline():
    """Verdict tests: the wall-clock deadline only turns a verdict into VerifierOverloaded on a busy
    machine (tests/test_verifier_load.py holds that bound under load); verdicts do not depend on it.
    Use with ``pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")``."""
    from rewards.math import worker_pool

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker_pool, "DEADLINE_S", 60.0)
        worker_pool.warm_up()  # the pool's first start is not what these tests time
        yield
