"""Code problems: the bundled set (``problems/data/code_problems.jsonl``) or your own file in that format.

One JSON object per line: ``{"id", "prompt", "tests", "solution"?}`` where ``tests`` is one of the
shapes ``rewards.code.code_spec`` accepts (HumanEval ``check``, MBPP ``asserts``, stdin/stdout ``io``) and
``solution`` an optional reference solution (tests check that it passes). Bad records are reported all at
once, ``file:line: reason`` (``problems/file_rows.py``), or left out with ``skip_bad_rows``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from problems.file_rows import RowError, file_records, read_rows, require_file
from rewards import InvalidTests, build_code_messages, parse_test_spec

BUNDLED_CODE_PROBLEMS = Path(__file__).parent / "data" / "code_problems.jsonl"  # problems package data


@dataclass(frozen=True)
class CodeProblem:
    id: str
    prompt: str
    tests: str  # JSON text of the test spec: what the reward's ``tests`` column and the Inspect target hold
    entry_point: str | None  # None for stdin/stdout problems
    solution: str | None = None

    def messages(self) -> list[dict[str, str]]:
        """The chat prompt both training and evals send (``rewards.build_code_messages``)."""
        return build_code_messages(self.prompt, self.entry_point)


def _problem(record: object, index: int) -> CodeProblem:
    if not isinstance(record, dict):
        raise RowError(f"expected an object with id, prompt, tests; got {type(record).__name__}")
    missing = [key for key in ("id", "prompt", "tests") if key not in record]
    if missing:
        raise RowError(f"missing field(s) {missing} (need id, prompt, tests)")
    try:
        spec = parse_test_spec(record["tests"])
    except InvalidTests as exc:
        raise RowError(f"field 'tests': {exc}") from None
    tests = record["tests"] if isinstance(record["tests"], str) else json.dumps(record["tests"], sort_keys=True)
    solution = record.get("solution")
    if solution is not None and not isinstance(solution, str):
        raise RowError("field 'solution' must be a string of Python code")
    return CodeProblem(str(record["id"]), str(record["prompt"]), tests, spec.entry_point, solution)


def load_code_problems(
    path: str | Path | None = None, limit: int | None = None, *, skip_bad_rows: bool = False
) -> list[CodeProblem]:
    """Problems from ``path`` (.jsonl or .json), by default the bundled set, in file order; every bad row reported at
    once, or left out with ``skip_bad_rows`` (the list's ``.skipped`` names them)."""
    path = BUNDLED_CODE_PROBLEMS if path is None else require_file(path, "code")
    problems = read_rows(str(path), file_records(path), _problem, skip_bad_rows=skip_bad_rows)
    if limit is not None:
        del problems[limit:]
    return problems
