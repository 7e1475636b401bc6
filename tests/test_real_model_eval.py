"""The Inspect task on the real small model through the hf/ provider: slow, run with `make test-slow`."""

import pytest
from conftest import REPO
from inspect_ai import eval as inspect_eval

from evals.math_task import math_verified

MODEL = REPO / "models" / "smollm2-135m-instruct"


def run(task, log_dir):
    (log,) = inspect_eval(
        task,
        model=f"hf/{MODEL}",
        model_args={"do_sample": False, "device": "cpu"},
        log_dir=str(log_dir),
        max_connections=6,
        display="none",
    )
    assert log.status == "success", log.error
    return log


@pytest.mark.slow
def test_hf_provider_scores_the_small_model(tmp_path):
    if not (MODEL / "config.json").is_file():
        pytest.skip("run `make setup` (scripts/prepare_cpu_model.py) first")
    task = math_verified(limit=6, operations="add,sub", max_value=10, max_tokens=64)
    log = run(task, tmp_path)
    scores = [s.scores["math_verifier"] for s in log.samples]
    assert len(scores) == 6 and all(s.value["correct"] in ("C", "I") for s in scores)
    assert all(s.metadata["reason"] in ("correct", "mismatch", "no_answer", "hedged", "unparseable") for s in scores)
    again = run(task, tmp_path)  # greedy: the same checkpoint writes the same completions twice
    assert {s.id: s.output.completion for s in again.samples} == {s.id: s.output.completion for s in log.samples}
