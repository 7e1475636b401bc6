"""Adversarial candidates: code never runs, huge inputs return False fast, in any thread."""

import asyncio
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from rewards import InvalidReference, Reason, grade, is_correct
from rewards.math import math_verifier, worker_pool
from rewards.math.math_verifier import check
from rewards.math.worker_pool import Budget, VerifierTooSlow, WorkerPool

P = pytest.param
BOUND_S = 3.0  # generous for a loaded CI box; scripts/bench_verifier.py reports the real maximum


pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")


def injection_strings(marker):
    m = str(marker)
    return [
        f"__import__('pathlib').Path('{m}').touch()",
        f"__import__('os').system('touch {m}')",
        f"open('{m}', 'w').write('1')",
        f"(lambda: __import__('pathlib').Path('{m}').touch())()",
        f"\\text{{{m}}}; __import__('os').system('touch {m}')",
        f"exec(\"open('{m}','w')\")",
        f"eval(\"__import__('pathlib').Path('{m}').touch()\")",
        f"getattr(__builtins__, 'exec')(\"open('{m}','w')\")",
        f"x = __import__('pathlib').Path('{m}').touch()",
        f"\\frac{{__import__('pathlib').Path('{m}').touch()}}{{1}}",
    ]


@pytest.mark.parametrize("index", range(10))
def test_injection_never_executes(tmp_path, index):
    marker = tmp_path / "pwned"
    candidate = injection_strings(marker)[index]
    assert is_correct(candidate, "0") is False
    assert is_correct(candidate, "x") is False
    assert not marker.exists()


def test_injected_reference_is_a_dataset_error_and_does_not_execute(tmp_path):
    marker = tmp_path / "pwned"
    with pytest.raises(InvalidReference):
        is_correct("1", f"__import__('pathlib').Path('{marker}').touch()")
    assert not marker.exists()


HUGE = [
    pytest.param("9**9**9**9", id="python-tower"),
    pytest.param("9^{9^{9^{9}}}", id="latex-tower"),
    pytest.param("10^{10^{10}}", id="power-tower-2"),
    pytest.param("2^{10^{100}}", id="huge-exponent"),
    pytest.param("1000000!", id="factorial"),
    pytest.param("(10^{6})!", id="factorial-expr"),
    pytest.param("1e999999999", id="sci-exponent"),
    pytest.param("9" * 100_000, id="100k-digits"),
    pytest.param("(" * 500 + "1" + ")" * 500, id="deep-parens"),
    pytest.param("\\frac{" * 200 + "1" + "}{2}" * 200, id="deep-fracs"),
    pytest.param("\\sqrt{" * 300 + "2" + "}" * 300, id="deep-sqrt"),
    pytest.param("x" * 1_000_000, id="megabyte"),
    pytest.param("1+" * 400_000 + "1", id="long-sum"),
    pytest.param("(x+1)^{100000}", id="big-polynomial-power"),
    pytest.param("\\{" * 300 + "\\}" * 300, id="deep-sets"),
]


@pytest.mark.parametrize("candidate", HUGE)
def test_huge_inputs_are_false_fast(candidate):
    start = time.monotonic()
    outcome = check(candidate, "5")
    assert outcome.equal is False
    assert outcome.reason in (Reason.TOO_COMPLEX, Reason.UNPARSEABLE, Reason.MISMATCH)
    assert time.monotonic() - start < BOUND_S


def test_huge_inputs_from_worker_threads():
    candidates = [p.values[0] for p in HUGE]
    start = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda c: is_correct(c, "5"), candidates))
    assert results == [False] * len(candidates)
    assert time.monotonic() - start < BOUND_S * 3


def test_verifier_runs_in_a_thread_and_in_asyncio():
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("r", is_correct("2(x+1)", "2x+2")))
    thread.start()
    thread.join()

    async def main():
        return is_correct(r"\frac{1}{2}", "0.5"), await asyncio.to_thread(is_correct, "x^2", "x*x")

    assert out["r"] is True
    assert asyncio.run(main()) == (True, True)


def test_the_cpu_guard_stops_the_comparison_with_an_error_and_the_worker_recovers():
    pool = WorkerPool(size=1)
    try:
        heavy = "(x+1)^{300}(x-1)^{300}"
        with pytest.raises(VerifierTooSlow, match="CPU"):
            pool.compare(heavy, "(x^2-1)^{300}", None, Budget(time.monotonic() + 30, cpu_net=0.01))
        (worker,) = pool._idle  # the same worker, still warm
        assert worker.proc.poll() is None
        assert pool.compare("2x", "x+x", None, Budget.start())[0] == "equal"
    finally:
        pool.close()
    assert all(w.proc.poll() is not None for w in pool._live) and not pool._live


