"""The exploit probe before training on an Inspect task (train/config/exploit_preflight.py ``task_preflight``) and in
``scripts/probe_exploits.py --inspect_task``: a task whose scorer pays a cheat is refused before the model loads (exit
2, the cheat, the sample and the score named, and the key that overrides it); a strict scorer passes; the project's own
scorer is probed by the key that judges.

The task file is written outside the checkout, as a user's would be."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import train.grpo
import train.run
from tests.helpers import CPU_CONFIG, REPO
from train.config import parse_config, resolve_run
from train.config.exploit_preflight import exploit_preflight
from train.data.rows import load_training_problems

TASKS = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes, pattern
from inspect_ai.solver import generate, prompt_template, system_message


def _task(scorer):
    samples = [
        Sample(input=f"A jar holds {red} red and {blue} blue marbles. How many marbles?", target=str(red + blue),
               id=f"jar-{red}-{blue}")
        for red in range(1, 6)
        for blue in range(1, 6)
    ]
    chain = [system_message("You count marbles."), prompt_template("{prompt}\\nEnd with ANSWER: <number>."), generate()]
    return Task(dataset=samples, solver=chain, scorer=scorer)


@task
def marbles_includes():
    return _task(includes())


@task
def marbles_strict():
    return _task(pattern(r"ANSWER: (\\d+)\\s*\\Z"))
"""


@pytest.fixture(scope="module")
def task_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("my-task") / "marbles.py"
    path.write_text(TASKS)
    return path


@pytest.fixture
def fake_model(tmp_path):
    """A directory that passes the checkpoint check (config.json) but holds no model: nothing may load it."""
    path = tmp_path / "fake-model"
    path.mkdir()
    (path / "config.json").write_text("{}")
    return str(path)


def test_a_task_whose_scorer_pays_a_cheat_is_refused_before_the_model_loads(task_file, fake_model, tmp_path):
    run = tmp_path / "run"
    command = [
        sys.executable,
        "train/grpo.py",
        "--config",
        CPU_CONFIG,
        "--inspect_task",
        f"{task_file}@marbles_includes",
    ]
    done = subprocess.run(
        [*command, "--model_name_or_path", fake_model, "--output_dir", str(run)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith("error: exploit probe: the task's scorer pays completions that need no solving. ")
    found = re.search(
        r"The reward 'includes' paid '([^']+)' \(([^)]+)\) on sample (jar-\d-\d) \(target '(\d+)'\)", error
    )
    assert found, error
    assert re.search(r"scored 1(, and 1 again with the target swapped to '[^']+')?: paid for", error)
    assert re.search(r"\d+ cheat\(s\) were paid on \d+ of 16 sampled training samples \(rewards: includes\)", error)
    assert f"python scripts/probe_exploits.py --inspect_task {task_file}@marbles_includes" in error
    assert error.endswith("or set exploit_probe: false to train anyway.")
    assert not (run / "run.json").exists()  # nothing of a run was started


class PastThePreflight(Exception):
    """Raised where the run goes on after the pre-flight (the held-out evals, then the model)."""


def test_exploit_probe_false_trains_on_it_anyway(task_file, fake_model, monkeypatch):
    def past(*args, **kwargs):
        raise PastThePreflight

    monkeypatch.setattr(train.run, "held_out_eval", past)
    args = ["--config", CPU_CONFIG, "--inspect_task", f"{task_file}@marbles_includes", "--exploit_probe", "false"]
    script_args, training_args, model_args = parse_config([*args, "--model_name_or_path", fake_model])
    with pytest.raises(PastThePreflight):
        train.grpo.build_trainer(script_args, training_args, model_args)


@pytest.mark.parametrize(
    ("spec", "args", "rewards"),
    [
        ("{file}@marbles_strict", [], "pattern"),
        # the project's scorer: its format key pays any one answer by design (as the native format reward)
        ("evals/math_task.py@math_verified", ["--inspect_task_args", "limit=20"], "math_verifier.correct"),
    ],
)
def test_a_strict_scorer_passes(task_file, spec, args, rewards, capsys):
    argv = ["--config", CPU_CONFIG, "--inspect_task", spec.format(file=task_file), *args]
    plan = resolve_run(*parse_config(argv))
    exploit_preflight(load_training_problems(plan.script_args, plan.domain), plan)
    out = capsys.readouterr().out
    assert re.search(r"\[verigrpo\] exploit probe: 0 of \d+ cheats paid on 16 sampled task samples", out), out
    assert f"(rewards: {rewards})" in out


def _probe_exploits():
    import importlib.util

    spec = importlib.util.spec_from_file_location("probe_exploits", REPO / "scripts" / "probe_exploits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("task", "code", "says"),
    [
        ("marbles_includes", 1, r"cheat\(s\) paid on \d+ of 4 samples"),
        ("marbles_strict", 0, r"0 cheats paid \(\d+ plays"),
        ("missing", 2, r"^error: inspect_task '.*@missing' does not load: .*Task named 'missing' not found"),
    ],
)
def test_the_probe_command_on_a_task(task_file, task, code, says, capsys):
    assert _probe_exploits().main(["--inspect_task", f"{task_file}@{task}", "--limit", "4"]) == code
    captured = capsys.readouterr()
    assert re.search(says, captured.out if code != 2 else captured.err, re.M), captured


def test_the_probe_command_takes_task_arguments_and_judges_as_training_does(capsys):
    argv = ["--inspect_task", "evals/math_task.py@math_verified", "-T", "limit=3", "-T", "max_value=5"]
    assert _probe_exploits().main(argv) == 0
    assert "(3 samples; rewards: math_verifier.correct)" in capsys.readouterr().out
