"""A domain from outside the package, as docs/adding-a-domain.md tells a user: the page's module, written as the page
gives it to a directory outside the checkout, registered through ``VERIGRPO_DOMAINS`` with that directory on
``PYTHONPATH``, and the page's own commands run through the real command lines (``inspect eval`` here; a one-step
``train/grpo.py`` run, slow). Nothing in the package names the domain."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log

from tests.helpers import BIN, CPU_CONFIG, REPO

PAGE = REPO / "docs" / "adding-a-domain.md"
TINY_EVAL = ["--limit", "1", "-T", "max_tokens=8", "--display", "plain"]
TINY_TRAIN = ["--max_steps", "1", "--save_steps", "1", "--per_device_train_batch_size", "2", "--num_generations", "2"]
TINY_TRAIN += ["--max_completion_length", "8", "--dataset_size", "2", "--log_rollouts", "false"]


def page_module() -> str:
    (module,) = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)
    return module


def page_commands() -> dict[str, list[str]]:
    """The page's two commands (``python`` and ``inspect``), each without its VAR=value prefix."""
    (block,) = re.findall(r"^```bash\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)
    commands = {}
    for line in block.splitlines():
        argv = shlex.split(line)
        env = {}
        while argv and re.match(r"^[A-Z_]+=", argv[0]):
            key, _, value = argv.pop(0).partition("=")
            env[key] = value
        commands[argv[0]] = argv
        assert env["VERIGRPO_DOMAINS"] == "parity_domain:PARITY", line
    return commands


@pytest.fixture
def outside(tmp_path_factory):
    """The page's module in a directory outside the checkout, and the environment that registers it."""
    home = tmp_path_factory.mktemp("my-domain")
    assert REPO not in home.parents
    (home / "parity_domain.py").write_text(page_module())
    env = dict(os.environ, VERIGRPO_DOMAINS="parity_domain:PARITY", PYTHONPATH=str(home))
    return home, env


def test_the_page_gives_the_module_and_both_commands():
    commands = page_commands()
    assert commands["python"][:2] == ["python", "train/grpo.py"] and "parity_grade" in commands["python"]
    assert commands["inspect"][:3] == ["inspect", "eval", "evals/domain_task.py@domain_verified"]
    assert "do_sample=false" in commands["inspect"]
    assert "class ParityProblem" in page_module()


def test_inspect_eval_scores_the_outside_domain(outside, tmp_path):
    _, env = outside
    argv = page_commands()["inspect"]
    cmd = [str(BIN / "inspect"), *argv[1:], *TINY_EVAL, "--log-dir", str(tmp_path / "logs")]
    result = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    (info,) = list_eval_logs(str(tmp_path / "logs"))
    log = read_eval_log(info)
    assert log.status == "success" and log.results.completed_samples == 1
    assert [s.name for s in log.eval.scorers] == ["domain_scorer"]
    (sample,) = log.samples
    assert sample.id == "parity-100" and sample.scores["domain_scorer"].value in (0.0, 1.0)


@pytest.mark.slow
def test_train_grpo_trains_the_outside_domain(outside, tmp_path):
    _, env = outside
    argv = page_commands()["python"]
    assert argv[argv.index("--config") + 1] == "configs/cpu-smollm2.yaml" and CPU_CONFIG.endswith(argv[3])
    cmd = [os.path.join(BIN, "python"), *argv[1:], *TINY_TRAIN, "--output_dir", str(tmp_path / "run")]
    result = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "run" / "checkpoint-1").is_dir()
    assert "rewards/parity_grade/mean" in (tmp_path / "run" / "checkpoint-1" / "trainer_state.json").read_text()
