"""Reading a problem file's rows, every bad row at once.

A file of thousands of rows with a few bad ones must not take a run per bad row: ``read_rows`` reads every row, keeps
the ones that read, and reports all that do not (``file:line: reason``, the first ``SHOWN_BAD_ROWS`` and a count of
the rest) in one ``UnreadableRows`` error, or, asked to skip them, returns the others with the skipped rows attached
(``LoadedProblems.skipped``: training lists them in run.json, an eval in its log header). JSON lines are read one by
one, so a malformed line is one bad row; a ``.json`` array that stops parsing cannot be read past that point and is
refused whole. A row's text in a message is the file's own text (``shown``), never a Python repr that doubles its
backslashes.

Standard library only: the math and code loaders (``problems/math_data.py``, ``problems/code_data.py``) build on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

SHOWN_BAD_ROWS = 20  # bad rows a message lists; the rest are counted
SKIP_HINT = (
    "Fix these rows, or leave them out: skip_bad_rows: true in a training config (run.json lists the rows left out), "
    "-T skip_bad_rows=true for inspect eval, --skip-bad-rows for scripts/probe_exploits.py."
)


class DatasetError(ValueError):
    """A dataset problem a user must fix: names the file, line and field."""


class RowError(ValueError):
    """Why one row cannot be read (the reader adds where the row is)."""


@dataclass(frozen=True)
class BadRow:
    where: str  # "file:line", or a Hub dataset's id and row number
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


class UnreadableRows(DatasetError):
    """Every row of a source that cannot be read, in one message; ``skip_bad_rows`` reads the others."""

    def __init__(self, name: str, rows: list[BadRow], total: int, hint: str = SKIP_HINT) -> None:
        self.name, self.rows, self.total, self.hint = name, list(rows), total, hint
        listed = "".join(f"\n  {row}" for row in self.rows[:SHOWN_BAD_ROWS])
        rest = len(self.rows) - SHOWN_BAD_ROWS
        more = f"\n  ... and {rest:,} more" if rest > 0 else ""
        super().__init__(f"{name}: {len(self.rows):,} of {total:,} rows cannot be read:{listed}{more}\n{hint}")

    def with_hint(self, hint: str) -> UnreadableRows:
        """The same rows, ending with the fix as the caller's own option names it."""
        return UnreadableRows(self.name, self.rows, self.total, hint)


class LoadedProblems(list):
    """The problems read, and the rows left out because they could not be read (``skip_bad_rows``)."""

    def __init__(self, problems: Iterable = (), skipped: Iterable[BadRow] = (), total: int | None = None) -> None:
        super().__init__(problems)
        self.skipped: tuple[BadRow, ...] = tuple(skipped)
        self.total = len(self) + len(self.skipped) if total is None else total


def skipped_rows(problems: list) -> tuple[BadRow, ...]:
    """The rows a load left out (empty for a plain list: nothing was skipped)."""
    return getattr(problems, "skipped", ())


def shown(text: str, limit: int = 80) -> str:
    """``text`` quoted as the file holds it (``'1, 2, \\ldots, n'``, not a repr's doubled backslashes), line breaks as
    ``\\n`` so the message stays one line per row, clipped to ``limit`` characters."""
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"'{text}'"


@dataclass(frozen=True)
class Malformed:
    """A JSON line that does not parse: ``reason`` says what and at which column."""

    reason: str


def error_position(exc: json.JSONDecodeError) -> tuple[int, int]:
    """(line, column) of a JSON error, both from 1, in the decoded text.

    When the input ends too early (a missing ``}``), ``json`` reports the end of the input, which is past
    the trailing newline: line 2, column 1 for a one-line record. The mistake is at the end of the last
    non-blank text, so that is where we point.
    """
    doc, pos = exc.doc, exc.pos
    if not doc[pos:].strip():
        pos = len(doc[:pos].rstrip())
    return doc.count("\n", 0, pos) + 1, pos - doc.rfind("\n", 0, pos)


def json_lines(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, record) for every non-blank line; a line that does not parse yields a ``Malformed``."""
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                _, column = error_position(exc)
                yield lineno, Malformed(f"malformed JSON ({exc.msg} at column {column})")


def json_array(path: Path) -> Iterator[tuple[int, object]]:
    """Elements of a top-level JSON array with the line each starts on (json.load gives no positions). A syntax
    error ends the array's reading: DatasetError naming the line and column."""
    text = path.read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    try:
        position = text.index("[")
    except ValueError:
        raise DatasetError(f"{path}: expected a JSON array of problems") from None
    position += 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text):
            raise DatasetError(f"{path}: the JSON array is not closed")
        if text[position] == "]":
            return
        lineno = text.count("\n", 0, position) + 1
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            line, column = error_position(exc)
            raise DatasetError(
                f"{path}:{line}: malformed JSON ({exc.msg} at column {column}); the rest of the array cannot be read"
            ) from None
        yield lineno, item


def json_records(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, record) from a ``.json`` array or a ``.jsonl`` file (any other suffix reads as jsonl)."""
    return json_array(path) if path.suffix == ".json" else json_lines(path)


def require_file(path: str | Path | None, source: str) -> Path:
    if path is None:
        raise DatasetError(f"dataset {source!r} needs a path (e.g. -T path=data/problems.jsonl)")
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist (resolved to {path.resolve()})")
    return path


def read_rows(
    name: str,
    records: Iterable[tuple[str, object]],
    read_row: Callable[[object, int], object],
    *,
    skip_bad_rows: bool = False,
) -> LoadedProblems:
    """Every record through ``read_row(record, index)`` (``index``: the record's position, bad rows included, so
    default ids do not move when rows are skipped). ``records``: (where, record) pairs, ``where`` as a message names
    the row. A record that is ``Malformed`` or whose ``read_row`` raises ``RowError`` is a bad row, and so is a second
    row with an id already read. UnreadableRows lists them all; with ``skip_bad_rows`` the others are returned, the bad
    ones in ``.skipped``. DatasetError when no row is left."""
    problems, bad, first_line = [], [], {}
    total = 0
    for index, (where, record) in enumerate(records):
        total += 1
        if isinstance(record, Malformed):
            bad.append(BadRow(where, record.reason))
            continue
        try:
            problem = read_row(record, index)
        except RowError as exc:
            bad.append(BadRow(where, str(exc)))
            continue
        if problem.id in first_line:
            bad.append(BadRow(where, f"duplicate id {problem.id!r} (first used at {first_line[problem.id]})"))
            continue
        first_line[problem.id] = where
        problems.append(problem)
    if bad and not skip_bad_rows:
        raise UnreadableRows(name, bad, total)
    if not problems:
        skipped = f" ({len(bad)} unreadable rows skipped)" if bad else ""
        raise DatasetError(f"{name}: no problems in file{skipped}")
    return LoadedProblems(problems, bad, total)


def file_records(path: Path) -> Iterator[tuple[str, object]]:
    """(``file:line``, record) for each record of a ``.jsonl`` or ``.json`` file."""
    return ((f"{path}:{lineno}", record) for lineno, record in json_records(path))
