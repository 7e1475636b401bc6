"""#53's done-when, as docs/inspect-tasks.md tells a user: the page's task file (its own dataset, a system_message and a
prompt_template, its own strict scorer), written as the page gives it to a directory outside the checkout, trains one
CPU step through the page's ``train/grpo.py --inspect_task`` command; its rollout log's rewards equal the task's
scorer re-run on the logged completions sample by sample (the page's ``inspect score`` command); the held-out eval
during training ran the task (its own chain and scorer) on the held-out ids, through Inspect, on the policy. One
real run (module-scoped), then the page's two Inspect commands through the real command line: ``inspect eval`` of the
task on the checkpoint (exit 0, a successful log, scored samples) and ``inspect score``.

Slow and ci, the whole module (CI's slow phase runs it, the run once): a real training run of its own, which the
default suite's 12-minute budget on the slower (AVX2) CPU kind has no room for; the default suite checks the bridge
without a model (tests/inspect_tasks/: prompts, rewards against a real inspect eval, parity, re-scoring, the
pre-flight) and trains on CPU through the same trainer in tests/integration/test_train_run.py."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess

import pytest
from inspect_ai import score as inspect_score
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.scorer import value_to_float
from inspect_ai.util import registry_create

from tests.helpers import BIN, CPU_CONFIG, REPO
from train.artifacts import curve
from train.grpo import cli

pytestmark = [pytest.mark.slow, pytest.mark.ci]

PAGE = REPO / "docs" / "inspect-tasks.md"
HOME = "~/my-task"  # where the page puts the task file
RUN = "runs/marbles"
TINY = ["--max_steps", "1", "--save_steps", "1", "--per_device_train_batch_size", "4", "--num_generations", "2"]
TINY += ["--max_completion_length", "24", "--temperature", "1.0", "--eval_strategy", "steps", "--eval_steps", "1"]
TINY += ["--eval_max_tokens", "16", "--log_replay_batches", "false"]


def page_module() -> str:
    """The page's task file: its python block that defines the task."""
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)
    (module,) = [b for b in blocks if "def marbles" in b]
    return module


def page_commands() -> dict[str, list[str]]:
    """The page's commands by program, from its block that trains the task: python, inspect eval, inspect score."""
    blocks = re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)
    (block,) = [b for b in blocks if HOME in b and "train/grpo.py" in b]
    commands = {}
    for line in block.splitlines():
        argv = shlex.split(line)
        commands[" ".join(argv[:2]) if argv[0] == "inspect" else argv[0]] = argv
    return commands


def page_start_line() -> str:
    (line,) = re.findall(r"^\[verigrpo\] inspect task .*$", PAGE.read_text(), flags=re.M)
    return line


def placed(argv: list[str], home, run) -> list[str]:
    return [w.replace(HOME, str(home)).replace(RUN, str(run)) for w in argv]


@pytest.fixture(scope="module")
def trained(tmp_path_factory, cpu_model):
    """The page's task file outside the checkout, trained one step by the page's command (in this process, from the
    repository root, as the page runs it): (home, run dir, what it printed, exit code)."""
    home = tmp_path_factory.mktemp("my-task")
    assert REPO not in home.parents
    (home / "marbles.py").write_text(page_module())
    run = tmp_path_factory.mktemp("runs") / "marbles"
    argv = placed(page_commands()["python"], home, run)
    assert argv[:2] == ["python", "train/grpo.py"] and CPU_CONFIG.endswith(argv[argv.index("--config") + 1])
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(printed):
            status = cli([*argv[2:], *TINY])
    finally:
        os.chdir(cwd)
    return home, run, printed.getvalue(), status


def rollout_log(run):
    (path,) = sorted((run / "rollouts").glob("*.eval"))
    return path


def test_the_page_task_trains_one_step(trained):
    home, run, printed, status = trained
    assert status == 0, printed[-3000:]
    (line,) = [ln for ln in printed.splitlines() if ln.startswith("[verigrpo] inspect task ")]
    assert line.replace(str(home), HOME) == page_start_line()
    state = json.loads((run / "checkpoint-1" / "trainer_state.json").read_text())
    (step,) = [e for e in state["log_history"] if "grad_norm" in e]
    assert 0.0 <= step["rewards/last_line_answer/mean"] <= 1.0 and step["inspect_errors/last_line_answer"] == 0.0


