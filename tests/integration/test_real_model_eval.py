"""The Inspect task on the real small model through the hf/ provider: slow, run with `make test-slow`."""

import pytest
from inspect_ai import eval as inspect_eval

from evals.math_task import math_verified
from tests.helpers import MODEL


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


@pytest.mark.slow
def test_hf_provider_on_the_code_task(tmp_path, needs_sandbox):
    """The small model's real code goes through the sandboxes; greedy decoding makes the grades repeatable
    (measured: fraction 0.255, passed_all 3/28 on the full set at 400 tokens)."""
    if not (MODEL / "config.json").is_file():
        pytest.skip("run `make setup` (scripts/prepare_cpu_model.py) first")
    from evals.code_task import code_verified

    task = code_verified(limit=4, max_tokens=200)
    log = run(task, tmp_path)
    scores = [s.scores["unit_test_scorer"] for s in log.samples]
    assert len(scores) == 4 and all(0.0 <= s.value["fraction"] <= 1.0 for s in scores)
    assert all(s.metadata["reason"] in ("correct", "tests_failed", "no_answer", "too_complex") for s in scores)
    again = run(task, tmp_path)
    assert [s.scores["unit_test_scorer"].value for s in again.samples] == [s.value for s in scores]
