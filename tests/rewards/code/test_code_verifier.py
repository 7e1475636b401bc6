"""The code verifier end to end: extraction policy, test formats, honest partial credit, clear errors."""

import asyncio
import json
import time

import pytest

from rewards import (
    InvalidTests,
    Reason,
    SandboxUnavailable,
    extract_code,
    grade_code,
    grade_code_sync,
    parse_test_spec,
    sandbox,
)
from rewards.code.code_format import build_code_prompt, tamper_markers
from rewards.code.code_rewards import code_tests
from rewards.code.code_spec import outputs_match
from rewards.code.code_verifier import JudgeError, grade_code_many

# --- extraction: (completion, expected code) ----------------------------------------------------------
EXTRACTION = [
    # one block
    ("```python\nx = 1\n```", "x = 1\n"),
    ("Here:\n```py\nx = 1\n```\ndone", "x = 1\n"),
    ("```Python3\nx = 1\n```", "x = 1\n"),
    ("  ```python  \nx = 1\n  ```  ", "x = 1\n"),
    # several blocks: the last one wins
    ("```python\nx = 1\n```\nfix:\n```python\nx = 2\n```", "x = 2\n"),
    ("```python\nx = 1\n```\n```\noutput: 1\n```", "x = 1\n"),
    # no answer
    ("x = 1", None),
    ("```\nx = 1\n```", None),  # untagged
    ("```javascript\nx = 1\n```", None),
    ("```python\nx = 1\n", None),  # cut off before the closing fence
    ("```python x = 1 ```", None),  # inline, not a block
    ("", None),
]


@pytest.mark.parametrize("completion, code", EXTRACTION)
def test_extraction_policy(completion, code):
    assert extract_code(completion) == code


def test_extraction_is_linear_on_pathological_text():
    text = "```python\n" * 50_000 + "x"
    started = time.perf_counter()
    assert extract_code(text) is None
    assert time.perf_counter() - started < 1.0


# --- tamper markers are reported, not judged ---------------------------------------------------------
@pytest.mark.parametrize(
    "code, markers",
    [
        ("def f(x):\n    return x", []),
        ("import sys\nsys.exit(0)", ["sys.exit"]),
        ("import os\nos._exit(0)", ["os._exit"]),
        ("import atexit", ["atexit"]),
        ("import sys\nsys._getframe(1)", ["_getframe"]),
        ("import gc\ngc.get_objects()", ["gc.get_objects"]),
        ("class A:\n    def __eq__(self, o): return True", ["__eq__ override"]),
        ("import builtins\nbuiltins.print = None", ["builtins assignment"]),
        ("open('/proc/1/cmdline')", ["/proc read"]),
        ("raise unittest.SkipTest('x')", ["unittest/assert patching"]),
    ],
)
def test_tamper_markers(code, markers):
    assert tamper_markers(code) == markers


# --- test formats ---------------------------------------------------------------------------------
HUMANEVAL = {
    "check": (
        "import math\n\nMETADATA = {'author': 'x'}\n\n"
        "def helper(v):\n    return v * 2\n\n"
        "def check(candidate):\n"
        "    assert True, 'always'\n"
        "    expected = helper(3)\n"
        "    assert candidate([1, 2, 3]) == expected\n"
        "    for xs in ([], [5]):\n"
        "        assert candidate(xs) == sum(xs)\n"
        "    assert math.isclose(candidate([0.1, 0.2]), 0.3)\n"
        "    try:\n        candidate(None)\n        assert False, 'no error'\n    except TypeError:\n        pass\n"
    ),
    "entry_point": "total",
}
MBPP = {
    "asserts": ["assert total([1, 2]) == 3", "assert total([]) == 0", "assert total((4,)) == 4"],
    "entry_point": "total",
}
IO = {"io": [{"input": "1 2 3\n", "output": "6\n"}, {"input": "\n", "output": "0"}, {"input": "5\n", "output": "5\n"}]}

RIGHT = "def total(xs):\n    if xs is None:\n        raise TypeError('xs')\n    return sum(xs)\n"
RIGHT_IO = "print(sum(map(int, input().split())))\n"


