"""Rollout logs as training writes them, for the writer's and the audit's tests: one generation batch of
8 completions (2 groups of 4) with the rewards training paid, and a torn file as a killed write leaves it."""

from train.artifacts.rollout_log import rollouts_from_batch

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
