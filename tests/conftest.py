"""Shared test helpers: offline Inspect runs with mockllm outputs that never touch the network."""

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# mockllm counts tokens with tiktoken (a download) unless usage is set; Inspect writes traces under
# XDG_DATA_HOME. Keep both inside the test run.
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


def sandbox_processes() -> list[str]:
    """Host processes still running (or zombie) as the sandbox user: must be none after any run."""
    from rewards.sandbox import SANDBOX_UID

    if os.geteuid() != 0:
        return []  # sandboxes run as our own uid then; there is no separate user to count
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "")
            if uid_line.split()[1:2] == [str(SANDBOX_UID)]:
                left.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()[:120]!r}")
    return left


@pytest.fixture
def needs_sandbox():
    """Skip where bubblewrap cannot isolate, except in CI (VERIGRPO_REQUIRE_SANDBOX=1), where that fails."""
    from rewards.sandbox import _probe

    problem = _probe()
    if problem:
        if os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"sandbox unavailable in CI: {problem}")
        pytest.skip(f"sandbox unavailable: {problem}")
    yield
    assert sandbox_processes() == [], "a sandboxed process outlived its run"


SANDBOX_DOCTESTS = {"rewards.code_rewards.code_tests"}  # doctests that run real sandboxes


def pytest_collection_modifyitems(config, items):
    """Sandbox doctests follow the ``needs_sandbox`` rule: skip where bwrap cannot run, fail in CI."""
    hits = [item for item in items if item.name in SANDBOX_DOCTESTS]
    if not hits or os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
        return
    from rewards.sandbox import _probe

    problem = _probe()
    if problem:
        for item in hits:
            item.add_marker(pytest.mark.skip(reason=f"sandbox unavailable: {problem}"))
