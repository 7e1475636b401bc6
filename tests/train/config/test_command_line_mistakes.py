"""A user's mistakes on the trainer's command line, each one line before any model loads (issue #52): a YAML file with a
tab, a bundled config run from another directory, ``--resume_from_checkpoint true``, re-running a command into the
output_dir of a finished run, and Ctrl-C (what was saved and the exact command that resumes). The real Ctrl-C of a real
run, its resume and an overwrite are tests/integration/test_interrupt.py (slow, CI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import train.run
from tests.helpers import CPU_CONFIG, REPO
from train.config import ConfigError, parse_config, resolve_run
from train.config.output_dir import check_output_dir, clear_previous_run, previous_run
from train.grpo import cli

TAB_CONFIG = "model_name_or_path: models/smollm2-135m-instruct\nmax_steps: 2\n\tlearning_rate: 1.0e-5\n"


def grpo(*argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    script, env = str(REPO / "train" / "grpo.py"), {**os.environ, "PYTHONPATH": str(REPO)}  # this checkout's code
    return subprocess.run(
        [sys.executable, script, *argv], cwd=cwd, capture_output=True, text=True, timeout=600, env=env
    )


# ---- a YAML file with a tab: file, line, column and the fix (was PyYAML's 53-line traceback naming no file) ----------


def test_a_tab_in_the_config_is_one_line_naming_file_line_and_column(tmp_path):
    config = tmp_path / "mine.yaml"
    config.write_text(TAB_CONFIG)
    result = grpo("--config", str(config))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        f"error: {config}:3:1: a tab character, which YAML does not allow here. Replace the tab with spaces."
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "max_steps: 2\nlearning_rate: [1.0e-5\n",
            r"mine.yaml:3:1: not valid YAML: expected ',' or ']'.*at line 2, col",
        ),
        ("max_steps: 2\n  learning_rate: 3\n", r"mine.yaml:2:16: not valid YAML: mapping values are not allowed here"),
    ],
)
def test_other_yaml_errors_are_one_line_too(tmp_path, text, message):
    (tmp_path / "mine.yaml").write_text(text)
    for argv in ([], ["--help"]):  # --help reads the config's values too
        with pytest.raises(ConfigError, match=message) as caught:
            parse_config(["--config", str(tmp_path / "mine.yaml"), *argv])
        assert "\n" not in str(caught.value)


def test_a_tab_in_a_base_names_the_base(tmp_path):
    (tmp_path / "shared.yaml").write_text("lora_r: 8\n\tlora_alpha: 16\n")
    (tmp_path / "mine.yaml").write_text("base: shared.yaml\nmax_steps: 2\n")
    with pytest.raises(ConfigError, match=rf"^{tmp_path / 'shared.yaml'}:2:1: a tab character"):
        parse_config(["--config", str(tmp_path / "mine.yaml")])


# ---- a bundled config from another directory (was "models/... is not a checkpoint directory ... run prepare") --------


def test_a_bundled_config_reads_its_model_from_the_repository_from_any_directory(tmp_path, monkeypatch, cpu_model):
    monkeypatch.chdir(tmp_path)
    script_args, training_args, model_args = parse_config(["--config", CPU_CONFIG])
    assert model_args.model_name_or_path == str(REPO / "models" / "smollm2-135m-instruct")
    assert training_args.output_dir == "runs/cpu-smollm2"  # what the run writes goes where you are
    resolve_run(script_args, training_args, model_args)  # every pre-flight check passes


def test_a_relative_model_path_you_give_says_the_real_cause(tmp_path, monkeypatch, cpu_model):
    """Given on the command line, a relative path is the working directory's: the message names that directory, and
    where the model is."""
    monkeypatch.chdir(tmp_path)
    script_args, training_args, model_args = parse_config(
        ["--config", CPU_CONFIG, "--model_name_or_path", "models/smollm2-135m-instruct"]
    )
    with pytest.raises(ConfigError) as caught:
        resolve_run(script_args, training_args, model_args)
    assert str(caught.value) == (
        "model_name_or_path: models/smollm2-135m-instruct is not a checkpoint directory (no config.json, resolved from "
        f"the working directory: {tmp_path.resolve()}/models/smollm2-135m-instruct). It is in the repository: give "
        f"--model_name_or_path {REPO}/models/smollm2-135m-instruct, or run from {REPO}."
    )


# ---- output_dir: resume_from_checkpoint true / latest, and a re-run into a finished run's directory --------------------


def previous(run: Path, steps=(1, 3), incomplete=(5,)) -> Path:
    """What a run leaves: complete checkpoints (trainer_state.json), an incomplete one (killed while saving), its logs
    and final files; and what the demo keeps beside a run (initial/, eval-logs/), which is not a run's."""
    for step in (*steps, *incomplete):
        (run / f"checkpoint-{step}").mkdir(parents=True)
        if step in steps:
            (run / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    (run / "rollouts").mkdir()
    (run / "rollouts" / "rollouts-step000001-000001.eval").write_text("")
    for name in ("run.json", "adapter_model.safetensors", "README.md"):
        (run / name).write_text("{}")
    return run


@pytest.mark.parametrize("word", ["true", "latest", "True"])
def test_resume_true_is_the_latest_complete_checkpoint(tmp_path, word):
    run = previous(tmp_path / "run")
    _, training_args, _ = parse_config(
        ["--config", CPU_CONFIG, "--output_dir", str(run), "--resume_from_checkpoint", word]
    )
    assert training_args.resume_from_checkpoint == str(run / "checkpoint-3")  # checkpoint-5 has no trainer_state.json
    check_output_dir(SimpleNamespace(overwrite_output_dir=False), training_args)  # resuming into its own directory


def test_resume_true_without_a_checkpoint_and_false(tmp_path):
    message = rf"resume_from_checkpoint: true means the latest checkpoint in output_dir {tmp_path}, and it holds none"
    with pytest.raises(ConfigError, match=message):
        parse_config(["--config", CPU_CONFIG, "--output_dir", str(tmp_path), "--resume_from_checkpoint", "true"])
    _, training_args, _ = parse_config(["--config", CPU_CONFIG, "--resume_from_checkpoint", "false"])
    assert training_args.resume_from_checkpoint is None


def test_rerunning_into_a_previous_run_is_refused_in_one_line(tmp_path, capsys):
    run = previous(tmp_path / "run")
    assert cli(["--config", CPU_CONFIG, "--output_dir", str(run), "--max_steps", "1"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: output_dir {run} already holds a run (3 checkpoints (checkpoint-1 to checkpoint-5), rollouts/, "
        "run.json, 2 saved files): continue it with --resume_from_checkpoint true (from checkpoint-3); start over with "
        "--overwrite_output_dir true (removes that run's checkpoints and logs); or give another --output_dir."
    ]
    script_args, training_args, _ = parse_config(
        ["--config", CPU_CONFIG, "--output_dir", str(run), "--overwrite_output_dir", "true"]
    )
    check_output_dir(script_args, training_args)  # the key lets it start over
    with pytest.raises(ConfigError, match="overwrite_output_dir: true removes .* choose one of them"):
        training_args.resume_from_checkpoint = str(run / "checkpoint-3")
        check_output_dir(script_args, training_args)


def test_overwrite_removes_the_previous_run_and_nothing_else(tmp_path):
    run = previous(tmp_path / "run")
    (run / "notes.txt").write_text("mine")
    (run / "eval-logs").mkdir()
    removed = clear_previous_run(run)
    assert removed[:3] == ["checkpoint-1", "checkpoint-3", "checkpoint-5"]
    assert sorted(p.name for p in run.iterdir()) == ["eval-logs", "notes.txt"]


def test_the_demos_directory_and_an_empty_one_are_no_previous_run(tmp_path):
    (tmp_path / "initial").mkdir()  # scripts/demo.py: the initial policy (its own run.json) and the base evals
    (tmp_path / "initial" / "run.json").write_text("{}")
    (tmp_path / "eval-logs").mkdir()
    (tmp_path / "rollouts").mkdir()  # empty
    assert previous_run(tmp_path) == [] and previous_run(tmp_path / "absent") == []


# ---- Ctrl-C: the last saved checkpoint and the exact resume command (was exit 130 and nothing said) -----------------


@pytest.mark.usefixtures("cpu_model")
def test_ctrl_c_while_the_model_loads_says_so(monkeypatch, capsys, tmp_path):
    def loading(plan):
        raise KeyboardInterrupt

    monkeypatch.setattr(train.run, "trainer_for", loading)
    run = tmp_path / "run"
    try:
        code = cli(["--config", CPU_CONFIG, "--output_dir", str(run)])
    except KeyboardInterrupt:  # would stop the whole test session, not fail this test
        pytest.fail("Ctrl-C escaped train/grpo.py's cli: Python's exit 130, with no word on what was saved")
    assert code == 130
    assert capsys.readouterr().err.splitlines() == [
        "error: interrupted (Ctrl-C) outside a training step, before the first checkpoint: nothing to resume from. "
        "Start over with:",
        f"  python train/grpo.py --config {CPU_CONFIG} --output_dir {run}",
    ]


class InterruptedTrainer:
    """A trainer whose training saves ``saved`` checkpoints, then meets Ctrl-C after ``completed`` steps."""

    def __init__(self, output_dir: Path, saved: tuple[int, ...], completed: int):
        self.output_dir, self.saved = output_dir, saved
        self.state = SimpleNamespace(global_step=0)
        self.callback_handler = SimpleNamespace(callbacks=[])
        self.accelerator = SimpleNamespace(wait_for_everyone=lambda: None)
        self.completed, self.closed = completed, False

    def add_callback(self, callback):
        self.callback_handler.callbacks.append(callback)

    def is_world_process_zero(self):
        return True

    def close_rollout_engine(self):
        self.closed = True

    def train(self, resume_from_checkpoint=None):
        for step in self.saved:
            (self.output_dir / f"checkpoint-{step}").mkdir(parents=True)
            (self.output_dir / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
        self.state.global_step = self.completed
        raise KeyboardInterrupt


def interrupted(monkeypatch, capsys, tmp_path, saved, completed, *extra: str):
    run = tmp_path / "run"
    trainer = InterruptedTrainer(run, saved, completed)
    monkeypatch.setattr(train.run, "trainer_for", lambda plan: (trainer, None, None))
    argv = ["--config", CPU_CONFIG, "--output_dir", str(run), "--save_steps", "2", *extra]
    capsys.readouterr()
    try:
        code = cli(argv)
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped train/grpo.py's cli: Python's exit 130, with no word on what was saved")
    assert trainer.closed  # the rollout engine goes, as after any failure
    return code, capsys.readouterr().err, run


@pytest.mark.usefixtures("cpu_model")
def test_ctrl_c_names_the_last_checkpoint_and_the_resume_command(monkeypatch, capsys, tmp_path):
    code, err, run = interrupted(monkeypatch, capsys, tmp_path, (2, 4), 5, "--overwrite_output_dir", "true")
    assert code == 130
    assert err.splitlines() == [
        f"error: interrupted (Ctrl-C) during step 6 (5 completed). The last saved checkpoint is {run}/checkpoint-4 "
        "(step 4): it and the rollout logs up to it are complete; step 5 is trained again. Resume with:",
        f"  python train/grpo.py --config {CPU_CONFIG} --output_dir {run} --save_steps 2 --resume_from_checkpoint "
        f"{run}/checkpoint-4",
    ]


@pytest.mark.usefixtures("cpu_model")
def test_ctrl_c_before_the_first_checkpoint_says_how_to_start_again(monkeypatch, capsys, tmp_path):
    code, err, run = interrupted(monkeypatch, capsys, tmp_path, (), 1)
    assert code == 130
    assert err.splitlines() == [
        "error: interrupted (Ctrl-C) during step 2 (1 completed), before the first checkpoint (save_steps: 2): nothing "
        "to resume from. Start over with:",
        f"  python train/grpo.py --config {CPU_CONFIG} --output_dir {run} --save_steps 2",
    ]
