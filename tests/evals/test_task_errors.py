"""``inspect eval`` with a task argument that cannot work is one message and a non-zero exit, before the model loads
(#52). Inspect builds the model first and then calls the ``@task`` function (``inspect_ai/_eval/eval.py``:
``eval_init``, then ``eval_resolve_tasks``); an exception there used to end the command in a 140-280-line traceback
(exit 1) after the weights had loaded. Now the tasks raise ``evals/task_errors.py``'s ``TaskArgumentError``, which
Inspect's command line prints alone, and the ``verigrpo/`` provider loads its weights only when it first generates.
Each command-line case runs the real command in a subprocess (the exception hook and exit status are the command
line's); the ``verigrpo/`` case runs in this process by default (the subprocess imports torch, transformers and TRL
again: ~10 CPU-s) and as a command in the slow set CI runs."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.helpers import BIN, MODEL, REPO
from tests.helpers.unloaded_run import unloaded_run

MAX_LINES = 30  # Inspect's banner, the message (a list of bad rows, wrapped at 80 columns), a warning or two


def inspect_eval(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "inspect"), "eval", *args, "--display", "plain"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def one_message(done: subprocess.CompletedProcess) -> str:
    """The command's whole output, checked to be short, traceback-free, and a failure."""
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Traceback" not in output and len(output.splitlines()) < MAX_LINES, output
    return " ".join(output.split())  # the message as one line: rich wraps it at the terminal's width


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["evals/math_task.py@math_verified", "-T", "dataset=jsonl", "-T", "path=no/such.jsonl"],
            "error: math_verified: dataset file no/such.jsonl does not exist (resolved to",
        ),
        (
            ["evals/domain_task.py@domain_verified", "-T", "domain=parity"],
            "error: domain_verified: domain 'parity' is not registered: choose from",
        ),
    ],
    ids=["missing path", "unregistered domain"],
)
def test_a_task_argument_that_cannot_work_is_one_message(tmp_path, args, message):
    done = inspect_eval(*args, "--model", "mockllm/model", "--log-dir", str(tmp_path))
    assert message in one_message(done)
    assert not list(tmp_path.iterdir())  # no eval started, so no log


BAD_ROWS = [  # (row, its reason)
    (
        {"question": "q1", "answer": "1, 2, \\ldots, n"},
        "the verifier cannot read the answer '1, 2, \\ldots, n': approximate",
    ),
    ({"question": "q2", "answer": "4"}, None),
    ({"question": "q3"}, "missing field(s) ['answer']"),
    ('{"question": ', "malformed JSON"),
]


@pytest.fixture
def bad_rows_and_a_run(tmp_path):
    """(a file of 4 rows, 3 bad; a ``verigrpo/`` run without weights: loading them would fail, not print a message)."""
    if not (MODEL / "config.json").is_file():
        pytest.skip("run `make setup` (scripts/prepare_cpu_model.py) first")
    data = tmp_path / "mine.jsonl"
    data.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row, _ in BAD_ROWS))
    return data, unloaded_run(tmp_path / "run")


def assert_every_bad_row(text: str, data) -> None:
    assert f"{data}: 3 of 4 rows cannot be read:" in text
    for line, (_, reason) in enumerate(BAD_ROWS, start=1):
        if reason:
            assert f"{data}:{line}: {reason}" in text


@pytest.mark.parametrize(
    ("task", "args"),
    [
        ("evals/math_task.py@math_verified", {"dataset": "jsonl"}),
        ("evals/code_task.py@code_verified", {}),  # code rows: the same reader, every bad row at once
    ],
)
def test_every_bad_row_before_the_checkpoint_loads(bad_rows_and_a_run, tmp_path, task, args):
    """In this process, through Inspect's eval: the task's error leaves before the provider loads any weight."""
    from inspect_ai import eval as inspect_eval

    from evals.task_errors import TaskArgumentError
    from tests.evals.test_checkpoint_model import counted_loads

    data, run = bad_rows_and_a_run
    with pytest.MonkeyPatch.context() as patch:
        loads = counted_loads(patch)
        with pytest.raises(TaskArgumentError) as raised:
            inspect_eval(task, task_args={**args, "path": str(data)}, model=f"verigrpo/{run}", log_dir=str(tmp_path))
    if "math" in task:
        assert_every_bad_row(str(raised.value), data)
        assert raised.value.message.startswith(f"error: math_verified: {data}: 3 of 4 rows")
    else:
        assert "4 of 4 rows cannot be read" in str(raised.value)  # not code rows at all: each one is named
    assert loads == []


@pytest.mark.slow
@pytest.mark.ci
def test_every_bad_row_before_the_checkpoint_loads_on_the_command_line(bad_rows_and_a_run, tmp_path):
    data, run = bad_rows_and_a_run
    done = inspect_eval(
        "evals/math_task.py@math_verified", "-T", "dataset=jsonl", "-T", f"path={data}",
        "--model", f"verigrpo/{run}", "--log-dir", str(tmp_path / "logs"),
    )  # fmt: skip
    text = one_message(done)
    assert f"error: math_verified: {data}: 3 of 4 rows cannot be read:" in text
    assert_every_bad_row(text, data)
    assert "-T skip_bad_rows=true for inspect eval" in text
    assert done.stderr.startswith(f"verigrpo: {run} as trained")  # the provider was built, its weights never loaded
    assert "Loading weights" not in done.stderr
