"""A user's data as they have it (#52): GSM8K- and MATH-shaped rows read from their own file, the reference read from
a worked solution by one function (``solution_reference``), every unreadable row reported at once in the file's own
text, and ``skip_bad_rows`` reading the others. Before: a GSM8K row under ``dataset: jsonl`` took the whole solution as
its reference ("unsupported character '#'"), a MATH row without ``answer`` could not be read at all, the first bad row
stopped the load, and the GSM8K source showed ``1, 2, \\ldots, n`` as ``1 2 \\ldots n``."""

from __future__ import annotations

import json

import pytest

from problems.file_rows import SHOWN_BAD_ROWS, UnreadableRows, skipped_rows
from problems.math_data import DatasetError, load_gsm8k, load_math500, load_problems, solution_reference
from rewards import is_correct
from tests.helpers.data_files import GSM8K_ROWS, MATH_ROWS, write_jsonl

# --- the reference of a worked solution: one function for every source ---

SOLUTIONS = [
    # (solution, reference)
    ("She earned 0.2 x 50 = $10.\n#### 10", "10"),
    ("1,200 x 5 = 6,000 eggs.\n#### 6,000", "6000"),  # GSM8K's thousands separator
    ("#### -3.5", "-3.5"),
    ("so the list is\n#### 1, 2, \\ldots, n", "1, 2, \\ldots, n"),  # not a thousands separator: the file's text
    ("a #### b\n#### 7", "7"),  # the last marker
    ("So $n = \\boxed{3}$.", "3"),
    ("Hence $\\boxed{\\frac{7}{12}}$.", "\\frac{7}{12}"),
    ("We find $x=\\boxed{2}$, and so the answer is $\\boxed{2}$.", "2"),  # the same answer twice is one answer
]


@pytest.mark.parametrize(("solution", "reference"), SOLUTIONS)
def test_a_worked_solutions_reference(solution, reference):
    assert solution_reference(solution) == reference


@pytest.mark.parametrize(
    ("solution", "why"),
    [
        ("The answer is 7.", "no single final answer"),
        ("Either $\\boxed{2}$ or $\\boxed{3}$.", "several different final answers"),  # never a guess between two
        ("It is 5.\n####   ", "nothing follows '####'"),
    ],
)
def test_a_solution_without_one_final_answer_is_a_bad_row(tmp_path, solution, why):
    path = write_jsonl(tmp_path / "m.jsonl", [{"problem": "p", "solution": solution}, MATH_ROWS[0]])
    with pytest.raises(UnreadableRows, match=rf"m\.jsonl:1: .*{why}"):
        load_problems("jsonl", path=path)


# --- the shapes, read from a user's file ---


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_file_of_gsm8k_and_math_rows_reads_each_row_by_its_shape(tmp_path, suffix):
    rows = [*GSM8K_ROWS, *MATH_ROWS, {"id": "own", "question": "What is 2 + 2?", "answer": "4"}]
    path = tmp_path / f"mine{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rows, indent=1))
    else:
        write_jsonl(path, rows)
    problems = load_problems(suffix.lstrip("."), path=path)
    assert [(p.id, p.answer, p.metadata.get("row_shape")) for p in problems] == [
        ("mine-0", "10", "gsm8k"),
        ("mine-1", "6000", "gsm8k"),
        ("mine-2", "3", "math"),
        ("mine-3", "\\frac{7}{12}", "math"),
        ("test/algebra/1.json", "-2, 1", "math"),  # MATH-500's own answer when the row has one
        ("own", "4", None),
    ]
    assert problems[0].question == GSM8K_ROWS[0]["question"] and problems[2].question == MATH_ROWS[0]["problem"]
    assert problems[0].metadata["solution"] == GSM8K_ROWS[0]["answer"]
    assert all(is_correct(p.answer, p.answer) for p in problems)


def test_the_gsm8k_and_math500_sources_read_their_shape_from_a_file(tmp_path):
    gsm8k = load_gsm8k(path=write_jsonl(tmp_path / "g.jsonl", GSM8K_ROWS))
    assert [(p.id, p.answer) for p in gsm8k] == [("gsm8k-0", "10"), ("gsm8k-1", "6000")]
    math = load_math500(path=write_jsonl(tmp_path / "m.jsonl", MATH_ROWS))  # MATH's rows: no 'answer' field
    assert [p.answer for p in math] == ["3", "\\frac{7}{12}", "-2, 1"]
    assert math[0].metadata["source"] == "math500"