def test_consecutive_unbounded_sums_stay_fast_and_leave_the_verifier_working():
    """A sum over 10^10 terms is refused from its structure, before any work: fast every time."""
    slow = r"\sum_{k=1}^{10^{10}} k^k"  # within the size bounds; sympy cannot finish it
    for _ in range(4):
        start = time.monotonic()
        outcome = check(slow, r"5\sqrt{2}")  # a symbolic reference: a number one is refused before sympy (unevaluated)
        assert outcome.reason is Reason.TOO_COMPLEX and time.monotonic() - start < BOUND_S
    assert is_correct("2(x+1)", "2x+2")


def test_the_cpu_guard_raises_an_error_never_a_false_verdict(monkeypatch):
    """The CPU guard is a safety net: a verdict never comes from a clock (issue #29)."""
    monkeypatch.setattr(worker_pool, "CPU_NET_S", 0.001)
    monkeypatch.setattr(math_verifier, "_SYMBOLIC_CACHE_SIZE", 0)
    with pytest.raises(VerifierTooSlow):
        check("(x+1)^{3000}(x+2)", "(x+1)^{3001}+(x+1)^{3000}")


def test_worker_survives_a_fork(tmp_path):
    """A forked child (e.g. a DataLoader worker) must get its own pool, not the parent's pipes."""
    assert is_correct("x+x", "2x")
    code = "import os, sys\nfrom rewards import is_correct\nprint(is_correct('x+x', '2x'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "True", result.stderr
    if hasattr(os, "fork"):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, b"1" if is_correct("x*3", "3x") else b"0")
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(r, 1) == b"1"


def test_grade_explains_every_reason():
    assert grade("ANSWER: 18", "16").explanation == "got '18', want '16'"
    assert grade("no answer here", "16").reason is Reason.NO_ANSWER
    assert grade("ANSWER: 1\nANSWER: 2", "1").reason is Reason.HEDGED
    assert grade("ANSWER: 9^{9^{9^{9}}}", r"\sqrt{2}").reason is Reason.TOO_COMPLEX
    assert grade("ANSWER: 9 \\times 3", "27").reason is Reason.MISMATCH  # a computation does not answer a number
    assert grade("ANSWER: \uff11", "1").reason is Reason.UNPARSEABLE
    with pytest.raises(InvalidReference, match="cannot be parsed"):
        grade("ANSWER: 1", "\\frac{")


# (completion, reference, correct, reason): what grade() pays, given the whole completion
GRADE_CASES = [
    # --- hedges through extraction ---
    P("ANSWER: \\boxed{4} (or maybe 5)", "4", False, Reason.UNPARSEABLE, id="box-plus-alternative-on-answer-line"),
    P("ANSWER: 4\nWait, that's wrong, it is 5.", "4", False, Reason.HEDGED, id="retracted-answer"),
    P("ANSWER: 4\nWait, that's wrong, it is 5.", "5", False, Reason.HEDGED, id="retraction-is-not-an-answer"),
    P("\\boxed{1}\\boxed{0}", "0", False, Reason.HEDGED, id="two-boxes"),
    P("ANSWER: 4\nANSWER: 5", "4", False, Reason.HEDGED, id="two-answers-one-right"),
    # --- restatements that verify equal are one answer ---
    P("ANSWER: 4\nANSWER: 4.0", "4", True, Reason.CORRECT, id="restated-as-decimal"),
    # round 6 (issue #50): a value stated after the answer is one more statement, paid when it verifies equal
    P("\\boxed{\\frac{1}{2}} so ANSWER: 0.5", "0.5", True, Reason.CORRECT, id="value-after-the-box-restated"),
    P("\\boxed{\\frac{1}{2}} so ANSWER: 0.6", "0.5", False, Reason.HEDGED, id="another-value-after-the-box"),
    P("\\boxed{\\frac{1}{2}}\nANSWER: 0.5", "1/2", True, Reason.CORRECT, id="box-and-line-equal"),
    P("ANSWER: 4\nANSWER: 4.0", "5", False, Reason.HEDGED, id="restated-but-wrong"),
    P("ANSWER: x = 4\nANSWER: 4", "4", True, Reason.CORRECT, id="restated-with-name"),
    P("ANSWER: 4\nI hope it is correct.", "4", True, Reason.CORRECT, id="closing-prose"),
]


@pytest.mark.parametrize(("completion", "reference", "correct", "reason"), GRADE_CASES)
def test_grade_table(completion, reference, correct, reason):
    verdict = grade(completion, reference)
    assert (verdict.correct, verdict.reason) == (correct, reason), verdict
