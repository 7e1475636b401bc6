"""The demo's summary: the README's table is the published summary.json, its intervals are what evals/paired.py
computes from its own counts, and the picture is drawn from it. The slow half (the shipped code still
produces these numbers) is tests/test_demo_staleness.py."""

import json
import re
import sys

import pytest

from evals.paired import PairedTable, compare
from tests.helpers import REPO

sys.path.insert(0, str(REPO / "scripts"))
import demo  # noqa: E402 - scripts/ is not a package
import plot_demo  # noqa: E402

PUBLISHED = REPO / "docs" / "demo-summary.json"
README = REPO / "README.md"


@pytest.fixture(scope="module")
def published():
    return json.loads(PUBLISHED.read_text())


def readme_demo_block() -> list[str]:
    """The lines of the README's demo table: from the ``[demo] same verifier`` line to the last comparison."""
    lines = README.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("[demo] same verifier"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return [lines[start].removeprefix("[demo] "), *lines[start + 1 : end]]


def test_readme_table_is_the_published_summary(published):
    """Not retyped by hand: the README shows exactly what demo.table_lines renders from docs/demo-summary.json."""
    assert readme_demo_block() == demo.table_lines(published)


def test_readme_states_which_run_the_table_is_from(published):
    text = README.read_text()
    assert published["created"][:10] in text
    assert published["commit"][:12] in text
    assert f"{published['eval']['problems']} held-out problems" in text


def test_published_intervals_are_recomputable_from_their_counts(published):
    for key, _, before, after in demo.COMPARISONS:
        stored = published["comparisons"][key]
        table = PairedTable(stored["both"], stored["only_after"], stored["only_before"], stored["neither"])
        again = compare(table).to_dict()
        for field in ("difference", "low", "high", "p_value"):
            assert stored[field] == pytest.approx(again[field], abs=1e-12), (key, field)
        assert stored["verdict"] == again["verdict"]
        # the paired table's two sides are the two evals' own accuracies
        assert stored["before"] == pytest.approx(published["evals"][before]["accuracy"])
        assert stored["after"] == pytest.approx(published["evals"][after]["accuracy"])
        assert stored["n"] == published["evals"][before]["n"] == published["eval"]["problems"]


def test_published_summary_names_no_local_paths(published):
    text = PUBLISHED.read_text()
    assert not re.search(r'"/(?:home|root|tmp|work|Users)/', text)


def test_published_pictures_exist():
    for name in ("demo-comparison.png", "demo-curve.png"):
        data = (REPO / "docs" / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_comparison_picture_is_drawn_from_a_summary(tmp_path, published):
    (tmp_path / "summary.json").write_text(json.dumps(published))
    out = plot_demo.plot(tmp_path)
    assert out == tmp_path / "comparison.png" and out.read_bytes().startswith(b"\x89PNG")


def test_table_lines_read_as_the_intervals_say():
    def row(accuracy):
        return {"accuracy": accuracy, "stderr": 0.03, "format": 1.0, "n": 200}

    def diff(table):
        return compare(table).to_dict()

    summary = {
        "eval": {"problems": 200},
        "evals": {
            key: row(a) for key, a in zip(("base_4bit", "grpo_4bit", "base_full", "grpo_full"), (0.0, 0.6, 0.5, 0.7))
        },
        "comparisons": {
            "grpo_4bit_vs_base_4bit": diff(PairedTable(0, 120, 0, 80)),
            "grpo_4bit_vs_base_full": diff(PairedTable(90, 30, 10, 70)),
            "grpo_full_vs_base_full": diff(PairedTable(100, 10, 8, 82)),
        },
    }
    lines = demo.table_lines(summary)
    assert lines[0] == "same verifier (rewards.grade), same prompt, same 200 held-out problems, greedy:"
    assert lines[3].split() == ["GRPO,", "4-bit", "(as", "trained)", "0.600", "0.030", "1.000"]
    assert lines[-3].endswith("better") and "+120/-0 problems" in lines[-3]
    assert lines[-1].endswith("no clear difference") and "+0.010 [" in lines[-1]
