"""Code problems: the bundled set (``problems/data/code_problems.jsonl``) or your own file in that format.

One JSON object per line: ``{"id", "prompt", "tests", "solution"?}`` where ``tests`` is one of the
shapes ``rewards.code.code_spec`` accepts (HumanEval ``check``, MBPP ``asserts``, stdin/stdout ``io``) and
``solution`` an optional reference solution (tests check that it passes). Bad records raise
``DatasetError`` naming file:line.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from problems.math_data import DatasetError, json_records, require_file
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


def _problem(record: object, where: str) -> CodeProblem:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected an object with id, prompt, tests; got {type(record).__name__}")
    missing = [key for key in ("id", "prompt", "tests") if key not in record]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {missing} (need id, prompt, tests)")
    try:
        spec = parse_test_spec(record["tests"])
    except InvalidTests as exc:
        raise DatasetError(f"{where}: field 'tests': {exc}") from None
    tests = record["tests"] if isinstance(record["tests"], str) else json.dumps(record["tests"], sort_keys=True)
    solution = record.get("solution")
    if solution is not None and not isinstance(solution, str):
        raise DatasetError(f"{where}: field 'solution' must be a string of Python code")
    return CodeProblem(str(record["id"]), str(record["prompt"]), tests, spec.entry_point, solution)


def load_code_problems(path: str | Path | None = None, limit: int | None = None) -> list[CodeProblem]:
    """Problems from ``path`` (.jsonl or .json), by default the bundled set, in file order."""
    path = BUNDLED_CODE_PROBLEMS if path is None else require_file(path, "code")
    rows = json_records(path)
    problems = [_problem(record, f"{path}:{lineno}") for lineno, record in rows]
    if not problems:
        raise DatasetError(f"{path}: no problems in file")
    duplicates = sorted(pid for pid, count in Counter(p.id for p in problems).items() if count > 1)
    if duplicates:
        raise DatasetError(f"{path}: duplicate ids {duplicates[:5]}")
    return problems[:limit] if limit is not None else problems