def test_run_json_records_the_split_the_page_evaluates(trained):
    home, run, _, _ = trained
    task = json.loads((run / "run.json").read_text())["inspect_task"]
    page_ids = page_commands()["inspect eval"][-1].split(",")
    assert task["held_out_ids"] == page_ids and len(task["train_ids"]) == 12
    assert not set(task["train_ids"]) & set(page_ids)
    assert task["spec"] == f"{home}/marbles.py@marbles" and task["solvers"] == [
        "system_message",
        "prompt_template",
        "generate",
    ]


def test_the_run_curve_draws_the_tasks_reward_and_held_out_eval(trained):
    """The row is made at run time; scripts/plot_run.py, another process, reads its lines from run.json."""
    _, run, _, _ = trained
    lines, headlines = curve.recorded_row(run)
    assert lines == (("rewards/last_line_answer/mean", "last_line_answer", "-"),)
    assert headlines == (("eval_last_line_answer/accuracy", "held-out last_line_answer (accuracy)"),)
    history = curve.load_history(run)
    ((label, steps, _, problems),) = curve.held_out_points(history, headlines)
    assert (steps, problems) == ([1], 4)
    assert curve.plot(run).is_file()


def test_the_held_out_eval_ran_the_task_on_the_held_out_ids(trained):
    _, run, _, _ = trained
    log = read_eval_log(str(run / "evals" / "held-out-step000001.eval"))
    assert log.status == "success" and [s.name for s in log.eval.scorers] == ["last_line_answer"]
    assert sorted(str(s.id) for s in log.samples) == sorted(page_commands()["inspect eval"][-1].split(","))
    first = log.samples[0].messages
    assert first[0].role == "system" and first[0].text == "You count marbles."  # the task's own chain ran
    assert first[1].text.endswith("End with the line ANSWER: <number>.")


def test_the_rollout_rewards_are_the_tasks_scorer_re_run_sample_by_sample(trained):
    """The page's ``inspect score`` (its scorer, read from the rollout log's own record) on the logged completions."""
    home, run, _, _ = trained
    log = read_eval_log(str(rollout_log(run)))
    (scorer,) = log.eval.metadata["inspect_task"]["scorers"]
    page = page_commands()["inspect score"]
    assert placed(page[page.index("--scorer") : page.index("--scorer") + 2], home, run) == scorer[
        "inspect_score"
    ].split(" ")
    rescorer = registry_create("scorer", "last_line_answer")  # registered by the page's file, loaded by the run
    again = inspect_score(log, rescorer, action="append", display="none")
    to_float = value_to_float()
    assert len(again.samples) == 4  # 2 prompts x 2 completions
    for sample in again.samples:
        assert sample.scores["train_last_line_answer"].value == to_float(sample.scores["last_line_answer"].value)


def test_the_pages_inspect_commands_on_the_command_line(trained, tmp_path):
    """``inspect eval`` of the task on the checkpoint exits 0 with a successful log and scored samples (Inspect exits
    0 even when a task errored: the log says); ``inspect score`` of the rollout log gives back the training rewards."""
    home, run, _, _ = trained
    env = dict(os.environ)
    evaluated = [str(BIN / "inspect"), *placed(page_commands()["inspect eval"], home, run)[1:]]
    evaluated += ["--max-tokens", "16", "--log-dir", str(tmp_path / "logs"), "--display", "plain"]
    result = subprocess.run(evaluated, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    (info,) = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and log.results.completed_samples == 4
    assert all("last_line_answer" in s.scores for s in log.samples)
    page = placed(page_commands()["inspect score"], home, run)
    page[2] = str(rollout_log(run))
    output = tmp_path / "rescored.eval"
    page[page.index("--output-file") + 1] = str(output)
    result = subprocess.run([str(BIN / "inspect"), *page[1:]], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    to_float = value_to_float()
    for sample in read_eval_log(str(output)).samples:
        assert sample.scores["train_last_line_answer"].value == to_float(sample.scores["last_line_answer"].value)
