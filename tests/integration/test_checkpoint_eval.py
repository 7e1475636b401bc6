"""A trained checkpoint evaluated as trained: the command the demo prints (a subprocess) and the demo's in-process
"4-bit (as trained)" eval write the same completions and grades (slow: ``make test-slow``)."""

import shlex
import subprocess

import pytest

from evals.math_task import math_verified
from evals.providers.checkpoint_eval import checkpoint_model_args, eval_command, run_eval
from problems.domains import domain_of_source
from tests.helpers import CPU_CONFIG, REPO
from tests.helpers.training import length_parity, tiny_run
from train.artifacts.held_out import held_out_task_args
from train.config import parse_config


@pytest.mark.slow
def test_cli_eval_of_a_trained_checkpoint_matches_the_demos_as_trained_eval(tmp_path, monkeypatch, cpu_model):
    """A real 2-step run; the demo's printed command (a subprocess) and the demo's in-process "4-bit (as
    trained)" eval write the same completions and grades, greedy, on the same problems."""
    from problems.math_domain import MATH

    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    run = tmp_path / "run"
    tiny_run(run)

    problems, max_tokens = 4, 32
    config = parse_config(["--config", CPU_CONFIG])[0]
    task_args = held_out_task_args(config, problems, max_tokens, domain_of_source(config.dataset))
    in_process = run_eval(
        math_verified(**task_args), f"verigrpo/{run}", checkpoint_model_args(True), tmp_path / "in-process"
    )

    command = shlex.split(eval_command(run, task_args))  # as printed, run from the repository root
    command += ["--log-dir", str(tmp_path / "cli"), "--display", "none"]
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    from inspect_ai.log import read_eval_log

    (log_file,) = (tmp_path / "cli").glob("*.eval")
    cli = read_eval_log(str(log_file))
    assert cli.status == "success", cli.error  # inspect eval exits 0 even when the model failed to load

    def results(log):
        return {s.id: (s.output.completion, s.scores["math_verifier"].value) for s in log.samples}

    assert len(results(cli)) == problems
    assert results(cli) == results(in_process)
    assert cli.results.scores[0].metrics["accuracy"].value == in_process.results.scores[0].metrics["accuracy"].value
