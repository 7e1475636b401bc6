"""Property tests: one number written every way is equal to itself; perturbed, it never is."""

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewards import is_correct

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def thousands(n: int) -> str:
    return f"{n:,}"


def decimal_text(value: Fraction, places: int) -> str:
    scaled = value * 10**places
    assert scaled.denominator == 1
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


def forms(value: Fraction, places: int) -> list[str]:
    """Every way we promise to read ``value``: reduced fraction, \\frac, exact decimal, thousands."""
    sign = "-" if value < 0 else ""
    p, q = abs(value.numerator), value.denominator
    out = [decimal_text(value, places)]
    if q == 1:  # n/1 is a division, not a number written out (issue #39: unevaluated answers)
        out += [str(value.numerator), sign + thousands(p), f"{value.numerator}.0"]
    else:
        out += [f"{sign}{p}/{q}", f"{sign}\\frac{{{p}}}{{{q}}}"]
    return out


exact_decimals = st.builds(
    lambda n, places: (Fraction(n, 10**places), places),
    st.integers(min_value=-(10**9), max_value=10**9),
    st.integers(min_value=0, max_value=4),
)


@SETTINGS
@given(exact_decimals)
def test_every_written_form_is_equal(case):
    value, places = case
    written = forms(value, places)
    for candidate in written:
        for reference in written:
            assert is_correct(candidate, reference), (candidate, reference)


@SETTINGS
@given(exact_decimals, st.sampled_from([-1, 1]))
def test_last_digit_perturbation_is_never_equal(case, step):
    value, places = case
    reference = decimal_text(value, places)
    perturbed = value + Fraction(step, 10**places)
    for candidate in forms(perturbed, places):
        assert not is_correct(candidate, reference), (candidate, reference)


@SETTINGS
@given(exact_decimals)
def test_sign_flip_is_never_equal(case):
    value, places = case
    if value == 0:
        return
    reference = decimal_text(value, places)
    for candidate in forms(-value, places):
        assert not is_correct(candidate, reference), (candidate, reference)


@SETTINGS
@given(st.integers(min_value=1000, max_value=10**12))
def test_thousands_separator_must_be_valid(n):
    text = thousands(n)
    assert is_correct(text, str(n))
    collapsed = text.replace(",", ", ")  # "32, 349" is a list, not 32349
    assert not is_correct(collapsed, str(n))
