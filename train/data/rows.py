"""Training rows from the shared problem sources, with the prompt the evals use, and the start-up line on a data file.

A math row is ``{"prompt": chat messages, "answer": reference, "id": problem id}``; TRL passes
``answer`` to the reward functions as a keyword argument (``rewards.correctness(completions, answer)``).
A code row has ``tests`` (the JSON test spec) instead: ``rewards.code_tests(completions, tests)``.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from problems.code_data import CodeProblem
from problems.domains import Domain, domain_of_problems
from problems.file_rows import UnreadableRows, skipped_rows
from problems.math_data import DatasetError, MathProblem
from rewards.math.answer_format import DEFAULT_ANSWER_FORMAT
from train.config import ScriptArguments

SKIP_KEY_HINT = "Fix these rows, or set skip_bad_rows: true to train without them (run.json lists the rows left out)."

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


def load_training_problems(args: ScriptArguments, domain: Domain) -> list[MathProblem] | list[CodeProblem]:
    """The config's training problems, loaded by ``domain``, the dataset's (a run's, resolved once:
    train/config/resolved.py; else ``problems.domains.domain_of_source``)."""
    knobs = arithmetic_settings(args) if args.dataset == "arithmetic" else {}
    if getattr(args, "skip_bad_rows", False):  # only when set: a registered domain's loader need not know the key
        knobs["skip_bad_rows"] = True
    try:
        return domain.load(
            args.dataset,
            path=args.dataset_path,
            split=args.dataset_split,
            limit=args.dataset_size,
            seed=args.dataset_seed,
            shuffle=args.dataset != "arithmetic",
            **knobs,
        )
    except UnreadableRows as exc:  # every bad row at once, with the fix as this config names it
        raise exc.with_hint(SKIP_KEY_HINT) from None


def data_line(args: ScriptArguments, problems: list) -> str | None:
    """The start-up line on what a data file gave: its problems, the shapes its rows were read in (problems/math_data.py
    ROW_SHAPES) and the rows ``skip_bad_rows`` left out. None for a source without a file."""
    if not args.dataset_path:
        return None
    shapes = Counter(getattr(p, "metadata", {}).get("row_shape") for p in problems)
    shapes.pop(None, None)
    read_as = f" ({', '.join(f'{n:,} {shape}-shaped' for shape, n in shapes.most_common())})" if shapes else ""
    line = f"data: {len(problems):,} problems from {args.dataset_path}{read_as}"
    skipped = skipped_rows(problems)
    if skipped:
        rows = "row" if len(skipped) == 1 else "rows"
        line += f"; {len(skipped):,} unreadable {rows} skipped (skip_bad_rows: true), listed in run.json"
    return line


def to_dataset(
    problems: list[MathProblem] | list[CodeProblem],
    num_shots: int,
    tools: bool = False,
    domain: Domain | None = None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> Dataset:
    """``tools``: the prompt that offers the python tool (the domain's ``tool_row``); ``domain``: the problems'
    (None: found from their type); ``answer_format``: the final-answer line the prompt teaches (a domain that lists
    ``answer_formats``)."""
    domain = domain or domain_of_problems(problems)
    row = domain.tool_row if tools else domain.training_row  # problems/domains.py: prompt builder, reward's column
    if row is None:
        raise DatasetError(f"the {domain.name} domain has no prompt that offers a tool")
    settings = {"answer_format": answer_format} if domain.answer_formats else {}
    from datasets import Dataset  # 1.5 s: the held-out eval, the demo and --help read this module's other functions

    return Dataset.from_list([row(p, num_shots, **settings) for p in problems])
