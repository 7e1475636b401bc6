"""Tool-calling completions as TRL's tool loop hands them to the rewards and the recorder: turns run through the
training tool (python_tool/trl_environment.py, real sandbox runs), scored by the real reward functions (the tool tests, the rollout
log and the viewer test)."""

import asyncio
from datetime import timedelta

from python_tool.session import ToolLimits
from python_tool.trl_environment import PythonToolEnvironment
from rewards import build_messages, correctness, format_reward
from rewards.reward_log import whys_from_columns
from tests.helpers.rollouts import START
from train.artifacts.rollout_log import rollouts_from_batch

LIMITS = ToolLimits(timeout_s=10.0, max_calls=2)  # 10 s: no call here is meant to time out, even on a loaded box
QUESTION, ANSWER = "What is 17 * 23?", "391"
# one group: a tool call then the policy's own answer; the tool printing the answer line; no tool; a hedge
TOOL_TRANSCRIPTS = [
    [("", "print(17 * 23)"), ("The product is 391.\nANSWER: 391",)],
    [("Let me check.", "print('ANSWER: 391')"), ("The tool said it.",)],
    [("17 * 23 = 391\nANSWER: 391",)],
    [("ANSWER: 381", "print(17 * 23)"), ("ANSWER: 391",)],
]


def tool_completion(turns, limits: ToolLimits = LIMITS) -> list[dict]:
    """``(text,)``: the policy says ``text``; ``(text, code)``: it also calls the tool, whose result follows."""
    environment = PythonToolEnvironment(limits)
    environment.reset(prompt=[], answer=ANSWER)
    messages = []
    for turn in turns:
        if len(turn) == 1:
            messages.append({"role": "assistant", "content": turn[0]})
            continue
        call = {"type": "function", "function": {"name": "python", "arguments": {"code": turn[1]}}}
        messages.append({"role": "assistant", "content": turn[0], "tool_calls": [call]})
        messages.append({"role": "tool", "name": "python", "content": asyncio.run(environment.python(code=turn[1]))})
    return messages


def tool_batch(step: int = 1):
    """One group of tool rollouts scored and recorded as RecordingGRPOTrainer does it."""
    completions = [tool_completion(turns) for turns in TOOL_TRANSCRIPTS]
    n = len(completions)
    table = {}
    values = {
        "correctness": correctness(completions, [ANSWER] * n, log_extra=table.__setitem__),
        "format": format_reward(completions, log_extra=table.__setitem__),
    }
    return rollouts_from_batch(
        ids=["tool-0"] * n,
        answers=[ANSWER] * n,
        prompts=[build_messages(QUESTION, 1, tools=True)] * n,
        completions=completions,
        rewards=values,
        advantages=[0.5, -0.5, 0.5, -0.5],
        lengths=[40] * n,
        max_completion_length=96,
        terminated=[True] * n,
        num_generations=n,
        step=step,
        whys={
            "correctness": whys_from_columns("correctness", table, n),
            "format": whys_from_columns("format_reward", table, n),
        },
        prompt_lengths=[450] * n,
        started_at=START,
        completed_at=START + timedelta(seconds=9),
        generation={"temperature": 0.7, "top_p": 1.0},
    )
