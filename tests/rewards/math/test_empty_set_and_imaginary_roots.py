r"""Recall within the policy (issue #39): the empty set and complex roots, each with near misses.

Rows marked "was refused" returned False before: ``\{\}`` read as a set with an empty element, ``\emptyset`` sent to
the solver as ``\{\emptyset\}``, and ``x = \pm 3i`` kept as one equation (``\pm`` inside sympy) for an equation
reference.
"""

import pytest

from rewards import is_correct

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

EMPTY_SET = [
    P(r"\emptyset", r"\emptyset", True, id="same"),
    P(r"\varnothing", r"\emptyset", True, id="varnothing"),
    P(r"\{\}", r"\emptyset", True, id="empty-braces-was-refused"),
    P(r"\{ \}", r"\varnothing", True, id="empty-braces-spaced-was-refused"),
    P(r"\emptyset", r"\{\}", True, id="empty-braces-reference-was-invalid"),
    P(r"\emptyset", "x^2 < -1", True, id="no-real-solution-was-refused"),
    P(r"\varnothing", "|x| < -2", True, id="abs-below-negative-was-refused"),
    P(r"\{\}", "x^2 < -1", True, id="braces-no-real-solution-was-refused"),
    # near misses
    P(r"\emptyset", "x^2 > -1", False, id="all-reals-not-empty"),
    P(r"\emptyset", "x^2 < 1", False, id="interval-not-empty"),
    P(r"\{0\}", "x^2 < -1", False, id="zero-set-not-empty"),
    P("0", "x^2 < -1", False, id="zero-not-empty"),
    P("(-1, 1)", "x^2 < -1", False, id="interval-for-empty"),
    P("0", r"\emptyset", False, id="zero-for-emptyset"),
    P(r"\{0\}", r"\emptyset", False, id="set-of-zero-for-emptyset"),
    P(r"\{\emptyset\}", r"\emptyset", False, id="set-of-emptyset"),
    P(r"\emptyset", "0", False, id="emptyset-for-zero"),
    P(r"\emptyset", r"\{0\}", False, id="emptyset-for-set-of-zero"),
    P(r"\emptyset", "x^2 + 1 = 0", False, id="complex-roots-exist"),
]

IMAGINARY_ROOTS = [
    P(r"x = \pm 3i", "3i, -3i", True, id="pm-for-roots"),
    P(r"x = \pm 3 i", "3i, -3i", True, id="pm-spaced-for-roots"),
    P(r"\pm 3i", "3i, -3i", True, id="bare-pm-for-roots"),
    P(r"x = \pm 3i", "x = 3i, x = -3i", True, id="pm-for-named-roots"),
    P(r"x = \pm 3i", "x^2 + 9 = 0", True, id="pm-for-equation-was-refused"),
    P(r"x = \pm 3i", "x^2 = -9", True, id="pm-for-equation-2-was-refused"),
    P(r"x = \pm 3 i", "x^2 + 9 = 0", True, id="pm-spaced-for-equation-was-refused"),
    # near misses
    P(r"x = \pm 3", "3i, -3i", False, id="real-for-imaginary"),
    P(r"x = 3i", "3i, -3i", False, id="one-root"),
    P(r"x = \pm 3i", "3i", False, id="two-for-one"),
    P(r"x = \pm 3", "x^2 + 9 = 0", False, id="real-for-equation"),
    P(r"x = \pm i", "x^2 + 9 = 0", False, id="wrong-modulus"),
    P(r"x = \pm 3i", "x^2 = 9", False, id="imaginary-for-real-roots"),
    P(r"x = \pm 3i", "x^2 + 4 = 0", False, id="other-equation"),
    P(r"y = \pm 3i", "x^2 + 9 = 0", False, id="other-variable"),
    P("x = 3i", "x^2 + 9 = 0", False, id="one-root-of-equation"),
    P(r"x = \pm 3i", "x^3 + 9x = 0", False, id="root-zero-missing"),
    P(r"x = \pm 3y", "x^2 + 9 = 0", False, id="a-variable-not-i"),
    P(r"x = \pm 3i", "x^2 + 9y = 0", False, id="two-variables"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), EMPTY_SET + IMAGINARY_ROOTS)
def test_empty_set_and_imaginary_roots(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected
