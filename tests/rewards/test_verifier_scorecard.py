"""The verifier scorecard: the bundled example scores as documented, bad input says where and what to do."""

import json
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
DELIBERATE = {("1,5", "1.5"), (r"12 \text{ is the answer}", "12")}


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
    assert "disagreements with the labels (rewards.is_correct): 2" in report
    assert "decimal-comma" in report and "per tag (rewards.is_correct)" in report
    summary = next(line for line in report.splitlines() if line.startswith("rewards.is_correct "))
    assert summary.split()[1:8] == ["51", "22", "0", "27", "2", "0", "1.000"]


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
    pytest.param('{"candidate": 0.5, "reference": "1/2", "expected": true}', "candidate is not a string", id="number"),
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
