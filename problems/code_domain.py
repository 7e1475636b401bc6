"""The built-in code domain: one ``Domain`` row, written the way docs/adding-a-domain.md tells a new domain to be.

Its problems are ``problems.code_data``'s (the bundled set or a file); its reward is ``rewards``' plain function
``code_tests`` (unit tests in the sandbox), named here and nowhere else; its eval task is
``evals/code_task.py@code_verified``. Registered as every domain is: the entry point
``code = "problems.code_domain:CODE"`` in the ``verigrpo.domains`` group.
"""

from __future__ import annotations

from problems.code_data import CodeProblem, load_code_problems
from problems.domains import Domain, held_out_file
from records.rollout_format import train_score_name
from rewards import code_tests


def load(source: str, *, path=None, limit=None, skip_bad_rows=False, **_ignored) -> list:
    # one bundled set or a file: split, seed and shuffle do not apply
    return load_code_problems(path, limit, skip_bad_rows=skip_bad_rows)


def training_row(problem: CodeProblem, num_shots: int) -> dict:
    return {"prompt": problem.messages(), "tests": problem.tests, "id": problem.id}


def held_out(config, problems: int | None, max_tokens: int) -> dict:
    """``code_verified`` arguments: the problems of ``eval_dataset_path`` (the bundled set is the training set)."""
    return {"path": held_out_file(config), "limit": problems, "max_tokens": max_tokens}


CODE = Domain(
    name="code",
    sources=("code",),
    problem_type=CodeProblem,
    load=load,
    training_row=training_row,
    rewards={"code_tests": code_tests},
    scorer="verigrpo/unit_test_scorer",
    audited={train_score_name("code_tests"): "fraction"},
    metrics=(("rewards/code_tests/mean", "unit tests passed (fraction)", "-."),),
    eval_task="evals/code_task.py@code_verified",
    held_out=held_out,
    eval_metric=("eval_fraction/mean", "held-out unit tests passed (fraction)"),
)
