"""Rollout logs as training writes them, for the writer's and the audit's tests: one generation batch of
8 completions (2 groups of 4) with the rewards training paid, and a torn file as a killed write leaves it."""

import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rewards import build_messages, correctness, format_reward
from rewards.reward_log import whys_from_columns
from tests.helpers import BIN
from train.artifacts.rollout_log import RolloutRecorder, rollouts_from_batch

PROMPT = [{"role": "system", "content": "sys"}, {"role": "user", "content": "What is 2+3?"}]
G = 4


def batch(step: int, completions: list[str], rewards_: dict[str, list], answer: str = "5", prompt_id: str = "p"):
    n = len(completions)
    return rollouts_from_batch(
        ids=[f"{prompt_id}{i // G}" for i in range(n)],
        answers=[answer] * n,
        prompts=[PROMPT] * n,
        completions=[[{"role": "assistant", "content": c}] for c in completions],
        rewards=rewards_,
        advantages=[0.5 - i % 2 for i in range(n)],
        lengths=[10 + i for i in range(n)],
        max_completion_length=64,
        terminated=[i % 3 != 0 for i in range(n)],
        num_generations=G,
        step=step,
    )


# 8 completions = 2 groups; training paid 5 of them, 3 of those with \boxed{}


# 8 completions = 2 groups; training paid 5 of them, 3 of those with \boxed{}
COMPLETIONS = [
    "ANSWER: 5",
    "\\boxed{5}",
    "ANSWER: 4",
    "\\boxed{5}",
    "so \\boxed{5}",
    "ANSWER: 5",
    "no idea",
    "ANSWER: 6",
]
PAID = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
FORMAT = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def tear(path, keep: float = 0.5):
    """What a SIGKILL during a flush leaves: the first part of a zip, no central directory."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


# a graded run, as the trainer records it with the reward functions' log_extra columns (the viewer tests)
PROBLEMS = [("What is 3 + 4?", "7"), ("A jar holds 9 shells. 5 are taken out. How many are left?", "4")]
GRADED_COMPLETIONS = [
    "3 + 4 = 7\nANSWER: 7",
    "ANSWER: 8",
    "It is seven.",
    "\\boxed{7}",
    "9 - 5 = 4\nANSWER: 4",
    "ANSWER: 4\nANSWER: 5",
    "Four shells are left over.\nANSWER: 14",
    "so 4",
]
START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def graded_batch(step, problems=PROBLEMS, completions=GRADED_COMPLETIONS, *, seconds=7.5, prompt_ids=None):
    """One generation batch scored by the real reward functions, their log_extra columns read back as the
    trainer reads them (rewards.reward_log), with a batch span: what RecordingGRPOTrainer hands the recorder."""
    n = len(completions)
    prompts = [build_messages(question, 1) for question, _ in problems for _ in range(G)]
    answers = [answer for _, answer in problems for _ in range(G)]
    table = {}
    values = {
        "correctness": correctness(completions, answers, log_extra=table.__setitem__),
        "format": format_reward(completions, log_extra=table.__setitem__),
    }
    started = START + timedelta(minutes=step)
    return rollouts_from_batch(
        ids=prompt_ids or [f"arith-{i // G}" for i in range(n)],
        answers=answers,
        prompts=prompts,
        completions=completions,
        rewards=values,
        advantages=[0.5 - i % 2 for i in range(n)],
        lengths=[12 + i for i in range(n)],
        max_completion_length=48,
        terminated=[i != n - 1 for i in range(n)],
        num_generations=G,
        step=step,
        whys={
            "correctness": whys_from_columns("correctness", table, n),
            "format": whys_from_columns("format_reward", table, n),
        },
        prompt_lengths=[120 + i for i in range(n)],
        started_at=started,
        completed_at=started + timedelta(seconds=seconds),
        generation={"temperature": 0.7, "top_p": 1.0},
    )


METADATA = {"policy_model": "/abs/models/smollm2-135m-instruct", "output_dir": "runs/demo-1", "num_generations": G}


def write_run(directory: Path, batches, every_steps: int = 2) -> list[Path]:
    recorder = RolloutRecorder(directory / "rollouts", every_steps=every_steps, num_generations=G, metadata=METADATA)
    for batch in batches:
        recorder.add(batch)
    recorder.flush()
    return recorder.written


def rescore_with_cli(log: Path, out: Path, scorer: str = "verigrpo/math_verifier") -> subprocess.CompletedProcess:
    """``inspect score LOG --scorer SCORER --action append --model none/none`` into ``out``, as a user re-scores
    a rollout log: model-free, run from ``out``'s folder (outside the repository)."""
    cmd = [BIN / "inspect", "score", str(log), "--scorer", scorer, "--action", "append"]
    return subprocess.run(
        cmd + ["--output-file", str(out), "--model", "none/none"],
        cwd=out.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
