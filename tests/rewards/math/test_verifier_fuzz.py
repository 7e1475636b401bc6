"""Fuzzing: any candidate string gives a bool (never an exception, never a hang); algebra stays honest.

No completion can stop a run (#39): over arbitrary text and LaTeX-like token streams, ``is_correct`` gives a
bool, ``grade`` a Verdict, and every math reward function (the math domain row's ``rewards``) a float or a
documented ``None`` with its reason; the code reward too, where its sandbox runs (a few examples: it is slow).
Derandomized and bounded, so the default suite runs the same examples everywhere in well under a minute.
"""

import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from problems.math_domain import MATH
from rewards import Reason, Verdict, code_tests, grade, is_correct
from rewards.code.code_rewards import CODE_OUTCOMES_WITHOUT_A_VERDICT
from rewards.math.math_rewards import MATH_OUTCOMES, OUTCOMES_WITHOUT_A_VERDICT
from rewards.math.math_verifier import check

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TOKENS = [
    "0",
    "1",
    "2",
    "7",
    "12",
    "3.5",
    "1,000",
    "x",
    "y",
    "+",
    "-",
    "*",
    "/",
    "^",
    "=",
    "<",
    ",",
    " ",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    r"\{",
    r"\}",
    r"\frac",
    r"\sqrt",
    r"\pi",
    r"\infty",
    r"\pm",
    r"\cdot",
    r"\times",
    "!",
    "%",
    "$",
    r"\text{ cm}",
    r"\boxed",
    " or ",
    r"\left(",
    r"\right)",
    r"\begin{pmatrix}",
    r"\end{pmatrix}",
    "&",
    r"\\",
    "e",
    "i",
    r"\sin",
    r"\log",
    "_",
    "'",
    '"',
    "__import__",
    "\u00b2",
    "\u2212",
    ".",
]
math_strings = st.lists(st.sampled_from(TOKENS), max_size=14).map("".join)
REFERENCES = ["5", "0.5", r"\frac{1}{2}", "2x+2", "(1, 2)", "[0, 9)", r"\{1, 2\}", r"5\text{ cm}", "x = 3", r"\sqrt{2}"]


@SETTINGS
@given(math_strings, st.sampled_from(REFERENCES))
def test_any_candidate_gives_a_bool_quickly(candidate, reference):
    start = time.monotonic()
    outcome = check(candidate, reference)
    assert isinstance(outcome.equal, bool) and isinstance(outcome.reason, Reason)
    assert time.monotonic() - start < 3.0


@SETTINGS
@given(st.text(max_size=60), st.sampled_from(REFERENCES))
def test_arbitrary_unicode_never_raises(candidate, reference):
    assert isinstance(is_correct(candidate, reference), bool)


coefficients = st.lists(st.integers(min_value=-9, max_value=9), min_size=1, max_size=4)


def poly(coeffs: list[int], var: str = "x") -> str:
    terms = [f"({c})*{var}^{k}" for k, c in enumerate(coeffs) if c]
    return " + ".join(terms) or "0"


def factored(roots: list[int], scale: int) -> str:
    return f"{scale}" + "".join(f"(x - ({r}))" for r in roots)


def expanded(roots: list[int], scale: int) -> list[int]:
    coeffs = [scale]
    for r in roots:  # multiply by (x - r)
        shifted = [0] + coeffs
        coeffs = [shifted[i] - r * (coeffs[i] if i < len(coeffs) else 0) for i in range(len(shifted))]
    return coeffs


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=3), st.integers(min_value=1, max_value=4))
def test_factored_polynomial_equals_its_expansion(roots, scale):
    assert is_correct(factored(roots, scale), poly(expanded(roots, scale)))


@settings(max_examples=25, deadline=None)
@given(coefficients, coefficients)
def test_different_polynomials_are_never_equal(a, b):
    trimmed_a, trimmed_b = list(a), list(b)
    while trimmed_a and trimmed_a[-1] == 0:
        trimmed_a.pop()
    while trimmed_b and trimmed_b[-1] == 0:
        trimmed_b.pop()
    if trimmed_a == trimmed_b:
        return
    assert not is_correct(poly(a), poly(b) if trimmed_b else "0")


