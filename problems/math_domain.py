"""The built-in math domain: one ``Domain`` row, written the way docs/adding-a-domain.md tells a new domain to be.

Its problems are ``problems.math_data``'s sources; its rewards are ``rewards``' plain functions, named here and
nowhere else (``correctness``, ``format``); its eval task is ``evals/math_task.py@math_verified``. Registered as
every domain is: the entry point ``math = "problems.math_domain:MATH"`` in the ``verigrpo.domains`` group.
"""

from __future__ import annotations

from collections.abc import Callable

from problems.domains import Domain, held_out_file
from problems.math_data import SOURCES, DatasetError, MathProblem, load_problems
from records.rollout_format import train_score_name
from rewards import ANSWER_FORMATS, DEFAULT_ANSWER_FORMAT, bind_think, build_messages, correctness, format_reward

# sources whose problems come in a split training never sees; the others need eval_dataset_path
HELD_OUT_SPLITS = {"arithmetic": "test", "gsm8k": "test"}


def load(source: str, *, path=None, split="train", limit=None, seed=0, shuffle=False, **options) -> list:
    return load_problems(source, path=path, split=split, limit=limit, seed=seed, shuffle=shuffle, **options)


def training_row(problem: MathProblem, num_shots: int, answer_format: str = DEFAULT_ANSWER_FORMAT) -> dict:
    prompt = build_messages(problem.question, num_shots, answer_format=answer_format)
    return {"prompt": prompt, "answer": problem.answer, "id": problem.id}


def tool_row(problem: MathProblem, num_shots: int, answer_format: str = DEFAULT_ANSWER_FORMAT) -> dict:
    return {
        "prompt": build_messages(problem.question, num_shots, tools=True, answer_format=answer_format),
        "answer": problem.answer,
        "id": problem.id,
    }


def with_think(func: Callable, think: str, answer_format: str = DEFAULT_ANSWER_FORMAT) -> Callable:
    """The rewards that read the final answer (``correctness``, ``format``) with the run's ``<think>`` setting and
    answer format frozen in, the settings the eval scorer takes as ``-S think=`` and ``-S answer_format=``; any other
    function as it is."""
    return bind_think(func, think, answer_format) if func in (correctness, format_reward) else func


def held_out(config, problems: int | None, max_tokens: int) -> dict:
    """``math_verified`` arguments: the source's held-out split (arithmetic: the 'test' problems of the same
    generator, operations, range and seed) or ``eval_dataset_path``; the training prompt, think setting and answer
    format."""
    source = config.dataset
    args = {"dataset": source, "limit": problems, "num_shots": config.num_shots, "think": config.think}
    answer_format = getattr(config, "answer_format", DEFAULT_ANSWER_FORMAT)
    if answer_format != DEFAULT_ANSWER_FORMAT:  # -T answer_format=, the prompt training used
        args["answer_format"] = answer_format
    if getattr(config, "skip_bad_rows", False):  # the held-out file's unreadable rows too (listed in each eval's log)
        args["skip_bad_rows"] = True
    split = HELD_OUT_SPLITS.get(source)
    if split is not None and getattr(config, "eval_dataset_path", None) is None:
        if config.dataset_split == split:
            raise DatasetError(
                f"dataset_split is {split!r}, the split held-out evals use: train on 'train', or give the "
                "held-out problems with eval_dataset_path"
            )
        args["split"] = split
    else:
        if source == "arithmetic":
            raise DatasetError("eval_dataset_path: arithmetic's held-out problems are its generated 'test' split")
        args["path"] = held_out_file(config)
    if source == "arithmetic":
        args.update(
            seed=config.dataset_seed,
            operations=",".join(config.arithmetic_operations),  # as `-T operations=...` takes it
            min_value=config.arithmetic_min_value,
            max_value=config.arithmetic_max_value,
            steps=config.arithmetic_steps,
        )
    if getattr(config, "tools", None):  # the tool training offered, with the run's limits (the tool's turn loop)
        args.update(
            tools=True,
            tool_timeout_s=config.tool_timeout_s,
            tool_memory_mb=config.tool_memory_mb,
            tool_output_chars=config.tool_output_chars,
            tool_max_calls=config.tool_max_calls,
        )
    return {**args, "max_tokens": max_tokens}


MATH = Domain(
    name="math",
    sources=SOURCES,
    problem_type=MathProblem,
    load=load,
    training_row=training_row,
    rewards={"correctness": correctness, "format": format_reward},
    with_think=with_think,
    scorer="verigrpo/math_verifier",
    audited={train_score_name("correctness"): "correct"},
    metrics=(
        ("rewards/correctness/mean", "correctness (verifier)", "--"),
        ("rewards/format_reward/mean", "format rate", ":"),
    ),
    worked_examples=True,
    eval_task="evals/math_task.py@math_verified",
    held_out=held_out,
    eval_metric=("eval_correct/accuracy", "held-out accuracy"),
    tool_row=tool_row,
    answer_formats=tuple(ANSWER_FORMATS),
)
