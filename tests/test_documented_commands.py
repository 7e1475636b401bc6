"""The documented ``inspect eval`` commands run as written and fail loudly.

tests/test_readme.py checks every documented command against the files, tasks and options it names; this file runs
them. A command is run exactly as the page writes it, plus ``--limit 1`` (and a short ``max_tokens``) so it costs one
sample, and must exit 0 with that sample completed; the same command made to fail (the ``hf/`` provider without
``-M do_sample=false``, which raises on the task's temperature 0) must exit non-zero: Inspect's ``inspect eval`` exits 0
when a task errors, so the project's hook ``verigrpo/exit_status`` (evals/inspect_plugin) makes it exit 1.

Commands on a model this machine has (``hf/models/...``) run, slow (the one on the docs' example domain in the
default suite, in tests/integration/test_outside_domain.py, which registers it); the failing one runs in the default suite.
Commands on a training run (``verigrpo/runs/...``), the Hub or a GPU server cannot run here: tests/test_readme.py checks
them, and the checkpoint provider's tests run the same command on a real run.
"""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone

import pytest
from inspect_ai.log import EvalLog, EvalResults, EvalSpec, list_eval_logs, read_eval_log
from inspect_ai.log._log import EvalConfig, EvalDataset

from tests.helpers import BIN, REPO
from tests.test_readme import COMMANDS, Command
from verigrpo import failed_task

LOCAL_MODEL = "hf/models/"
FIRST = "evals/math_task.py@math_verified"  # the command docs/evaluation.md gives for a base model: the default suite's
# the docs' domain is the user's own: tests/integration/test_outside_domain.py registers it and runs this command
NEEDS_A_REGISTERED_DOMAIN = "domain=parity"


def eval_commands() -> list[Command]:
    return [c for c in COMMANDS if c.argv[:2] == ["inspect", "eval"] and len(c.argv) > 2]


def runnable_here(command: Command) -> bool:
    return any(w.startswith(LOCAL_MODEL) for w in command.argv) and NEEDS_A_REGISTERED_DOMAIN not in command.argv


RUNNABLE = [c for c in eval_commands() if runnable_here(c)]


def run_eval(argv: list[str], log_dir) -> subprocess.CompletedProcess:
    """``argv`` (a documented ``inspect eval`` command) with one sample of a few tokens."""
    tiny = ["--limit", "1", "-T", "max_tokens=8", "--display", "plain", "--log-dir", str(log_dir)]
    return subprocess.run(
        [str(BIN / "inspect"), *argv[1:], *tiny], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def only_log(log_dir) -> EvalLog:
    (info,) = list_eval_logs(str(log_dir))
    return read_eval_log(info)


def test_the_docs_give_runnable_eval_commands():
    assert any(FIRST in c.argv for c in RUNNABLE), [str(c) for c in RUNNABLE]


def test_every_hf_eval_command_decodes_greedily():
    """Inspect's ``hf/`` provider samples unless ``-M do_sample=false`` (and raises on the tasks' temperature 0)."""
    for command in eval_commands():
        if any(w.startswith("hf/") for w in command.argv) and "--temperature" not in command.argv:
            assert "do_sample=false" in command.argv, f"{command}: add -M do_sample=false"


def documented_first() -> Command:
    return next(c for c in RUNNABLE if FIRST in c.argv)


@pytest.mark.slow  # the default suite runs docs/adding-a-domain.md's eval as written (tests/integration/test_outside_domain.py)
def test_a_documented_eval_runs_as_written(tmp_path):
    command = documented_first()
    result = run_eval(command.argv, tmp_path)
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    log = only_log(tmp_path)
    assert log.status == "success" and log.results.completed_samples == 1


def test_an_eval_that_completes_no_sample_exits_non_zero(tmp_path):
    """A documented eval without ``-M do_sample=false`` (as docs/adding-a-domain.md wrote it): every sample raises."""
    argv = [w for w in documented_first().argv if w not in ("-M", "do_sample=false")]
    result = run_eval(argv, tmp_path)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "verigrpo: math_verified ended with status 'error', 0 sample(s) completed" in result.stderr
    assert only_log(tmp_path).status == "error"


@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in RUNNABLE if FIRST not in c.argv], ids=str)
def test_every_runnable_documented_eval_runs_as_written(command, tmp_path, needs_sandbox):
    result = run_eval(command.argv, tmp_path)
    assert result.returncode == 0, f"{command}\n{result.stderr[-3000:]}"
    assert only_log(tmp_path).results.completed_samples == 1


def header(task_file: str, status: str, completed: int | None) -> EvalLog:
    spec = EvalSpec(
        created=datetime.now(timezone.utc).isoformat(),
        task="t",
        task_file=task_file,
        dataset=EvalDataset(),
        model="mockllm/model",
        config=EvalConfig(),
    )
    results = None if completed is None else EvalResults(total_samples=2, completed_samples=completed)
    return EvalLog(status=status, eval=spec, results=results)


@pytest.mark.parametrize(
    ("task_file", "status", "completed", "failed"),
    [
        ("evals/math_task.py", "success", 2, False),
        ("evals/math_task.py", "success", 0, True),  # --limit past an empty split: nothing was evaluated
        ("evals/domain_task.py", "error", 0, True),
        ("evals/code_task.py", "error", None, True),  # failed before any result
        ("evals/math_task.py", "cancelled", 1, True),
        (str(REPO / "evals" / "math_task.py"), "error", 0, True),  # written as an absolute path
        ("/elsewhere/their_task.py", "error", 0, False),  # not ours: Inspect's own exit status stands
        ("", "error", 0, False),
    ],
)
def test_which_logs_fail_the_command(task_file, status, completed, failed, monkeypatch):
    monkeypatch.chdir(REPO)
    assert (failed_task(header(task_file, status, completed)) is not None) == failed