def test_humaneval_split_counts_each_assert_statement_and_drops_constant_asserts():
    spec = parse_test_spec(HUMANEVAL)
    assert spec.total == 4  # candidate([1,2,3]) (with its setup line), the loop, isclose, the try block
    assert spec.names == ("candidate", "total")
    assert "expected = helper(3)" in spec.tests[0]
    assert "METADATA" in spec.prelude and "def check" not in spec.prelude


# (tests, code, passed, total)
GRADES = [
    # HumanEval check(candidate)
    (HUMANEVAL, RIGHT, 4, 4),
    (HUMANEVAL, "def total(xs):\n    return sum(xs or [])\n", 3, 4),  # no TypeError for None
    (HUMANEVAL, "def total(xs):\n    return 6\n", 1, 4),
    (HUMANEVAL, "def totl(xs):\n    return sum(xs)\n", 0, 4),  # wrong name
    (HUMANEVAL, "def total(xs)\n    return 0\n", 0, 4),  # syntax error
    # MBPP asserts
    (MBPP, RIGHT, 3, 3),
    (MBPP, "def total(xs):\n    return len(xs) * 1.5\n", 2, 3),  # 3.0 == 3 and 0.0 == 0: Python equality
    (MBPP, "def total(xs):\n    return list(xs)\n", 0, 3),
    # stdin/stdout
    (IO, RIGHT_IO, 3, 3),
    (IO, "print(6)\n", 1, 3),
    (
        IO,
        "import sys\nprint(sum(map(int, sys.stdin.read().split())), end='   \\n\\n')\n",
        3,
        3,
    ),  # trailing space ignored
    (IO, "raise SystemExit(1)\n", 0, 3),
]


@pytest.mark.usefixtures("needs_sandbox")
@pytest.mark.parametrize("tests, code, passed, total", GRADES)
def test_partial_credit_is_the_honest_fraction(tests, code, passed, total):
    verdict = grade_code_sync(f"Solution:\n```python\n{code}```\n", tests)
    assert (verdict.passed, verdict.total) == (passed, total), verdict.explanation
    assert verdict.fraction == passed / total
    assert verdict.correct == (passed == total)
    assert verdict.reason is (Reason.CORRECT if passed == total else Reason.TESTS_FAILED)
    assert len(verdict.outcomes) == total and sum(o.passed for o in verdict.outcomes) == passed
    assert verdict.answer == code


@pytest.mark.usefixtures("needs_sandbox")
def test_failures_are_explained():
    verdict = grade_code_sync("```python\ndef total(xs):\n    return 6\n```", MBPP)
    assert verdict.explanation.startswith("passed 0/3 tests; failed: 0, 1, 2; first failure (test 0)")
    assert "assert total([1, 2]) == 3" in verdict.outcomes[0].message
    looping = grade_code_sync(
        "```python\ndef total(xs):\n    while True: pass\n```", MBPP, sandbox.SandboxLimits(wall_s=1.5)
    )
    assert looping.passed == 0 and "limits hit" in looping.explanation and "timeout" in looping.explanation


def test_no_code_is_no_answer_and_huge_code_is_not_run():
    verdict = grade_code_sync("The answer is sum(xs).", MBPP)
    assert (verdict.reason, verdict.passed, verdict.total, verdict.fraction) == (Reason.NO_ANSWER, 0, 3, 0.0)
    huge = grade_code_sync("```python\n" + "x = 1\n" * 20_000 + "```", MBPP)
    assert huge.reason is Reason.TOO_COMPLEX and huge.fraction == 0.0


@pytest.mark.parametrize(
    "tests, message",
    [
        ("not json", "not valid JSON"),
        ({"asserts": [], "entry_point": "f"}, "exactly one of"),
        ({"asserts": ["assert f(1) == 1"]}, "entry_point"),
        ({"asserts": ["x = 1"], "entry_point": "f"}, "single assert"),
        ({"asserts": ["assert True"], "entry_point": "f"}, "no assert that can fail"),
        ({"check": "def helper(c):\n    assert c(1)", "entry_point": "f"}, r"def check\(candidate\)"),
        ({"check": "def check(c):\n    assert c(1) ==", "entry_point": "f"}, "not valid Python"),
        ({"io": [{"input": "1"}]}, "io case 1"),
        ({"io": [], "asserts": ["assert f(1)"], "entry_point": "f"}, None),
    ],
)
def test_unusable_tests_raise_invalid_tests(tests, message):
    if message is None:
        assert parse_test_spec(tests).total == 1
        return
    with pytest.raises(InvalidTests, match=message):
        grade_code_sync("```python\nx = 1\n```", tests)


