"""The shared problem sources: procedural arithmetic, local files, GSM8K/MATH-500 schemas, and their errors."""

import pytest

from problems.code_data import load_code_problems
from problems.math_data import (
    DatasetError,
    DatasetUnavailable,
    load_file,
    load_gsm8k,
    load_math500,
    load_problems,
    procedural_arithmetic,
)
from rewards import is_correct
from tests.helpers import REPO

FIXTURES = REPO / "tests" / "fixtures"


# --- procedural arithmetic ---


def test_arithmetic_is_seeded_and_deterministic():
    assert procedural_arithmetic(20, seed=3) == procedural_arithmetic(20, seed=3)
    assert procedural_arithmetic(20, seed=3) != procedural_arithmetic(20, seed=4)


def test_train_and_test_splits_are_disjoint():
    train = {p.question for p in procedural_arithmetic(400, split="train")}
    test = {p.question for p in procedural_arithmetic(100, split="test")}
    assert len(train) == 400 and len(test) == 100 and not train & test


@pytest.mark.parametrize("steps", [1, 2, 3])
@pytest.mark.parametrize("operations", [("add",), ("sub",), ("mul",), ("div",), ("add", "sub", "mul", "div")])
def test_arithmetic_answers_are_right(operations, steps):
    for problem in procedural_arithmetic(15, operations=operations, steps=steps, max_value=30):
        assert int(problem.answer) >= 0
        assert problem.metadata["operations"][-1] in operations
        assert len(problem.metadata["operations"]) == steps
        assert is_correct(problem.answer, problem.answer)


def test_arithmetic_single_step_answers_recomputed():
    import re

    for problem in procedural_arithmetic(50, operations=("add", "sub", "mul", "div")):
        a, b = (int(x) for x in re.findall(r"\d+", problem.question)[:2])
        op = problem.metadata["operations"][0]
        expected = {"add": a + b, "sub": a - b, "mul": a * b, "div": a // b}[op]
        assert problem.answer == str(expected), problem.question


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"operations": ("pow",)}, "unknown arithmetic operations"),
        ({"split": "dev"}, "split must be"),
        ({"min_value": 5, "max_value": 1}, "min_value <= max_value"),
        ({"n": 400, "max_value": 1, "operations": ("add",)}, "could only make"),
    ],
)
def test_arithmetic_rejects_bad_knobs(kwargs, message):
    with pytest.raises(DatasetError, match=message):
        procedural_arithmetic(**kwargs)


# --- local files ---


def test_jsonl_file():
    problems = load_file(FIXTURES / "problems.jsonl")
    assert [p.id for p in problems] == ["p1", "problems-1", "p3"]
    assert problems[1].answer == "1.5" and problems[1].metadata == {"topic": "fractions"}


def test_json_file():
    problems = load_file(FIXTURES / "problems.json")
    assert [(p.id, p.answer) for p in problems] == [("a", "42"), ("b", "5/2")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"question": "q", "answer": "1"}\n{"question": "q2", "answer": 2\n', r"bad\.jsonl:2: malformed JSON"),
        ('{"question": "q", "answer": "1"}\n\n{"answer": "2"}\n', r"bad\.jsonl:3: missing field\(s\) \['question'\]"),
        ('{"question": "q", "answer": "  "}\n', r"bad\.jsonl:1: 'answer' is empty"),
        ('{"question": "", "answer": "1"}\n', r"bad\.jsonl:1: 'question' must be a non-empty string"),
        ('{"question": "q", "answer": null}\n', r"bad\.jsonl:1: 'answer' must be a string or a number"),
        ('{"question": "q", "answer": "\\\\frac{"}\n', r"bad\.jsonl:1: the verifier cannot read the answer '\\frac\{'"),
        ('["q", "1"]\n', r"bad\.jsonl:1: expected a JSON object"),
        (
            '{"id": 1, "question": "q", "answer": "1"}\n{"id": 1, "question": "r", "answer": "2"}\n',
            r"bad\.jsonl:2: duplicate id '1' \(first used at .*bad\.jsonl:1\)",
        ),
        ("\n\n", "no problems in file"),
    ],
)
def test_bad_jsonl_names_file_and_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError, match=message):
        load_file(path)


