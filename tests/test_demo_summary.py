"""The demo's summary: the README's table is the published summary.json, its intervals are what evals/log_stats/paired.py
computes from its own counts, and the picture is drawn from it. The slow half (the shipped code still
produces these numbers) is tests/integration/test_demo_staleness.py."""

import json
import re

import pytest

from evals.log_stats.paired import PairedTable, compare
from scripts import demo, plot_demo  # scripts/ is a namespace package from the repository root
from tests.helpers import REPO

PUBLISHED = demo.PUBLISHED_SUMMARY
PUBLISHED_SEEDS = demo.PUBLISHED_SEEDS


@pytest.fixture(scope="module")
def published():
    if not PUBLISHED.is_file():
        pytest.skip(f"no demo run is published ({PUBLISHED.name} absent); the README says so (checked below)")
    return json.loads(PUBLISHED.read_text())


def test_readme_shows_what_is_published():
    """Not retyped by hand: the README's demo section is exactly what demo.readme_block renders from
    docs/demo-summary.json (table, date, commit, reading) and docs/demo-seeds.json when present (the spread
    over seeds), or says that no run is published."""
    summary = json.loads(PUBLISHED.read_text()) if PUBLISHED.is_file() else None
    seeds = demo.read_seeds(PUBLISHED_SEEDS)
    assert seeds is None or summary is not None, "docs/demo-seeds.json without docs/demo-summary.json"
    assert demo.readme_demo_section(demo.README.read_text()) == demo.readme_block(summary, seeds)


def test_published_seeds_are_the_published_run_and_others(published):
    """docs/demo-seeds.json, when present, starts with the published run's own numbers and holds other seeds."""
    seeds = demo.read_seeds(PUBLISHED_SEEDS)
    if seeds is None:
        pytest.skip("one seed published (docs/demo-seeds.json absent); the README says so (checked above)")
    assert seeds[0] == demo.seed_entry(published, PUBLISHED)
    assert len(seeds) >= 2 and len({entry["seed"] for entry in seeds}) == len(seeds)
    for entry in seeds:
        assert set(entry["evals"]) == {key for key, _, _, _ in demo.EVALS}
        assert set(entry["comparisons"]) == {key for key, _, _, _ in demo.COMPARISONS}


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
        "machine": {"load_average": 0.4, "torch_threads": 2},
        "total_wall_s": 840.0,
        "config": {"path": "configs/cpu-smollm2.yaml", "sha256": "ab" * 32, "max_steps": 30, "seed": 0},
        "eval": {
            "problems": 200,
            "max_tokens": 48,
            "task_args": {"dataset": "arithmetic", "split": "test", "limit": 200, "max_value": 10, "max_tokens": 48},
        },
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


# ---- the spread over training seeds (--publish RUN --seed-runs RUN ...) ----------------------------------------


def made_up_seed_run(seed: int, accuracies, tables) -> dict:
    """made_up_summary() trained with another seed: other accuracies, other paired tables."""
    summary = made_up_summary()
    summary["config"]["seed"] = seed
    summary["created"] = f"2026-12-0{seed + 1}T10:00:00+00:00"
    for (key, _, _, _), accuracy in zip(demo.EVALS, accuracies):
        summary["evals"][key]["accuracy"] = accuracy
    for (key, label, _, _), table in zip(demo.COMPARISONS, tables):
        summary["comparisons"][key] = {"label": label, **compare(table).to_dict()}
    return summary


def three_seeds() -> list[dict]:
    """Seed 0 is made_up_summary(); the 4-bit gain is better in all three, the full-precision one worse in one."""
    return [
        made_up_summary(),
        made_up_seed_run(
            1,
            (0.1, 0.5, 0.5, 0.4),
            (PairedTable(20, 80, 0, 100), PairedTable(90, 10, 10, 90), PairedTable(60, 5, 40, 95)),
        ),
        made_up_seed_run(
            2,
            (0.05, 0.7, 0.55, 0.5),
            (PairedTable(10, 130, 0, 60), PairedTable(100, 40, 10, 50), PairedTable(90, 10, 12, 88)),
        ),
    ]


def verdicts(summaries) -> list[list[str]]:
    return [[s["comparisons"][key]["verdict"] for key, _, _, _ in demo.COMPARISONS] for s in summaries]


def write_runs(tmp_path, summaries) -> list:
    runs = []
    for summary in summaries:
        run = tmp_path / f"demo-seed{summary['config']['seed']}"
        run.mkdir()
        (run / "summary.json").write_text(json.dumps(summary))
        runs.append(run)
    return runs


