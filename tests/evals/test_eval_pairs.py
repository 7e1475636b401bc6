"""evals/log_stats/eval_pairs.py: per-problem outcomes read back from real Inspect logs (mockllm evals of the math task)."""

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log

from evals.log_stats.eval_pairs import UnpairedLogs, compare_logs, outcomes
from evals.math_task import math_verified
from tests.helpers.mock_models import answering_model


def _eval(task, model, log_dir):
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success"
    return log


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory):
    """The same 6 problems graded twice: 'before' gets problems 0-1 right, 'after' gets 1-4 right. Made once, read by
    every test (those that change a log write a changed copy)."""
    logs = tmp_path_factory.mktemp("two-logs")
    task = math_verified(limit=6)
    samples = list(task.dataset)
    question = [s.input[-1].text for s in samples]
    right = [f"ANSWER: {s.target}" for s in samples]
    before = _eval(task, answering_model({question[0]: right[0], question[1]: right[1]}), logs / "before")
    after = _eval(task, answering_model({q: r for q, r in zip(question[1:5], right[1:5])}), logs / "after")
    return before, after, samples


def test_outcomes_are_the_scorers_grades(two_logs):
    before, _, samples = two_logs
    got = outcomes(before.location)
    assert got == {(s.id, 1): i < 2 for i, s in enumerate(samples)}


def test_compare_logs_pairs_problem_by_problem(two_logs):
    before, after, _ = two_logs
    result = compare_logs(before.location, after.location)
    # problem 0: lost; problem 1: both; 2-4: gained; 5: neither
    assert (result.table.both, result.table.only_after, result.table.only_before, result.table.neither) == (1, 3, 1, 1)
    assert (result.before, result.after) == (pytest.approx(2 / 6), pytest.approx(4 / 6))
    metrics = {r.name: r.metrics["accuracy"].value for r in after.results.scores if "accuracy" in r.metrics}
    assert result.after == pytest.approx(metrics["correct"])  # the log's own headline accuracy
    assert result.low < result.difference < result.high


def test_logs_of_different_problems_do_not_pair(tmp_path, mock_model, two_logs):
    before, _, _ = two_logs
    other = _eval(math_verified(limit=6, seed=1), mock_model({}), tmp_path / "other")
    with pytest.raises(UnpairedLogs, match="different problems"):
        compare_logs(before.location, other.location)


def test_logs_of_different_verifiers_do_not_pair(tmp_path, two_logs):
    before, after, _ = two_logs
    changed = read_eval_log(after.location)
    changed.eval.metadata = {**changed.eval.metadata, "verifier": {"verifier_fingerprint": "something-else"}}
    path = tmp_path / "changed.eval"
    write_eval_log(changed, str(path))
    with pytest.raises(UnpairedLogs, match="different verifiers"):
        compare_logs(before.location, str(path))


def test_an_unfinished_log_is_refused(tmp_path, two_logs):
    before, after, _ = two_logs
    broken = read_eval_log(after.location)
    broken.status = "error"
    path = tmp_path / "broken.eval"
    write_eval_log(broken, str(path))
    with pytest.raises(UnpairedLogs, match="did not finish"):
        compare_logs(before.location, str(path))