def test_json_text_and_dicts_are_the_same_spec():
    assert parse_test_spec(json.dumps(MBPP)) == parse_test_spec(MBPP)


@pytest.mark.parametrize(
    "actual, expected, same", [("3\n", "3", True), ("3  \n\n\n", "3\n", True), ("1\n2", "1 2", False), ("", "0", False)]
)
def test_io_output_comparison(actual, expected, same):
    assert outputs_match(actual, expected) is same


def test_prompt_names_the_function_and_the_fence():
    assert "`total`" in build_code_prompt("Sum a list.", "total") and "```python" in build_code_prompt("x", None)


@pytest.mark.usefixtures("needs_sandbox")
def test_many_completions_grade_concurrently_in_one_loop():
    items = [(f"```python\n{RIGHT if i % 2 else 'def total(xs): return 0'}\n```", MBPP) for i in range(12)]
    verdicts = asyncio.run(grade_code_many(items))
    assert [v.passed for v in verdicts] == [3 if i % 2 else 1 for i in range(12)]


@pytest.mark.usefixtures("needs_sandbox")
def test_cancelling_a_grade_leaves_no_process():
    async def cancel_midway():
        task = asyncio.ensure_future(grade_code("```python\ndef total(xs):\n    while True: pass\n```", MBPP))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())  # needs_sandbox then asserts no sandbox process remains


def test_missing_isolation_is_an_error_never_an_unsandboxed_run(monkeypatch):
    monkeypatch.setattr(sandbox, "_bwrap", lambda: None)
    sandbox._static_problem.cache_clear()
    sandbox._probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
            grade_code_sync("```python\ndef total(xs):\n    return sum(xs)\n```", MBPP)
    finally:
        monkeypatch.undo()
        sandbox._static_problem.cache_clear()
        sandbox._probe.cache_clear()


def test_a_bwrap_that_cannot_start_explains_how_to_enable_namespaces(monkeypatch):
    if sandbox._static_problem():
        pytest.skip("bubblewrap is not installed here")
    monkeypatch.setattr(sandbox, "_system_mounts", lambda: ["--no-such-option"])
    sandbox._probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="could not start a sandbox.*user namespaces"):
            sandbox.ensure_available()
    finally:
        monkeypatch.undo()
        sandbox._probe.cache_clear()


@pytest.mark.usefixtures("needs_sandbox")
def test_a_sandbox_that_fails_to_start_is_an_error_not_a_wrong_answer(monkeypatch):
    """If bwrap itself fails mid-run (after the availability probe), grading raises instead of scoring 0."""
    real = sandbox.bwrap_command

    def broken(*args, **kwargs):
        command = real(*args, **kwargs)
        return (
            command[: command.index("--unshare-all")] + ["--no-such-option"] + command[command.index("--unshare-all") :]
        )

    monkeypatch.setattr(sandbox, "bwrap_command", broken)
    with pytest.raises(sandbox.SandboxError, match="did not start"):
        grade_code_sync("```python\nprint(1)\n```", IO)
    with pytest.raises(sandbox.SandboxError, match="did not start"):
        grade_code_sync(f"```python\n{RIGHT}```", MBPP)


LIMIT_CASES = [
    # (code, limits, flags expected in the explanation, flags that must not appear)
    ("def total(xs):\n    while True: pass\n", sandbox.SandboxLimits(wall_s=3, cpu_s=1), ["cpu time"], ["timeout"]),
    ("import time\ndef total(xs):\n    time.sleep(60)\n", sandbox.SandboxLimits(wall_s=1.5), ["timeout"], ["cpu time"]),
    ("def total(xs):\n    return bytearray(8 << 30)\n", sandbox.SandboxLimits(), ["memory"], ["timeout"]),
    # the solution's own text cannot raise a flag: only the judge and the host set them
    (
        "def total(xs):\n    raise MemoryError('time limit reached waiting for the solution')\n",
        sandbox.SandboxLimits(),
        ["memory"],
        ["timeout"],
    ),
    (
        "def total(xs):\n    raise ValueError('time limit reached; MemoryError; timeout')\n",
        sandbox.SandboxLimits(),
        [],
        ["timeout", "memory"],
    ),
]


