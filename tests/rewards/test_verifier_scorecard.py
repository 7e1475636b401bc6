"""The verifier scorecard: the bundled example scores as documented, bad input says where and what to do."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewards.scorecard import (
    Judgement,
    LabeledPair,
    ScorecardInputError,
    main,
    read_labeled,
    stats,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "evals" / "data" / "verifier_scorecard_example.jsonl"
# the two labels in the example that the verifier refuses on purpose (README policy table): a decimal comma
# and a value followed by words
# labeled equal, refused by policy: a decimal comma, trailing words, and (since round 5) an expression for a number
DELIBERATE = {("1,5", "1.5"), (r"12 \text{ is the answer}", "12"), (r"\sin^2(x)+\cos^2(x)", "1")}


def test_the_bundled_example_scores_as_documented(tmp_path, capsys):
    out = tmp_path / "verdicts.json"
    assert main([str(EXAMPLE), "--json", str(out)]) == 0
    report = capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert len(rows) == len(read_labeled(EXAMPLE)) >= 40
    verdicts = {(r["candidate"], r["reference"]): r["rewards.is_correct"] for r in rows}
    false_accepts = [r for r in rows if not r["expected"] and r["rewards.is_correct"]["got"]]
    assert false_accepts == []
    disagreements = {(r["candidate"], r["reference"]) for r in rows if r["rewards.is_correct"]["got"] != r["expected"]}
    assert disagreements == DELIBERATE
    assert all(verdicts[pair]["explanation"] for pair in DELIBERATE)
    assert "disagreements with the labels (rewards.is_correct): 3" in report
    assert "decimal-comma" in report and "per tag (rewards.is_correct)" in report
    summary = next(line for line in report.splitlines() if line.startswith("rewards.is_correct "))
    assert summary.split()[1:8] == ["51", "21", "0", "27", "3", "0", "1.000"]


def test_the_script_runs_on_its_own(tmp_path):
    labeled = tmp_path / "mine.jsonl"
    labeled.write_text('{"candidate": "0.5", "reference": "1/2", "expected": true}\n\n')
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "verifier_scorecard.py"), str(labeled)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "1 pairs (1 labeled equal, 0 different)" in result.stdout


BAD_LINES = [
    pytest.param("{not json", "not JSON", id="not-json"),
    pytest.param("[1, 2]", "a JSON list, not an object", id="not-an-object"),
    pytest.param('{"candidate": "1", "expected": true}', "missing reference", id="missing-key"),
    pytest.param(
        '{"candidate": 0.5, "reference": "1/2", "expected": true}',
        "candidate is a JSON number, not a string",
        id="number",
    ),
    pytest.param('{"candidate": "1", "reference": "1", "expected": "yes"}', "expected is 'yes'", id="expected-word"),
    pytest.param(
        '{"candidate": "1", "reference": "1", "expected": true, "tags": [1]}', "tags is not a list", id="tags"
    ),
]


@pytest.mark.parametrize(("line", "problem"), BAD_LINES)
def test_bad_lines_name_the_file_the_line_and_the_fix(tmp_path, capsys, line, problem):
    labeled = tmp_path / "labels.jsonl"
    labeled.write_text('{"candidate": "1", "reference": "1", "expected": 1}\n' + line + "\n")
    with pytest.raises(ScorecardInputError) as error:
        read_labeled(labeled)
    message = str(error.value)
    assert message.startswith(f"{labeled}:2: ") and problem in message
    assert main([str(labeled)]) == 2
    assert f"{labeled}:2: " in capsys.readouterr().err


GOOD_LINE = b'{"candidate": "1", "reference": "1", "expected": true}\n'
# malformed files as bytes: each used to end in a traceback (or, for --json, lose the finished report)
BAD_FILES = [
    pytest.param(b'{"candidate": "caf\xe9", "reference": "1", "expected": true}', "is not UTF-8", id="latin1-byte"),
    pytest.param(b"\xff\xfe{}", "byte b'\\xff' at column 1 is not UTF-8", id="utf16-bom"),
    pytest.param(b"[" * 100_000 + b"]" * 100_000, "nested too deeply", id="deep-nesting"),
    pytest.param(
        b'{"candidate": "1", "reference": "1", "expected": ' + b"1" * 4301 + b"}",
        "a number Python will not read",
        id="int-over-4300-digits",
    ),
    pytest.param(b'{"candidate": "1", "reference": null, "expected": true}', "reference is a JSON null", id="null-ref"),
    pytest.param(b'{"candidate": ["1"], "reference": "1", "expected": true}', "candidate is a JSON list", id="list"),
    pytest.param(b'{"reference": "1", "expected": true}', "missing candidate", id="missing-candidate"),
    pytest.param(b'{"candidate": "1", "reference": "1"}', "missing expected", id="missing-expected"),
    pytest.param(b'{"candidate": "1", "reference": "1", "expected": 2}', "expected is 2", id="expected-2"),
    pytest.param(b'{"candidate": "1", "reference": "1", "expected": NaN}', "expected is nan", id="expected-nan"),
    pytest.param(b'"just a string"', "a JSON string, not an object", id="string"),
    pytest.param(b'{"candidate": "1", "reference": "1", "expected": true, "tags": {"a": 1}}', "tags is not", id="tags"),
]


@pytest.mark.parametrize(("line", "problem"), BAD_FILES)
def test_malformed_files_are_an_error_line_not_a_traceback(tmp_path, capsys, line, problem):
    """exit 2 and one `error: FILE:LINE: what. fix` line on stderr; nothing judged, nothing on stdout."""
    labeled = tmp_path / "labels.jsonl"
    labeled.write_bytes(GOOD_LINE + line + b"\n" + GOOD_LINE)
    assert main([str(labeled)]) == 2
    out, err = capsys.readouterr()
    error = err.strip()
    assert error.startswith(f"error: {labeled}:2: ") and problem in error, error
    assert len(error.splitlines()) == 1 and len(error) < 600, error
    assert out == ""


def test_the_script_ends_in_an_error_line_not_a_traceback(tmp_path):
    """The same through the script as a user runs it (one subprocess: the deepest case)."""
    labeled = tmp_path / "labels.jsonl"
    labeled.write_bytes(GOOD_LINE + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "verifier_scorecard.py"), str(labeled)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.startswith(f"error: {labeled}:2: JSON nested too deeply"), result.stderr


def test_a_byte_order_mark_is_not_an_error(tmp_path):
    labeled = tmp_path / "bom.jsonl"
    labeled.write_bytes(b"\xef\xbb\xbf" + GOOD_LINE)
    assert [pair.line for pair in read_labeled(labeled)] == [1]


@pytest.mark.parametrize(
    ("out", "problem"),
    [
        pytest.param("missing/verdicts.json", "the folder {tmp}/missing does not exist", id="missing-folder"),
        pytest.param("file.txt/verdicts.json", "the folder {tmp}/file.txt is not a folder", id="parent-is-a-file"),
        pytest.param(".", "a folder. Name a file", id="a-folder"),
        pytest.param("locked/verdicts.json", "the folder {tmp}/locked is not writable", id="read-only-folder"),
    ],
)
def test_the_json_path_is_checked_before_the_run(tmp_path, capsys, monkeypatch, out, problem):
    """A --json path that cannot be written stops the scorecard before it judges a pair (no lost report)."""
    import rewards.scorecard as scorecard

    (tmp_path / "file.txt").write_text("")
    (tmp_path / "locked").mkdir(mode=0o500)
    labeled = tmp_path / "labels.jsonl"
    labeled.write_bytes(GOOD_LINE)
    judged = []
    monkeypatch.setattr(scorecard, "judge_all", lambda *args, **kw: judged.append(args) or [])
    if out == "locked/verdicts.json" and os.access(tmp_path / "locked", os.W_OK):
        pytest.skip("running as root: a read-only folder is still writable")
    assert main([str(labeled), "--json", str(tmp_path / out)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --json ") and problem.format(tmp=tmp_path) in error, error
    assert judged == []


def test_a_bad_deadline_is_an_error(tmp_path, capsys):
    labeled = tmp_path / "labels.jsonl"
    labeled.write_bytes(GOOD_LINE)
    for deadline in ("0", "-1", "nan", "inf"):
        assert main([str(labeled), "--deadline", deadline]) == 2
        assert "error: --deadline" in capsys.readouterr().err


def test_a_missing_or_empty_file_is_a_clear_error(tmp_path):
    with pytest.raises(ScorecardInputError, match="no such file"):
        read_labeled(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(ScorecardInputError, match="no labeled pairs"):
        read_labeled(tmp_path / "empty.jsonl")


def test_compare_math_verify_scores_the_same_pairs(tmp_path, capsys):
    pytest.importorskip("math_verify")
    labeled = tmp_path / "labels.jsonl"
    rows = [("1/2", "0.5", True), ("3 or 4", "4", False), (r"\frac{1}{3}", "1/3", True)]
    labeled.write_text("".join(json.dumps({"candidate": c, "reference": r, "expected": e}) + "\n" for c, r, e in rows))
    assert main([str(labeled), "--compare", "math-verify"]) == 0
    report = capsys.readouterr().out
    assert "math_verify " in report and "give different verdicts on" in report


def judged(expected: bool, got: bool | None, seconds: float = 0.01) -> Judgement:
    return Judgement(LabeledPair("a", "b", expected), got, "r", "", seconds)


def test_stats_count_what_they_say():
    results = [judged(True, True), judged(True, False), judged(False, True), judged(False, False), judged(True, None)]
    results += [judged(False, False, seconds=2.0)]
    s = stats(results)
    assert (s.true_accepts, s.false_rejects, s.false_accepts, s.true_rejects, s.errors) == (1, 1, 1, 2, 1)
    assert s.precision == 0.5 and s.recall == 0.5 and s.false_accept_rate == pytest.approx(1 / 3)
    assert s.latency(1.0) == 2.0 and s.latency(0.5) == 0.01
