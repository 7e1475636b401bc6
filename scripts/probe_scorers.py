"""Which scorers GRPO can train against: the exploit probe on Inspect's built-in scorers and inspect_evals' tasks.

    python scripts/probe_scorers.py            # print the table (markdown) and each row's first paid cheat
    python scripts/probe_scorers.py --write    # and write it into docs/inspect-tasks.md (between its markers)
    python scripts/probe_scorers.py --row builtin_includes --verbose   # one row, with every cheat it paid

Each row is a task of scripts/scorer_table/tasks.py (a scorer behind the solver chain it is meant for, on a few
samples of its kind; inspect_evals' own tasks with their datasets given locally), prepared as training prepares it
(inspect_tasks.training_task.prepare_task) and attacked by inspect_tasks/scorer_probe.py: carpets, hedges, the
prompt's numbers, every choice, near values, each scored the way training would pay it (the chain replayed, the
scorer, value_to_float) and again with the target swapped. A row **pays cheats** when one completion was paid for
more than one answer at once, or for none; it **passes** otherwise (a hedge paid for one answer only, as
``choice()`` reads the last ``ANSWER:`` line, is one guess). tests/inspect_tasks/test_scorer_probe.py checks that
the page holds this script's table and each row's verdict.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from inspect_tasks.replay import ReplayLoop
from inspect_tasks.scorer_probe import ScorerProbeReport, probe_prepared_task
from inspect_tasks.training_task import prepare_task

REPO = Path(__file__).resolve().parents[1]
TASKS = "scripts/scorer_table/tasks.py"
PAGE = REPO / "docs" / "inspect-tasks.md"
BEGIN = "<!-- scorer table: written by scripts/probe_scorers.py --write -->"
END = "<!-- end of scorer table -->"

NUMBERS = "numeric answers, 3 samples"
LETTERS = "`multiple_choice()`, 2 samples"
SPANS = "a span of a passage, 2 samples"
VERIFIER = "`verigrpo/math_verifier`"


@dataclass(frozen=True)
class Row:
    """One line of the table: the task in scripts/scorer_table/tasks.py, how the scorer is written, what the samples
    are, which rewards judge (None: all of the task's), and what to use instead when it pays cheats."""

    task: str
    scorer: str
    samples: str
    instead: str
    rewards: tuple[str, ...] | None = None


ROWS = (
    Row("builtin_includes", "`includes()`", NUMBERS, VERIFIER),
    Row("builtin_match", "`match()`", NUMBERS, VERIFIER),
    Row("builtin_match_numeric", "`match(numeric=True)`", NUMBERS, VERIFIER),
    Row("builtin_match_any_numeric", '`match("any", numeric=True)`', NUMBERS, VERIFIER),
    Row("builtin_exact", "`exact()`", NUMBERS, "—"),
    Row("builtin_pattern", r"`pattern(r'ANSWER:\s*(\S+)\s*\Z')`", NUMBERS, "—"),
    Row("builtin_answer_line", '`answer("line")`', NUMBERS, "—"),
    Row("builtin_answer_word", '`answer("word")`', NUMBERS, "—"),
    Row("builtin_math", "`math()`", NUMBERS, VERIFIER),
    Row(
        "verigrpo_math_verifier",
        "`verigrpo/math_verifier` (its `correct` key)",
        NUMBERS,
        "—",
        rewards=("math_verifier.correct",),
    ),
    Row("builtin_choice", "`choice()`", LETTERS, "—"),
    Row("builtin_choice_multiple_correct", "`choice()`, `multiple_correct=True`", LETTERS, "—"),
    Row("builtin_answer_letter", '`answer("letter")`', LETTERS, "—"),
    Row("builtin_f1", "`f1()`", SPANS, "`exact()` as the reward (f1 stays a metric)"),
    Row("builtin_exact_spans", "`exact()`", SPANS, "—"),
    Row("builtin_includes_spans", "`includes()`", SPANS, "`exact()`"),
    Row("inspect_evals_gsm8k", "inspect_evals `gsm8k`: `match(numeric=True)`", "2 local samples", VERIFIER),
    Row("inspect_evals_aime2024", "inspect_evals `aime2024`: `aime_scorer()`", "2 local samples", VERIFIER),
    Row(
        "inspect_evals_math",
        "inspect_evals `math`: `expression_exact_match()`, `expression_exact_match_sympy()`",
        "2 local samples",
        "—",
    ),
    Row("inspect_evals_arc_easy", "inspect_evals `arc_easy`: `choice()`", "2 local samples", "—"),
    Row("inspect_evals_boolq", "inspect_evals `boolq`: an anchored `pattern()` for Yes or No", "2 local samples", "—"),
    Row("inspect_evals_squad", "inspect_evals `squad`: `f1()`, `exact()`", "2 local samples", "`exact()` alone"),
    Row("inspect_evals_drop", "inspect_evals `drop`: `f1(extract_answer)`", "2 local samples", "an exact-match scorer"),
)


@dataclass
class RowResult:
    row: Row
    report: ScorerProbeReport

    def verdict(self, reward: str) -> str:
        report = self.report
        if report.failed(reward):
            samples = {f.sample_id for f in report.cheats if f.reward == reward}
            return f"**pays cheats** ({len(samples)} of {report.samples} samples)"
        hedges = sum(1 for f in report.one_reading if f.reward == reward)
        return "passes" + (f" ({hedges} hedges paid as one reading)" if hedges else "")

    def example(self, reward: str) -> str:
        """The first cheat paid in each of up to two families, shortly."""
        shown, families = [], []
        for finding in self.report.cheats:
            if finding.reward != reward or finding.family in families:
                continue
            families.append(finding.family)
            text = finding.completion if len(finding.completion) <= 40 else finding.completion[:18] + "…"
            text = text.replace("\n", "⏎").replace("|", "\\|")
            also = f" and {finding.also_paid}" if finding.also_paid is not None else ""
            shown.append(f"{finding.family}: `{text}` paid for {finding.target}{also}")
            if len(shown) == 2:
                break
        return "; ".join(shown) or "—"


def probe_row(row: Row) -> RowResult:
    """The row's task prepared as training prepares it, then probed on every sample."""
    task = prepare_task(f"{REPO / TASKS}@{row.task}")
    report = ReplayLoop.run(probe_prepared_task(task, rewards=row.rewards, source=row.task))
    return RowResult(row, report)


def table_lines(results: list[RowResult]) -> list[str]:
    lines = [
        "| scorer | samples | verdict | what paid (first of each family) | train with instead |",
        "|---|---|---|---|---|",
    ]
    for result in results:
        rewards = result.row.rewards or result.report.rewards
        for reward in rewards:
            name = result.row.scorer if len(rewards) == 1 else f"{result.row.scorer} — `{reward}`"
            instead = result.row.instead if result.report.failed(reward) else "—"
            lines.append(
                f"| {name} | {result.row.samples} | {result.verdict(reward)} | {result.example(reward)} | {instead} |"
            )
    return lines


def write_page(lines: list[str], page: Path = PAGE) -> None:
    text = page.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"error: {page} has no {BEGIN!r} ... {END!r} markers to write the table between")
    block = "\n".join([BEGIN, *lines, END])
    page.write_text(re.sub(re.escape(BEGIN) + r".*?" + re.escape(END), lambda _: block, text, flags=re.S))


