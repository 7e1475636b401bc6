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
