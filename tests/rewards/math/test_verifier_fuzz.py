"""Fuzzing: any candidate string gives a bool (never an exception, never a hang); algebra stays honest."""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewards import Reason, is_correct
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