@pytest.mark.parametrize(
    ("source", "row", "advice"),
    [
        ("gsm8k", MATH_ROWS[0], r"this row is MATH's \{problem, solution, answer\?\}.*dataset jsonl"),
        (
            "gsm8k",
            {"question": "q", "answer": "4"},
            r"a file whose answers are the references themselves is dataset jsonl",
        ),
        ("math500", GSM8K_ROWS[0], r"missing field 'problem' .* a row with 'question' is read by dataset jsonl"),
        ("jsonl", {"question": "q", "solution": "#### 4"}, r"missing field\(s\) \['answer'\] .* GSM8K's .* MATH's"),
        ("jsonl", {"problem": "p", "level": 2}, r"missing 'answer' and 'solution'"),
    ],
)
def test_a_row_that_fits_no_shape_names_the_option_that_reads_it(tmp_path, source, row, advice):
    path = write_jsonl(tmp_path / "x.jsonl", [row])
    with pytest.raises(DatasetError, match=rf"x\.jsonl:1: .*{advice}"):
        load_problems(source, path=path, split="all")


# --- every bad row at once ---


def test_every_bad_row_is_reported_at_once_in_the_files_own_text(tmp_path):
    rows = [
        GSM8K_ROWS[0],
        {"question": "Sum of the first n?", "answer": "1, 2, \\ldots, n"},
        '{"question": "cut off", "answer": ',
        {"question": "q", "answer": "Natalia sold 48/2 = 24 clips in May."},  # a solution without '####'
        MATH_ROWS[0],
        {"question": "", "answer": "1"},
        {"question": "q5", "answer": "5"},
    ]
    path = write_jsonl(tmp_path / "data.jsonl", rows)
    with pytest.raises(UnreadableRows) as raised:
        load_problems("jsonl", path=path)
    message = str(raised.value)
    assert message.startswith(f"{path}: 4 of 7 rows cannot be read:\n")
    assert f"{path}:2: the verifier cannot read the answer '1, 2, \\ldots, n': approximate" in message  # as written
    assert f"{path}:3: malformed JSON (Expecting value at column 34)" in message
    assert f"{path}:4: the verifier cannot read the answer 'Natalia sold 48/2 = 24 clips in May.'" in message
    assert f"{path}:6: 'question' must be a non-empty string" in message
    assert "skip_bad_rows: true" in message and "-T skip_bad_rows=true" in message
    assert [row.where for row in raised.value.rows] == [f"{path}:{n}" for n in (2, 3, 4, 6)]

    problems = load_problems("jsonl", path=path, skip_bad_rows=True)
    assert [p.id for p in problems] == ["data-0", "data-4", "data-6"]  # ids keep the row's place, bad rows included
    assert [row.where for row in skipped_rows(problems)] == [f"{path}:{n}" for n in (2, 3, 4, 6)]
    assert skipped_rows(load_problems("jsonl", path=path, skip_bad_rows=True, limit=1, shuffle=True)) != ()


def test_a_long_list_is_capped_with_a_count_of_the_rest(tmp_path):
    rows = [{"question": f"q{n}", "answer": "\\frac{1}{"} for n in range(SHOWN_BAD_ROWS + 7)] + [GSM8K_ROWS[1]]
    path = write_jsonl(tmp_path / "many.jsonl", rows)
    with pytest.raises(UnreadableRows) as raised:
        load_problems("jsonl", path=path)
    message = str(raised.value)
    assert f"{SHOWN_BAD_ROWS + 7} of {SHOWN_BAD_ROWS + 8} rows cannot be read" in message
    assert message.count("the verifier cannot read the answer '\\frac{1}{'") == SHOWN_BAD_ROWS
    assert "\n  ... and 7 more\n" in message
    assert len(raised.value.rows) == SHOWN_BAD_ROWS + 7


def test_the_gsm8k_source_shows_an_answer_as_the_file_writes_it(tmp_path):
    """The GSM8K source used to drop every comma of the text after '####' ('1 2 \\ldots n' in the message)."""
    path = write_jsonl(tmp_path / "g.jsonl", [{"question": "q", "answer": "so\n#### 1, 2, \\ldots, n"}])
    with pytest.raises(UnreadableRows, match=r"g\.jsonl:1: the verifier cannot read the answer '1, 2, \\ldots, n'"):
        load_gsm8k(path=path)


def test_skipping_every_row_leaves_nothing_to_train_on(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"question": "q"}, {"answer": "1"}])
    with pytest.raises(DatasetError, match=r"bad\.jsonl: no problems in file \(2 unreadable rows skipped\)"):
        load_problems("jsonl", path=path, skip_bad_rows=True)
