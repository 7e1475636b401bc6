"""Training rows from the shared problem sources, with the prompt the evals use.

A math row is ``{"prompt": chat messages, "answer": reference, "id": problem id}``; TRL passes
``answer`` to the reward functions as a keyword argument (``rewards.correctness(completions, answer)``).
A code row has ``tests`` (the JSON test spec) instead: ``rewards.code_tests(completions, tests)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from problems.code_data import CodeProblem
from problems.domains import Domain, domain_of_problems, domain_of_source
from problems.math_data import DatasetError, MathProblem
from train.config import ScriptArguments

if TYPE_CHECKING:
    from datasets import Dataset


def arithmetic_settings(args: ScriptArguments) -> dict:
    """The config's ``arithmetic_*`` keys as ``load_problems``/``math_verified`` arguments (operations as a list)."""
    return {
        "operations": list(args.arithmetic_operations),
        "min_value": args.arithmetic_min_value,
        "max_value": args.arithmetic_max_value,
        "steps": args.arithmetic_steps,
    }


def held_out_task_args(
    args: ScriptArguments, problems: int | None, max_tokens: int, domain: Domain | None = None
) -> dict:
    """The arguments of the domain's eval task (``problems/domains.py``: ``evals/math_task.py@math_verified`` for
    math) for the problems this config does not train on: arithmetic's 'test' split of the same generator
    (same operations, range and seed), GSM8K's test split, or ``eval_dataset_path``; the same worked examples
    and think setting (``-T`` values as the CLI takes them). DatasetError when the dataset has none. ``domain``: the
    run's (train/config/resolved.py), None: the dataset's."""
    domain = domain or domain_of_source(args.dataset)
    if domain.held_out is None:
        raise DatasetError(f"dataset {args.dataset!r} ({domain.name}) has no eval task to run held-out evals with")
    return domain.held_out(args, problems, max_tokens)


def load_training_problems(
    args: ScriptArguments, domain: Domain | None = None
) -> list[MathProblem] | list[CodeProblem]:
    """The config's training problems, loaded by ``domain`` (the run's, resolved once: train/config/resolved.py;
    None: the dataset's)."""
    knobs = arithmetic_settings(args) if args.dataset == "arithmetic" else {}
    return (domain or domain_of_source(args.dataset)).load(
        args.dataset,
        path=args.dataset_path,
        split=args.dataset_split,
        limit=args.dataset_size,
        seed=args.dataset_seed,
        shuffle=args.dataset != "arithmetic",
        **knobs,
    )


def to_dataset(
    problems: list[MathProblem] | list[CodeProblem], num_shots: int, tools: bool = False, domain: Domain | None = None
) -> Dataset:
    """``tools``: the prompt that offers the python tool (the domain's ``tool_row``); ``domain``: the problems'
    (None: found from their type)."""
    domain = domain or domain_of_problems(problems)
    row = domain.tool_row if tools else domain.training_row  # problems/domains.py: prompt builder, reward's column
    if row is None:
        raise DatasetError(f"the {domain.name} domain has no prompt that offers a tool")
    from datasets import Dataset  # 1.5 s: the held-out eval, the demo and --help read this module's other functions

    return Dataset.from_list([row(p, num_shots) for p in problems])