# -- no completion can stop a run -------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
LATEX_TOKENS = [
    *"0123456789",
    "12",
    "3.5",
    "-",
    "+",
    "*",
    "/",
    "^",
    "_",
    "=",
    "<",
    ",",
    ";",
    ".",
    " ",
    "\n",
    "$",
    "$$",
    "{",
    "}",
    "{}",
    "(",
    ")",
    "[",
    "]",
    "|",
    "&",
    "!",
    "%",
    "x",
    "y",
    "n",
    "e",
    "i",
    "\\",
    r"\frac",
    r"\dfrac",
    r"\sqrt",
    r"\sqrt[3]",
    r"\binom",
    r"\pi",
    r"\infty",
    r"\pm",
    r"\cdot",
    r"\times",
    r"\div",
    r"\le",
    r"\ne",
    r"\in",
    r"\cup",
    r"\emptyset",
    r"\sin",
    r"\log",
    r"\ln",
    r"\sum",
    r"\prod",
    r"\int",
    r"\lim",
    r"\left(",
    r"\right)",
    r"\left.",
    r"\{",
    r"\}",
    r"\,",
    r"\quad",
    r"\boxed{",
    r"\fbox{",
    r"\text{",
    r"\text{ cm}",
    r"\mathrm{",
    r"\mathbf{",
    r"\operatorname{",
    r"\begin{pmatrix}",
    r"\end{pmatrix}",
    r"\begin{cases}",
    r"\end{cases}",
    r"\foo",
    "\\\\frac",
    "ANSWER: ",
    "\nANSWER: ",
    " or ",
    " and ",
    "<think>",
    "</think>",
    "__import__('os')",
    "9" * 60,
    "10^{10^{10}}",
    "\u00b2",
    "\u2212",
    "\u221a",
    "\u00bd",
    "\uff11",
    "\u03c0",
    "\u200b",
    "\x00",
    "\ud7ff",
]
latex_streams = st.lists(
    st.one_of(st.sampled_from(LATEX_TOKENS), st.sampled_from(LATEX_TOKENS), st.text(max_size=3)), max_size=24
).map("".join)
# near-LaTeX that parses often, so many examples reach the symbolic workers and their limits
atoms = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from(["x", "y", "n", r"\pi", "e", "i", "0.5", "10^{400}", "2^{2^{20}}", "1000!", r"\infty"]),
)
near_latex = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda ab: rf"\frac{{{ab[0]}}}{{{ab[1]}}}"),
        st.tuples(inner, inner).map(lambda ab: f"{ab[0]}^{{{ab[1]}}}"),
        st.tuples(inner, inner).map(lambda ab: rf"\binom{{{ab[0]}}}{{{ab[1]}}}"),
        inner.map(lambda a: rf"\sqrt{{{a}}}"),
        inner.map(lambda a: f"({a})"),
        inner.map(lambda a: rf"\text{{{a}}}"),
        inner.map(lambda a: f"${a}$"),
        inner.map(lambda a: rf"\sin({a})"),
        st.tuples(inner, st.sampled_from(["+", "-", r"\cdot ", "/", ", ", " = ", " < ", r" \pm ", ""]), inner).map(
            "".join
        ),
    ),
    max_leaves=8,
)
completions = st.one_of(
    latex_streams,
    near_latex.map(lambda text: "ANSWER: " + text),
    near_latex.map(lambda text: "\\boxed{" + text + "}"),
    latex_streams.map(lambda text: "ANSWER: " + text),
    latex_streams.map(lambda text: "\\boxed{" + text + "}"),
    st.tuples(st.text(max_size=40), latex_streams).map(lambda pair: f"{pair[0]}\nANSWER: {pair[1]}"),
    st.text(max_size=80),
)
FUZZ_REFERENCES = [*REFERENCES, "27", "-3", r"\frac{3}{4}", r"(-\infty, 2]", "x^2-1", r"1\text{ m}", r"3, -2", "50\\%"]
KNOWN = [  # candidates that raised out of the reward function before #39 (each stopped a training run)
    ("ANSWER: }\\text{{5}", "5"),  # unbalanced braces: Unparseable escaped grade()
    ("ANSWER: \\binom{20000}{10000}", "1"),  # a 6,000-digit integer printed in the worker: VerifierBug
]


def _math_rewards():
    return dict(MATH.rewards)


@FUZZ
@given(completions, st.sampled_from(FUZZ_REFERENCES))
@example(*KNOWN[0])
def test_is_correct_and_grade_return_a_verdict_for_any_text(completion, reference):
    assert isinstance(is_correct(completion, reference), bool)
    for text in (completion, "ANSWER: " + completion):
        verdict = grade(text, reference)
        assert isinstance(verdict, Verdict) and isinstance(verdict.reason, Reason)


@FUZZ
@given(st.lists(completions, min_size=1, max_size=3), st.sampled_from(FUZZ_REFERENCES))
@example([KNOWN[0][0]], KNOWN[0][1])
@example([KNOWN[1][0]], KNOWN[1][1])
def test_every_math_reward_function_gives_a_float_or_a_documented_none(texts, reference):
    for name, func in _math_rewards().items():
        metrics, extras = {}, {}
        rewards = func(
            completions=texts,
            answer=[reference] * len(texts),
            log_metric=metrics.__setitem__,
            log_extra=extras.__setitem__,
        )
        assert len(rewards) == len(texts), name
        reasons = extras[f"{func.__name__}/reason"]
        for value, reason in zip(rewards, reasons):
            assert value is None or (isinstance(value, float) and 0.0 <= value <= 1.0), (name, value)
            assert (value is None) == (reason in OUTCOMES_WITHOUT_A_VERDICT), (name, value, reason)
        if metrics:  # correctness: every outcome counted, shares summing to one
            assert set(metrics) == {"verdict/" + outcome for outcome in MATH_OUTCOMES}
            assert sum(metrics.values()) == pytest.approx(1.0)


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.one_of(latex_streams, st.text(max_size=60)), min_size=1, max_size=2))
def test_the_code_reward_gives_a_float_or_a_documented_none(needs_sandbox, bodies):
    tests = {"asserts": ["assert f(1) == 1"], "entry_point": "f"}
    texts = [f"```python\n{body}\n```" for body in bodies] + ["```python\ndef f(x):\n    return x\n```"]
    extras = {}
    rewards = code_tests(completions=texts, tests=[tests] * len(texts), log_extra=extras.__setitem__)
    assert rewards[-1] == 1.0
    for value, reason in zip(rewards, extras["code_tests/reason"]):
        assert value is None or 0.0 <= value <= 1.0
        assert (value is None) == (reason in CODE_OUTCOMES_WITHOUT_A_VERDICT), (value, reason)
