"""Ctrl-C on a real run, as a terminal sends it (SIGINT to the whole process group: the trainer and its verifier
workers), then what the user does next: the same command again (refused in one line), the resume command the message
printed (continues from the named checkpoint), and a start over with ``overwrite_output_dir`` (the old run's
checkpoints and rollout logs gone, the new run's alone). The handler's messages are checked cheaply in the default
suite (tests/train/config/test_command_line_mistakes.py); this is the real signal, slow (three real runs), run by CI."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import CPU_CONFIG, REPO

TINY = ["--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "16"]
TINY += ["--dataset_size", "16", "--save_steps", "1"]
ENV = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


def run(argv: list[str], timeout: float = 3600) -> subprocess.CompletedProcess:  # a loaded machine: 10+ min a run
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=ENV)


@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.usefixtures("cpu_model")
def test_ctrl_c_then_rerun_resume_and_overwrite(tmp_path):
    out = tmp_path / "run"
    command = ["python", "train/grpo.py", "--config", CPU_CONFIG, "--output_dir", str(out), "--max_steps", "3", *TINY]
    process = subprocess.Popen(
        [sys.executable, *command[1:]], cwd=REPO, env=ENV, text=True, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    first_log = out / "rollouts" / "rollouts-step000001-000001.eval"  # flushed once checkpoint-1 is saved
    deadline = time.monotonic() + 3600
    while not first_log.is_file() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()[1][-3000:]
    os.killpg(process.pid, signal.SIGINT)  # a terminal's Ctrl-C: every process of the foreground group
    _, stderr = process.communicate(timeout=600)

    assert process.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]
    last = max(
        (p for p in out.glob("checkpoint-*") if (p / "trainer_state.json").is_file()), key=lambda p: p.stat().st_mtime
    )
    message, resume_line = stderr.rstrip().splitlines()[-2:]
    assert (
        message.startswith("error: interrupted (Ctrl-C) during step ")
        and f"last saved checkpoint is {last} " in message
    )
    resume = shlex.split(resume_line)
    assert resume == [*command, "--resume_from_checkpoint", str(last)]

    again = run([sys.executable, *command[1:]])  # the same command again: refused before the model loads
    assert again.returncode == 2 and again.stderr.splitlines()[-1].startswith(f"error: output_dir {out} already holds")
    assert "--resume_from_checkpoint true" in again.stderr and "--overwrite_output_dir true" in again.stderr

    resumed = run([sys.executable, *resume[1:]])  # the printed command, as printed
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"(resumed from {last.name})" in resumed.stdout and (out / "checkpoint-3" / "trainer_state.json").is_file()

    over = run([sys.executable, *command[1:6], "--max_steps", "1", *TINY, "--overwrite_output_dir", "true"])
    assert over.returncode == 0, over.stderr[-3000:]
    assert (
        "[verigrpo] overwrite_output_dir: removed the previous run's 3 checkpoints (checkpoint-1 to checkpoint-3), "
        in over.stdout
    )
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1"]
    assert sorted(p.name for p in (out / "rollouts").glob("*.eval")) == ["rollouts-step000001-000001.eval"]