def page_table(page: Path = PAGE) -> list[str]:
    """The table the page holds now (between the markers)."""
    text = page.read_text()
    inside = text.split(BEGIN, 1)[1].split(END, 1)[0]
    return [line for line in inside.strip().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/probe_scorers.py",
        description="Probe Inspect's built-in scorers and inspect_evals' tasks with scripted cheats; print the table.",
    )
    parser.add_argument("--write", action="store_true", help=f"write the table into {PAGE.relative_to(REPO)}")
    parser.add_argument("--row", action="append", help="only these rows (task names of scripts/scorer_table/tasks.py)")
    parser.add_argument("--verbose", action="store_true", help="print each row's probe report (every cheat paid)")
    args = parser.parse_args(argv)
    rows = [row for row in ROWS if not args.row or row.task in args.row]
    unknown = sorted(set(args.row or ()) - {row.task for row in ROWS})
    if unknown:
        parser.error(f"unknown rows {unknown}: choose from {[row.task for row in ROWS]}")
    if args.write and args.row:
        parser.error("--write writes the whole table: give no --row")
    results = []
    for row in rows:
        result = probe_row(row)
        results.append(result)
        if args.verbose:
            print(result.report.table(), file=sys.stderr)
    lines = table_lines(results)
    print("\n".join(lines))
    if args.write:
        write_page(lines)
        print(f"written to {PAGE.relative_to(REPO)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
