"""The demo's summary: the README's table is the published summary.json, its intervals are what evals/paired.py
computes from its own counts, and the picture is drawn from it. The slow half (the shipped code still
produces these numbers) is tests/test_demo_staleness.py."""

import json
import re

import pytest

from evals.paired import PairedTable, compare
from scripts import demo, plot_demo  # scripts/ is a namespace package from the repository root
from tests.helpers import REPO

PUBLISHED = demo.PUBLISHED_SUMMARY


@pytest.fixture(scope="module")
def published():
    if not PUBLISHED.is_file():
        pytest.skip(f"no demo run is published ({PUBLISHED.name} absent); the README says so (checked below)")
    return json.loads(PUBLISHED.read_text())


def test_readme_shows_what_is_published():
    """Not retyped by hand: the README's demo section is exactly what demo.readme_block renders from
    docs/demo-summary.json (table, date, commit, reading), or says that no run is published."""
    summary = json.loads(PUBLISHED.read_text()) if PUBLISHED.is_file() else None
    assert demo.readme_demo_section(demo.README.read_text()) == demo.readme_block(summary)


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


def test_published_pictures_exist(published):
    for name in ("demo-comparison.png", "demo-curve.png"):
        data = (REPO / "docs" / name).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


def made_up_summary() -> dict:
    """A summary as demo.py writes it, with made-up evals: one comparison better, one worse, one unclear."""

    def row(accuracy):
        return {"accuracy": accuracy, "stderr": 0.03, "format": 1.0, "n": 200}

    def diff(table):
        return compare(table).to_dict()

    return {
        "created": "2026-12-01T13:25:20+00:00",
        "commit": "0123456789abcdef0123456789abcdef01234567",
        "machine": {"load_average": 0.4},
        "total_wall_s": 840.0,
        "eval": {"problems": 200},
        "training": {"steps": 30},
        "evals": {
            key: row(a) for key, a in zip(("base_4bit", "grpo_4bit", "base_full", "grpo_full"), (0.0, 0.6, 0.5, 0.45))
        },
        "comparisons": {
            "grpo_4bit_vs_base_4bit": {"label": "GRPO 4-bit - base 4-bit", **diff(PairedTable(0, 120, 0, 80))},
            "grpo_4bit_vs_base_full": {"label": "GRPO 4-bit - base full", **diff(PairedTable(90, 30, 10, 70))},
            "grpo_full_vs_base_full": {"label": "GRPO full - base full", **diff(PairedTable(80, 10, 20, 90))},
        },
    }


def test_table_lines_read_as_the_intervals_say():
    lines = demo.table_lines(made_up_summary())
    assert lines[0] == "same verifier (rewards.grade), same prompt, same 200 held-out problems, greedy:"
    assert lines[3].split() == ["GRPO,", "4-bit", "(as", "trained)", "0.600", "0.030", "1.000"]
    assert lines[-3].endswith("better") and "+120/-0 problems" in lines[-3]
    assert lines[-2].endswith("better") and "+30/-10 problems" in lines[-2]
    assert lines[-1].endswith("no clear difference") and "-0.050 [" in lines[-1]


def test_the_reading_says_only_what_each_interval_supports():
    summary = made_up_summary()
    summary["comparisons"]["grpo_full_vs_base_full"] = {
        "label": "GRPO full - base full",
        **compare(PairedTable(60, 5, 40, 95)).to_dict(),
    }
    reading = demo.reading_lines(summary)
    bullets = [line for line in reading if line.startswith("- ")]
    assert len(bullets) == 3
    assert "better: the whole 95% interval is above zero" in bullets[0]
    assert bullets[2].startswith("- the same adapter on the full-precision base") and "worse: the whole" in bullets[2]
    summary["comparisons"]["grpo_full_vs_base_full"] = {
        "label": "GRPO full - base full",
        **compare(PairedTable(80, 10, 12, 98)).to_dict(),
    }
    assert "no clear difference: the 95% interval includes zero" in demo.reading_lines(summary)[4]


def test_publish_copies_the_run_and_writes_the_readme(tmp_path, monkeypatch):
    """--publish: summary.json and pictures into docs/, the README's demo section rewritten from them (and
    only that section), so the README test above holds after a publish."""
    run, docs, readme = tmp_path / "run", tmp_path / "docs", tmp_path / "README.md"
    run.mkdir(), docs.mkdir()
    summary = made_up_summary()
    (run / "summary.json").write_text(json.dumps(summary))
    plot_demo.plot(run)
    (run / "curve.png").write_bytes((run / "comparison.png").read_bytes())
    readme.write_text(f"# title\n\nbefore\n{demo.README_START}\n{demo.UNPUBLISHED[0]}\n{demo.README_END}\nafter\n")
    monkeypatch.setattr(demo, "PUBLISHED", docs)
    monkeypatch.setattr(demo, "README", readme)
    demo.publish(run)
    assert json.loads((docs / "demo-summary.json").read_text()) == summary
    assert (docs / "demo-comparison.png").read_bytes().startswith(b"\x89PNG")
    section = demo.readme_demo_section(readme.read_text())
    assert section == demo.readme_block(summary)
    assert "here from the run of 2026-12-01 at commit 0123456789ab (30 GRPO steps, 14 min" in section[0]
    assert readme.read_text().startswith("# title\n\nbefore\n") and readme.read_text().endswith("after\n")
    with pytest.raises(ValueError, match="markers"):
        readme.write_text("no markers\n")
        demo.publish(run)
