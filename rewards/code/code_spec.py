"""Trusted unit tests for a code problem, split into the tests the host counts.

Three shapes are accepted (a dict, or its JSON text, as a dataset column holds it):

- HumanEval: ``{"check": "def check(candidate): assert ...", "entry_point": "f"}``. Each top-level
  statement of ``check`` that contains an ``assert`` is one test (statements before it run with it);
  ``assert True``-style lines are dropped, they cannot fail.
- MBPP: ``{"asserts": ["assert f(1) == 2", ...], "entry_point": "f", "setup": "optional code"}``.
- stdin/stdout: ``{"io": [{"input": "1 2\\n", "output": "3\\n"}, ...]}``.

Only reference tests are parsed here (with ``ast``, they are trusted data); model text never is.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

MAX_TESTS = 500
MAX_TEST_SOURCE_CHARS = 1_000_000


class InvalidTests(ValueError):
    """The problem's tests cannot be used (a dataset bug, not the model's fault)."""


@dataclass(frozen=True)
class IOCase:
    input: str
    output: str


@dataclass(frozen=True)
class TestSpec:
    """Tests in the form the judge runs: a prelude, then one source snippet per counted test."""

    __test__ = False  # not a pytest class

    entry_point: str | None = None
    prelude: str = ""
    tests: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # names the judge binds to the proxy of the model's function
    io_cases: tuple[IOCase, ...] = ()

    @property
    def is_io(self) -> bool:
        return bool(self.io_cases)

    @property
    def total(self) -> int:
        return len(self.io_cases) or len(self.tests)


def parse_test_spec(tests: Any) -> TestSpec:
    """A :class:`TestSpec` from a dict or JSON text; :class:`InvalidTests` says what is wrong."""
    if isinstance(tests, TestSpec):
        return tests
    if isinstance(tests, str):
        if len(tests) > MAX_TEST_SOURCE_CHARS:
            raise InvalidTests(f"tests are {len(tests)} characters (limit {MAX_TEST_SOURCE_CHARS})")
        try:
            tests = json.loads(tests)
        except json.JSONDecodeError as exc:
            raise InvalidTests(f"tests are not valid JSON: {exc}") from exc
    if not isinstance(tests, dict):
        raise InvalidTests(f"tests must be a dict with 'check', 'asserts' or 'io', got {type(tests).__name__}")
    kinds = [key for key in ("check", "asserts", "io") if tests.get(key)]
    if len(kinds) != 1:
        raise InvalidTests(
            f"tests need exactly one of 'check', 'asserts' or 'io' (non-empty); got keys {sorted(tests)}"
        )
    if kinds == ["io"]:
        return _io_spec(tests["io"])
    entry_point = tests.get("entry_point")
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise InvalidTests(f"function tests need 'entry_point', a Python identifier; got {entry_point!r}")
    spec = _check_spec(tests["check"], entry_point) if kinds == ["check"] else _asserts_spec(tests, entry_point)
    if not spec.tests:
        raise InvalidTests("the tests contain no assert that can fail")
    if len(spec.tests) > MAX_TESTS:
        raise InvalidTests(f"{len(spec.tests)} tests (limit {MAX_TESTS})")
    return spec


def _parse(source: str, what: str) -> ast.Module:
    if not isinstance(source, str):
        raise InvalidTests(f"{what} must be a string, got {type(source).__name__}")
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise InvalidTests(f"{what} is not valid Python (line {exc.lineno}: {exc.msg})") from exc


def _always_passes(node: ast.AST) -> bool:
    """``assert True`` and the like (HumanEval pads tests with them); ``assert False`` can fail."""
    return isinstance(node, ast.Assert) and isinstance(node.test, ast.Constant) and bool(node.test.value)


def _can_fail(statement: ast.stmt) -> bool:
    return any(isinstance(node, ast.Assert) and not _always_passes(node) for node in ast.walk(statement))


def _check_spec(source: str, entry_point: str) -> TestSpec:
    module = _parse(source, "'check'")
    checks = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
    if len(checks) != 1 or not checks[0].args.args:
        raise InvalidTests("'check' must define one function `def check(candidate): ...` at top level")
    check = checks[0]
    prelude = ast.unparse([node for node in module.body if node is not check])
    tests, pending = [], []
    for statement in check.body:
        if _always_passes(statement):
            continue
        pending.append(statement)
        if _can_fail(statement):
            tests.append(ast.unparse(pending))
            pending = []
    if pending and tests:  # trailing statements run with the last test
        tests[-1] += "\n" + ast.unparse(pending)
    return TestSpec(entry_point, prelude, tuple(tests), (check.args.args[0].arg, entry_point))


def _asserts_spec(tests: dict, entry_point: str) -> TestSpec:
    asserts = tests["asserts"]
    if not isinstance(asserts, list):
        raise InvalidTests(f"'asserts' must be a list of assert statements, got {type(asserts).__name__}")
    sources = []
    for number, source in enumerate(asserts, 1):
        module = _parse(source, f"assert {number}")
        if len(module.body) != 1 or not isinstance(module.body[0], ast.Assert):
            raise InvalidTests(f"assert {number} must be a single assert statement: {source!r}")
        if _can_fail(module.body[0]):
            sources.append(ast.unparse(module))
    setup = tests.get("setup") or ""
    _parse(setup, "'setup'")
    return TestSpec(entry_point, setup, tuple(sources), (entry_point,))


def _io_spec(cases: Any) -> TestSpec:
    if not isinstance(cases, list) or len(cases) > MAX_TESTS:
        raise InvalidTests(f"'io' must be a list of at most {MAX_TESTS} {{'input', 'output'}} cases")
    parsed = []
    for number, case in enumerate(cases, 1):
        if not (isinstance(case, dict) and isinstance(case.get("input"), str) and isinstance(case.get("output"), str)):
            raise InvalidTests(f"io case {number} must be {{'input': str, 'output': str}}, got {case!r:.200}")
        parsed.append(IOCase(case["input"], case["output"]))
    return TestSpec(io_cases=tuple(parsed))


def outputs_match(actual: str, expected: str) -> bool:
    """stdout comparison: exact up to trailing whitespace on each line and trailing blank lines.

    >>> outputs_match("3 \\n\\n", "3")
    True
    >>> outputs_match("3\\n4", "3 4")
    False
    """

    def canonical(text: str) -> list[str]:
        lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    return canonical(actual) == canonical(expected)