RECORD = '{"question": "What is 2 + 2?", "answer": "4", "id": 7'  # 53 characters, no closing brace


@pytest.mark.parametrize(
    ("line", "column"),
    [
        (RECORD, 54),  # just after the last character: json.loads alone says line 2, column 1 (past the newline)
        (RECORD + "   ", 54),  # trailing blanks do not move it
        ('{"question": oops, "answer": "1"}', 14),  # a mistake inside the line: its own column
        ('{"question": "q", "answer": "1"} x', 34),
    ],
)
def test_malformed_jsonl_reports_the_real_column(tmp_path, line, column):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "q", "answer": "1"}\n' + line + "\n\n")
    with pytest.raises(DatasetError, match=rf"bad\.jsonl:2: malformed JSON \([^)]* at column {column}\)\n"):
        load_file(path)
    path.write_text(line + "\n")  # every jsonl reader shares the line reader, problems/code_data.py's too
    for load in (load_file, lambda p: load_gsm8k(path=p), load_code_problems):
        with pytest.raises(DatasetError, match=rf"bad\.jsonl:1: malformed JSON \([^)]* at column {column}\)\n"):
            load(path)


def test_malformed_json_array_reports_the_real_line_and_column(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("[\n  " + RECORD + "\n\n")  # the array and its last object are never closed
    with pytest.raises(DatasetError, match=r"bad\.json:2: malformed JSON \(.* at column 56\); the rest of the array"):
        load_file(path)


def test_bad_json_array_names_the_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"question": "q", "answer": "1"},\n\n  {"question": "q2"}\n]\n')
    with pytest.raises(DatasetError, match=r"bad\.json:4: missing field"):
        load_file(path)
    path.write_text('[\n  {"question": "q", "answer": "1"},\n  {"question": oops}\n]')
    with pytest.raises(DatasetError, match=r"bad\.json:3: malformed JSON"):
        load_file(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_problems("jsonl", path=tmp_path / "nope.jsonl")
    with pytest.raises(DatasetError, match="needs a path"):
        load_problems("jsonl")


# --- GSM8K and MATH-500 schemas (local fixtures; no Hub in tests) ---


def test_gsm8k_schema_from_a_local_file():
    problems = load_gsm8k(path=FIXTURES / "gsm8k_sample.jsonl")
    assert [p.answer for p in problems] == ["72", "6000", "7.25"]
    assert problems[0].metadata["solution"].endswith("#### 72")


def test_gsm8k_row_without_final_answer_is_an_error(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "q", "answer": "no marker here"}\n')
    with pytest.raises(DatasetError, match=r"g\.jsonl:1: a GSM8K answer is a worked solution ending '#### <answer>'"):
        load_gsm8k(path=path)


def test_math500_schema_from_a_local_file():
    problems = load_math500(path=FIXTURES / "math500_sample.jsonl")
    assert problems[0].id == "test/precalculus/807.json"
    assert problems[0].metadata == {"source": "math500", "subject": "Precalculus", "level": 2}
    assert is_correct("(3, \\frac{\\pi}{2})", problems[0].answer)
    assert is_correct("1, -2", problems[2].answer)


def test_hub_unreachable_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    pytest.importorskip("datasets")
    with pytest.raises(
        DatasetUnavailable, match=r"could not load openai/gsm8k .* pass a local copy \(dataset_path: .* -T path="
    ):
        load_gsm8k()


# --- the dispatcher ---


def test_load_problems_limit_shuffle_and_errors():
    assert len(load_problems("arithmetic", limit=7)) == 7
    shuffled = load_problems("jsonl", path=FIXTURES / "problems.jsonl", shuffle=True, seed=1)
    assert sorted(p.id for p in shuffled) == ["p1", "p3", "problems-1"]
    with pytest.raises(DatasetError, match="unknown dataset 'mnist'"):
        load_problems("mnist")
    with pytest.raises(DatasetError, match=r"only apply to dataset 'arithmetic'"):
        load_problems("jsonl", path=FIXTURES / "problems.jsonl", steps=2)
