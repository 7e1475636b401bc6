"""A real CPU run of configs/cpu-smollm2-tools.yaml (tiny, seeded: the config's ``seed``) and the tool calls its
rollout log shows the policy making: the integration test (both generation paths) and the browser test share them.

The config trains from the warm-started model (scripts/prepare_tool_model.py), which writes a well-formed call in
most first turns, so a group of completions holds an executed call; the run is seeded, so which ones is fixed."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import REPO

TOOLS_CONFIG = str(REPO / "configs" / "cpu-smollm2-tools.yaml")
TOOL_MODEL = REPO / "models" / "smollm2-135m-instruct-tools"
# 1 step, 1 prompt x 4 completions; 96 tokens (the config's): a call (~27), its result (~20), the answer (~13);
# dataset seed 1: problems other than the warm start's (the first of the seed-0 training split)
TINY = [
    "--max_steps", "1", "--save_steps", "1", "--per_device_train_batch_size", "4", "--num_generations", "4",
    "--max_completion_length", "96", "--dataset_size", "4", "--dataset_seed", "1",
]  # fmt: skip


def prepare_tool_model() -> Path:
    """The warm-started CPU tool model, made as `make setup` makes it when missing (about a minute or two)."""
    if not (TOOL_MODEL / "config.json").is_file():
        base = REPO / "models" / "smollm2-135m-instruct"
        if not (base / "config.json").is_file():
            subprocess.run([sys.executable, REPO / "scripts" / "prepare_cpu_model.py", "--out", base], check=True)
        script = REPO / "scripts" / "prepare_tool_model.py"
        subprocess.run([sys.executable, script, "--base", base, "--out", TOOL_MODEL], check=True)
    return TOOL_MODEL


def warm_start_problem_ids() -> set[str]:
    """The problems the tool model was fine-tuned on (its verigrpo_warm_start.json)."""
    import json

    return set(json.loads((TOOL_MODEL / "verigrpo_warm_start.json").read_text())["problems"])


def train_tool_run(out: Path, *extra: str) -> dict:
    """One tiny GRPO step of the tool config into ``out`` (``extra``: CLI overrides, e.g. ``--use_vllm true``)."""
    from train.config import parse_config
    from train.grpo import main

    return main(*parse_config(["--config", TOOLS_CONFIG, "--output_dir", str(out), *TINY, *extra]))


@dataclass(frozen=True)
class ExecutedCall:
    sample_id: str
    epoch: int
    code: str
    output: str  # what the log's tool message says the tool returned
    answer: str  # the policy's next turn (its own words after the result)


def executed_calls(log, limits) -> list[ExecutedCall]:
    """Every ``python`` call in the policy's own turns (after the problem's user message) whose tool message holds
    what the tool really returns for that code: run again here, in a fresh session with the run's ``limits``."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    from python_tool.trl_environment import PythonToolEnvironment

    calls = []
    for sample in log.samples:
        messages = sample.messages
        last_user = max(i for i, m in enumerate(messages) if m.role == "user")
        turns = messages[last_user + 1 :]
        for index, message in enumerate(turns):
            if not isinstance(message, ChatMessageAssistant) or not message.tool_calls:
                continue
            for call in message.tool_calls:
                result = next(
                    (m for m in turns[index + 1 :] if isinstance(m, ChatMessageTool) and m.tool_call_id == call.id),
                    None,
                )
                code = call.arguments.get("code")
                if call.function != "python" or result is None or not isinstance(code, str):
                    continue
                environment = PythonToolEnvironment(limits)
                environment.reset()
                if result.text != asyncio.run(environment.python(code=code)):
                    continue
                after = [m.text for m in turns[index + 1 :] if isinstance(m, ChatMessageAssistant)]
                calls.append(ExecutedCall(str(sample.id), sample.epoch, code, result.text, "\n".join(after)))
    return calls