@pytest.mark.usefixtures("needs_sandbox")
@pytest.mark.parametrize("code, limits, present, absent", LIMIT_CASES)
def test_limit_flags_come_from_the_machinery_not_from_model_text(code, limits, present, absent):
    verdict = grade_code_sync(f"```python\n{code}```", MBPP, limits)
    flags = verdict.explanation.partition("; limits hit: ")[2]
    assert verdict.passed == 0
    assert all(flag in flags for flag in present), verdict.explanation
    assert not any(flag in flags for flag in absent), verdict.explanation


# --- who is to blame when the judge stops: the solution (its tests fail) or the tests (an error) -------

IS_PRIME = "def is_prime(n):\n    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))"
PRIMES = {
    "setup": IS_PRIME,
    "asserts": [
        "assert primes(2) == [2, 3]",
        "assert all(is_prime(p) for p in primes(3))",
        "assert primes(1) == [2]",
    ],
    "entry_point": "primes",
}
# HumanEval style: the answer is kept in a variable and checked by a later test that makes no call.
PRIMES_KEPT = {
    "check": IS_PRIME + "\n\ndef check(candidate):\n    assert candidate(2) == [2, 3]\n    kept = candidate(3)\n"
    "    assert len(kept) == 1000\n    assert all(is_prime(p) for p in kept)\n",
    "entry_point": "primes",
}
# Right on the first tests; then numbers whose trusted primality check takes far longer than any limit.
SLOW_TO_CHECK = "def primes(n):\n    return [2, 3] if n == 2 else [2 ** 61 - 1] * 1000\n"


@pytest.mark.usefixtures("needs_sandbox")
@pytest.mark.parametrize(
    "tests, limits, failure, passed",
    [
        (PRIMES, sandbox.SandboxLimits(wall_s=1.5), "did not finish", [True, False, False]),  # the host's wait
        (PRIMES, sandbox.SandboxLimits(wall_s=4, cpu_s=1), "judge failed (exit 137)", [True, False, False]),
        (PRIMES_KEPT, sandbox.SandboxLimits(wall_s=1.5), "did not finish", [True, True, False]),
    ],
    ids=["overrun", "killed by its RLIMIT_CPU", "answer kept for a later test"],
)
def test_a_judge_stopped_by_the_solutions_answers_fails_only_that_completions_remaining_tests(
    tests, limits, failure, passed
):
    verdict = grade_code_sync(f"```python\n{SLOW_TO_CHECK}```", tests, limits)
    assert [o.passed for o in verdict.outcomes] == passed, verdict.explanation
    assert all(failure in o.message and "solution's answers" in o.message for o in verdict.outcomes if not o.passed)


@pytest.mark.usefixtures("needs_sandbox")
def test_a_judge_that_hangs_on_its_own_is_an_error_not_a_score():
    """The second test loops before it ever calls the solution: no solution could cause that."""
    tests = {"asserts": ["assert f(1) == 1", "assert any(iter(int, 1)) or f(1) == 1"], "entry_point": "f"}
    with pytest.raises(JudgeError, match="did not finish"):
        grade_code_sync("```python\ndef f(x):\n    return 2\n```", tests, sandbox.SandboxLimits(wall_s=1))


@pytest.mark.usefixtures("needs_sandbox")
def test_setup_code_that_fails_in_the_judge_makes_the_tests_unusable():
    broken = {"asserts": ["assert f(1) == 1"], "setup": "import no_such_module_anywhere", "entry_point": "f"}
    with pytest.raises(InvalidTests, match="setup code failed.*no_such_module_anywhere"):
        grade_code_sync("```python\ndef f(x):\n    return x\n```", broken)
    right = "```python\ndef total(xs):\n    return sum(xs)\n```"
    assert code_tests([right, right], tests=[broken, MBPP]) == [None, 1.0]