def test_seeds_table_gives_each_numbers_mean_range_and_verdict_count(tmp_path):
    summaries = three_seeds()
    assert verdicts(summaries) == [  # what the made-up tables give, by the intervals of evals/log_stats/paired.py
        ["better", "better", "no clear difference"],
        ["better", "no clear difference", "worse"],
        ["better", "better", "no clear difference"],
    ]
    runs = write_runs(tmp_path, summaries)
    seeds = demo.seed_entries(runs[0], summaries[0], runs[1:])
    assert [entry["seed"] for entry in seeds] == [0, 1, 2]
    assert (
        seeds[1]["evals"]["grpo_4bit"] == 0.5
        and seeds[1]["comparisons"]["grpo_full_vs_base_full"]["verdict"] == "worse"
    )
    assert seeds[2]["torch_threads"] == 2 and seeds[2]["created"] == "2026-12-03T10:00:00+00:00"
    lines = demo.seeds_lines(seeds, 200)
    assert lines[0] == "over 3 training seeds (0, 1, 2), each evaluated on the same 200 problems: mean [min, max]"
    assert [line.split()[-3:] for line in lines[1:5]] == [
        ["0.050", "[0.000,", "0.100]"],  # base 4-bit: 0.0, 0.1, 0.05
        ["0.600", "[0.500,", "0.700]"],  # GRPO 4-bit: 0.6, 0.5, 0.7
        ["0.517", "[0.500,", "0.550]"],  # base full: 0.5, 0.5, 0.55
        ["0.450", "[0.400,", "0.500]"],  # GRPO full: 0.45, 0.4, 0.5
    ]
    assert lines[1].startswith("  base, 4-bit (as trained)")
    assert lines[6].endswith("+0.550 [+0.400, +0.650]  above zero in 3 of 3 seeds")  # +0.6, +0.4, +0.65
    assert lines[7].endswith("+0.083 [+0.000, +0.150]  above zero in 2 of 3 seeds")  # +0.1, 0, +0.15
    assert lines[8].endswith("-0.078 [-0.175, -0.010]  above zero in 0 of 3 seeds, below zero in 1")
    assert len(lines) == 9


def test_the_reading_says_how_often_each_verdict_held_over_the_seeds(tmp_path):
    summaries = three_seeds()
    runs = write_runs(tmp_path, summaries)
    one = demo.reading_lines(summaries[0])
    assert one[-1] == (
        "One training seed, 200 problems, a 135M model and 30 steps: a smoke-scale run. Its spread over training "
        "seeds was not measured; the GPU recipes are where accuracy is trained."
    )
    over = demo.reading_lines(summaries[0], demo.seed_entries(runs[0], summaries[0], runs[1:]))
    assert over[:-1] == one[:-1]  # the published run's bullets are the same
    assert over[-1] == (
        "3 training seeds (0, 1, 2), 200 problems, a 135M model and 30 steps each: a smoke-scale run. Over the "
        "seeds the verdict above held for GRPO 4-bit - base 4-bit (better) in 3 of 3; GRPO 4-bit - base full "
        "(better) in 2 of 3; GRPO full - base full (no clear difference) in 2 of 3 (the table below). The GPU "
        "recipes are where accuracy is trained."
    )
    assert "not measured" not in "\n".join(over)


def _set(summary: dict, field: str, value) -> dict:
    section, key = field.split(".", 1)
    target = summary[section]
    *parents, leaf = key.split(".")
    for parent in parents:
        target = target[parent]
    target[leaf] = value
    return summary


@pytest.mark.parametrize(
    "field, value",
    [
        ("eval.problems", 100),
        ("eval.max_tokens", 64),
        ("eval.task_args.max_value", 20),
        ("config.sha256", "cd" * 32),
        ("config.max_steps", 10),
        ("config.path", "configs/other.yaml"),
    ],
)
def test_a_seed_run_that_measured_something_else_is_refused(tmp_path, field, value):
    summaries = three_seeds()
    _set(summaries[2], field, value)
    runs = write_runs(tmp_path, summaries)
    with pytest.raises(demo.NotComparable, match=rf"demo-seed2/summary.json: {re.escape(field)} is {value!r}"):
        demo.seed_entries(runs[0], summaries[0], runs[1:])


def test_a_repeated_seed_is_refused(tmp_path):
    summaries = three_seeds()
    runs = write_runs(tmp_path, summaries)
    twin = tmp_path / "demo-seed1-again"
    twin.mkdir()
    (twin / "summary.json").write_text(json.dumps(summaries[1]))
    with pytest.raises(
        demo.NotComparable, match=r"demo-seed1-again/summary.json: config.seed 1 is also the seed of .*demo-seed1\b"
    ):
        demo.seed_entries(runs[0], summaries[0], [runs[1], twin])
    with pytest.raises(demo.NotComparable, match=r"config.seed 0 is also the seed of .*demo-seed0\b"):
        demo.seed_entries(runs[0], summaries[0], [runs[0]])


