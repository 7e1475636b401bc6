"""The check's table: printed as text, written as markdown and JSON (with every number) next to the run's logs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path

from train.gpu_check.verdicts import Row

WIDTH = {"check": 13, "status": 7, "measured": 70}


def exit_code(rows: list[Row]) -> int:
    return 1 if any(row.failed for row in rows) else 0


def summary(rows: list[Row]) -> str:
    failed = [row.check for row in rows if row.failed]
    if not failed:
        return "all checks passed"
    return f"{len(failed)} of {len(rows)} checks did not pass: {', '.join(failed)}"


def text(rows: list[Row], title: str) -> str:
    """A table for a terminal: check, status, what was measured (wrapped), then the verdict and the fix."""
    lines = [title, ""]
    head = f"{'check':<{WIDTH['check']}} {'status':<{WIDTH['status']}} measured / verdict"
    lines += [head, "-" * (len(head) + WIDTH["measured"] - 18)]
    indent = " " * (WIDTH["check"] + WIDTH["status"] + 2)
    for row in rows:
        measured = textwrap.wrap(row.measured, WIDTH["measured"]) or ["-"]
        lines.append(f"{row.check:<{WIDTH['check']}} {row.status:<{WIDTH['status']}} {measured[0]}")
        lines += [indent + line for line in measured[1:]]
        width = WIDTH["measured"] + len(indent)  # textwrap counts the indent
        lines += textwrap.wrap(f"-> {row.verdict}", width, initial_indent=indent, subsequent_indent=indent + "   ")
        if row.fix:
            lines += textwrap.wrap(f"fix: {row.fix}", width, initial_indent=indent, subsequent_indent=indent + "     ")
    lines += ["", summary(rows)]
    return "\n".join(lines)


def markdown(rows: list[Row], title: str) -> str:
    def cell(value: str) -> str:
        return value.replace("|", "\\|").replace("\n", " ")

    lines = [f"# {title}", "", "| check | status | measured | verdict | fix |", "|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row.check} | {row.status} | {cell(row.measured)} | {cell(row.verdict)} | {cell(row.fix) or '-'} |"
        )
    return "\n".join(lines + ["", summary(rows), ""])


def write(rows: list[Row], title: str, out: Path, extra: dict) -> tuple[Path, Path]:
    """``gpu-check.json`` (the rows with their data, and ``extra``) and ``gpu-check.md`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    as_json = out / "gpu-check.json"
    as_markdown = out / "gpu-check.md"
    document = {"title": title, "exit_code": exit_code(rows), "rows": [row.as_dict() for row in rows], **extra}
    as_json.write_text(json.dumps(document, indent=1, default=str))
    as_markdown.write_text(markdown(rows, title))
    return as_json, as_markdown


def json_command(measure: Callable[[list[str]], dict], argv: list[str]) -> dict:
    """The measuring scripts' command line (``scripts/check_on_policy.py``, ``scripts/bench_share_base.py``): the
    config's arguments, plus ``--json FILE`` to keep the printed report."""
    argv, out = list(argv), None
    if "--json" in argv:
        i = argv.index("--json")
        out = argv[i + 1]
        del argv[i : i + 2]
    report = measure(argv)
    text = json.dumps(report, indent=1)
    print(text)
    if out:
        Path(out).write_text(text)
    return report
