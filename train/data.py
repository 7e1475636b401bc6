"""Training rows from the shared problem sources, with the prompt the evals use.

A math row is ``{"prompt": chat messages, "answer": reference, "id": problem id}``; TRL passes
``answer`` to the reward functions as a keyword argument (``rewards.correctness(completions, answer)``).
A code row has ``tests`` (the JSON test spec) instead: ``rewards.code_tests(completions, tests)``.
"""

from __future__ import annotations

from datasets import Dataset

from evals.code_data import CodeProblem, load_code_problems
from evals.math_data import MathProblem, load_problems
from rewards import build_messages
from train.config import ScriptArguments


def arithmetic_settings(args: ScriptArguments) -> dict:
    """The config's ``arithmetic_*`` keys as ``load_problems``/``math_verified`` arguments (operations as a list)."""
    return {
        "operations": list(args.arithmetic_operations),
        "min_value": args.arithmetic_min_value,
        "max_value": args.arithmetic_max_value,
        "steps": args.arithmetic_steps,
    }


def load_training_problems(args: ScriptArguments) -> list[MathProblem] | list[CodeProblem]:
    if args.dataset == "code":
        return load_code_problems(args.dataset_path, args.dataset_size)
    knobs = arithmetic_settings(args) if args.dataset == "arithmetic" else {}
    return load_problems(
        args.dataset,
        path=args.dataset_path,
        split=args.dataset_split,
        limit=args.dataset_size,
        seed=args.dataset_seed,
        shuffle=args.dataset != "arithmetic",
        **knobs,
    )


def to_dataset(problems: list[MathProblem] | list[CodeProblem], num_shots: int) -> Dataset:
    if problems and isinstance(problems[0], CodeProblem):
        return Dataset.from_list([{"prompt": p.messages(), "tests": p.tests, "id": p.id} for p in problems])
    return Dataset.from_list(
        [{"prompt": build_messages(p.question, num_shots), "answer": p.answer, "id": p.id} for p in problems]
    )