def publishing_setup(tmp_path, monkeypatch, summaries):
    """Runs of ``summaries`` (the first with its pictures), and docs/ and README.md under tmp_path in place of the
    repository's."""
    runs = write_runs(tmp_path, summaries)
    plot_demo.plot(runs[0])
    (runs[0] / "curve.png").write_bytes((runs[0] / "comparison.png").read_bytes())
    docs, readme = tmp_path / "docs", tmp_path / "README.md"
    docs.mkdir()
    readme.write_text(f"# title\n{demo.README_START}\n{demo.UNPUBLISHED[0]}\n{demo.README_END}\nafter\n")
    monkeypatch.setattr(demo, "PUBLISHED", docs)
    monkeypatch.setattr(demo, "README", readme)
    return runs, docs, readme


def test_publish_with_seed_runs_writes_the_seeds_and_their_table(tmp_path, monkeypatch):
    summaries = three_seeds()
    runs, docs, readme = publishing_setup(tmp_path, monkeypatch, summaries)
    monkeypatch.setattr("sys.argv", ["demo.py", "--publish", str(runs[0]), "--seed-runs", str(runs[1]), str(runs[2])])
    assert demo.main() == 0  # the CLI as docs/demo.md gives it
    seeds = demo.read_seeds(docs / demo.SEEDS_FILE)
    assert seeds == demo.seed_entries(runs[0], summaries[0], runs[1:])
    assert seeds[0] == demo.seed_entry(json.loads((docs / "demo-summary.json").read_text()), docs)
    section = demo.readme_demo_section(readme.read_text())
    assert section == demo.readme_block(summaries[0], seeds)
    assert section[: len(demo.readme_block(summaries[0])) - 1] == demo.readme_block(summaries[0])[:-1]
    table = section[section.index(demo.SEEDS_INTRO) + 2 :]
    assert table[0] == "```" and table[-1] == "```" and table[1:-1] == demo.seeds_lines(seeds, 200)
    assert readme.read_text().endswith(f"{demo.README_END}\nafter\n")

    # publishing one run again removes the seeds of the earlier publish: the README shows no stale spread
    demo.publish(runs[0])
    assert not (docs / demo.SEEDS_FILE).exists()
    assert demo.readme_demo_section(readme.read_text()) == demo.readme_block(summaries[0])
    assert "not measured" in demo.readme_demo_section(readme.read_text())[-1]


def test_publish_refuses_incomparable_seed_runs_before_writing_anything(tmp_path, monkeypatch, capsys):
    summaries = three_seeds()
    _set(summaries[1], "eval.task_args.max_value", 20)
    runs, docs, readme = publishing_setup(tmp_path, monkeypatch, summaries)
    before = readme.read_text()
    monkeypatch.setattr("sys.argv", ["demo.py", "--publish", str(runs[0]), "--seed-runs", str(runs[1]), str(runs[2])])
    with pytest.raises(
        SystemExit, match=r"nothing published: .*demo-seed1/summary.json: eval.task_args.max_value is 20"
    ):
        demo.main()
    assert list(docs.iterdir()) == [] and readme.read_text() == before
    with pytest.raises(FileNotFoundError, match="demo-seed7/summary.json not found"):
        demo.publish(runs[0], [tmp_path / "demo-seed7"])
    assert list(docs.iterdir()) == []


def test_only_recorded_identical_kernels_make_two_runs_the_same_machine():
    """The staleness test asks for equal numbers only on the same floating-point kernels; a summary that lacks a
    kernel key (written before it was recorded) is compared within intervals instead."""
    here = {"machine": demo.machine()}
    assert all(here["machine"][key] is not None for key in demo.SAME_KERNELS), here
    assert demo.same_kernels(here, json.loads(json.dumps(here)))
    isa = "AVX512" if here["machine"]["torch_cpu_capability"] == "AVX2" else "AVX2"  # not this machine's
    other_isa = {"machine": {**here["machine"], "torch_cpu_capability": isa}}
    assert not demo.same_kernels(here, other_isa)
    older = {"machine": {key: value for key, value in here["machine"].items() if key != "cpu_flags_sha256"}}
    assert not demo.same_kernels(older, here) and not demo.same_kernels(here, older)


def test_the_demo_refuses_an_out_that_holds_a_run_before_any_work(tmp_path, monkeypatch, capsys):
    """`scripts/demo.py --out DIR` again: training would refuse DIR (a previous run's checkpoints) after the demo's first
    evals (minutes); the demo says so first, in one line, before it prepares or evaluates anything (issue #52)."""
    (tmp_path / "checkpoint-2").mkdir()
    (tmp_path / "checkpoint-2" / "trainer_state.json").write_text("{}")
    (tmp_path / "run.json").write_text("{}")

    def started(*args, **kwargs):
        raise AssertionError(f"the demo started work: {args}")

    monkeypatch.setattr(demo.subprocess, "run", started)
    monkeypatch.setattr(demo, "eval_task_args", started)
    monkeypatch.setattr(demo.sys, "argv", ["demo.py", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as stopped:
        demo.main()
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"demo.py: error: --out {tmp_path} already holds a run (checkpoint-2, run.json): give another --out (the "
        "default is a new runs/demo-<time>)"
    )
