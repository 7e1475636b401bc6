"""A user's GSM8K- and MATH-shaped file evaluated as training reads it (#52): ``inspect eval
evals/math_task.py@math_verified -T dataset=jsonl -T path=FILE`` scores each row against the reference its solution
states, says the file is not held out, and with ``-T skip_bad_rows=true`` evaluates the rows that read and lists the
others in the log header. Offline: Inspect's mockllm model answers from a table."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

from tests.helpers import REPO
from tests.helpers.data_files import GSM8K_ROWS, MATH_ROWS, write_jsonl

TASK = "evals/math_task.py@math_verified"


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # the task file as `inspect eval` names it, from the repository root


def test_gsm8k_and_math_rows_are_scored_against_their_solutions_reference(tmp_path, mock_model, in_repo):
    data = write_jsonl(tmp_path / "mine.jsonl", [*GSM8K_ROWS, *MATH_ROWS])
    replies = {
        GSM8K_ROWS[0]["question"]: "She earns 0.2 a minute, so 10.\nANSWER: 10",
        GSM8K_ROWS[1]["question"]: "ANSWER: 6,000",
        MATH_ROWS[0]["problem"]: "So $n = \\boxed{3}$.",
        MATH_ROWS[1]["problem"]: "\\boxed{7/12}",
        MATH_ROWS[2]["problem"]: "ANSWER: 1",  # one of the two solutions: wrong
    }
    (log,) = inspect_eval(
        TASK, task_args={"dataset": "jsonl", "path": str(data)}, model=mock_model(replies), log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    correct = {s.id: s.scores["math_verifier"].value["correct"] for s in log.samples}
    assert correct == {"mine-0": "C", "mine-1": "C", "mine-2": "C", "mine-3": "C", "test/algebra/1.json": "I"}
    assert {s.id: s.target for s in log.samples}["mine-3"] == "\\frac{7}{12}"
    assert (log.eval.metadata["split"], log.eval.metadata["held_out"]) == ("all", False)


def test_skip_bad_rows_evaluates_the_others_and_the_log_lists_the_skipped(tmp_path, mock_model, in_repo):
    data = write_jsonl(tmp_path / "mine.jsonl", [GSM8K_ROWS[0], {"question": "q", "answer": "\\frac{1}{"}])
    (log,) = inspect_eval(
        TASK,
        task_args={"dataset": "jsonl", "path": str(data), "skip_bad_rows": True},
        model=mock_model({GSM8K_ROWS[0]["question"]: "ANSWER: 10"}),
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert [s.id for s in log.samples] == ["mine-0"]
    assert log.eval.metadata["skipped_rows"] == [
        f"{data}:2: the verifier cannot read the answer '\\frac{{1}}{{': unbalanced brackets"
    ]
