r"""Recall within the policy in the symbolic layer (issue #39 item 6), each with near misses that stay False.

Real odd roots of negative numbers (``\sqrt[3]{-8}`` is -2, as contest answers read it), identities of
exponentials and hyperbolic functions (decided exactly as rational functions of ``e^{x}`` and ``e^{ix}``), sums of
logarithms of absolute values, and ``|p(x)| = q`` answered by its real solutions. The symbolic comparison is asked
directly (``symbolic.compare``): whether a radical of a numeral may answer a numeral at all is the front end's
rule, not this layer's. ``|x-1| = 2`` goes through the whole verifier.
"""

import pytest

from rewards import is_correct
from rewards.math import symbolic

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

# (candidate, reference, equal): failing before for every True row
IDENTITIES = [
    # --- odd roots of negative numbers are real; even roots stay complex ---
    P(r"\sqrt[3]{-8}", "-2", True, id="cube-root-of-minus-8"),
    P(r"\sqrt[3]{-8}", "2", False, id="cube-root-of-minus-8-is-not-2"),
    P(r"\sqrt[3]{-8}", r"1+\sqrt{3}i", False, id="cube-root-of-minus-8-is-not-the-principal-root"),
    P(r"\sqrt[5]{-32}", "-2", True, id="fifth-root-of-minus-32"),
    P(r"(-8)^{2/3}", "4", True, id="two-thirds-power-of-minus-8"),
    P(r"(-8)^{2/3}", "-4", False, id="two-thirds-power-of-minus-8-sign"),
    P(r"\sqrt[3]{-9}", r"-\sqrt[3]{9}", True, id="cube-root-of-minus-9"),
    P(r"\sqrt[3]{-9}", r"\sqrt[3]{9}", False, id="cube-root-of-minus-9-sign"),
    P(r"\sqrt[3]{-\frac{1}{8}}", r"-\frac{1}{2}", True, id="cube-root-of-a-negative-fraction"),
    P(r"\sqrt{-4}", "-2", False, id="square-root-stays-imaginary"),
    P(r"\sqrt{-4}", "2i", True, id="square-root-of-minus-4-is-2i"),
    # --- exponentials and hyperbolic functions, as rational functions of e^x ---
    P(r"\frac{1}{1+e^{-2x}}", r"\frac{\tanh(x)}{2} + \frac{1}{2}", True, id="logistic-is-half-tanh-plus-half"),
    P(r"\frac{1}{1+e^{-2x}}", r"\frac{\tanh(x)}{2} - \frac{1}{2}", False, id="logistic-sign"),
    P(r"\frac{1}{1+e^{2x}}", r"\frac{\tanh(x)}{2} + \frac{1}{2}", False, id="logistic-mirrored"),
    P(r"\frac{1}{1+e^{-x}}", r"\frac{\tanh(x)}{2} + \frac{1}{2}", False, id="logistic-half-angle"),
    P(r"\cosh^2(x)-\sinh^2(x)", "1", True, id="hyperbolic-pythagoras"),
    P(r"\cosh^2(x)+\sinh^2(x)", "1", False, id="hyperbolic-pythagoras-sign"),
    P(r"\sinh(2x)", r"2\sinh(x)\cosh(x)", True, id="hyperbolic-double-angle"),
    P(r"\sinh(2x)", r"\sinh(x)\cosh(x)", False, id="hyperbolic-double-angle-factor"),
    P(r"\cosh(x)", r"\frac{e^x+e^{-x}}{2}", True, id="cosh-definition"),
    P(r"\cosh(x)", r"\frac{e^x-e^{-x}}{2}", False, id="cosh-is-not-sinh"),
    P(r"e^{x}e^{y}", "e^{x+y}", True, id="exponential-product"),
    P(r"e^{x}e^{y}", "e^{xy}", False, id="exponential-product-not-of-the-product"),
    P(r"\tan(\frac{x}{2})", r"\frac{1-\cos(x)}{\sin(x)}", True, id="tangent-half-angle"),
    P(r"\tan(\frac{x}{2})", r"\frac{1+\cos(x)}{\sin(x)}", False, id="tangent-half-angle-sign"),
    P(r"\frac{\sin(x)+\cos(x)}{\sqrt{2}}", r"\sin(x+\frac{\pi}{4})", True, id="shifted-sine"),
    P(r"\frac{\sin(x)-\cos(x)}{\sqrt{2}}", r"\sin(x+\frac{\pi}{4})", False, id="shifted-sine-sign"),
    P(r"\cos(x+\frac{\pi}{3})", r"\frac{\cos x}{2} - \frac{\sqrt{3}\sin x}{2}", True, id="shifted-cosine"),
    P(r"\cos(x+\frac{\pi}{3})", r"\frac{\cos x}{2} + \frac{\sqrt{3}\sin x}{2}", False, id="shifted-cosine-sign"),
    P(r"\sin(2)", r"2\sin(1)\cos(1)", True, id="double-angle-of-a-constant"),
    P(r"\sin(2)", r"\sin(1)\cos(1)", False, id="double-angle-of-a-constant-factor"),
    # --- logarithms of absolute values ---
    P(r"\log|x^2-9|", r"\log|x-3| + \log|x+3|", True, id="log-abs-product"),
    P(r"\log|x^2-9|", r"\log|x-3| + \log|x+4|", False, id="log-abs-product-near-miss"),
    P(r"\log|x^2-9|", r"\log|x-3| - \log|x+3|", False, id="log-abs-quotient-is-not-the-product"),
    P(r"\ln|x^2-9|", r"\ln|x-3| + \ln|x+3|", True, id="ln-abs-product"),
    P(r"\ln(x^2-9)", r"\ln(x-3) + \ln(x+3)", False, id="ln-without-abs-differs-for-negatives"),
    P(r"2\ln|x|", r"\ln|x^2|", True, id="ln-abs-power"),
    P(r"\ln|x|", r"\ln|x^2|", False, id="ln-abs-power-coefficient"),
]


@pytest.mark.parametrize(("candidate", "reference", "equal"), IDENTITIES)
def test_the_symbolic_layer_proves_these_and_refuses_their_near_misses(candidate, reference, equal):
    status, detail = symbolic.compare(candidate, reference)
    assert status == ("equal" if equal else "different"), detail


# (candidate, reference, expected): |p(x)| = q answered by its real solutions, through the whole verifier
ABSOLUTE_VALUE_EQUATIONS = [
    P(r"x = 3 \text{ or } x = -1", "|x-1| = 2", True, id="both-roots"),
    P("x=-1, x=3", "|x-1| = 2", True, id="both-roots-listed"),
    P("x = 3", "|x-1| = 2", False, id="one-root-missing"),
    P(r"x = 3 \text{ or } x = 1", "|x-1| = 2", False, id="a-wrong-root"),
    P("3, -1", "|x-1| = 2", False, id="roots-without-the-variable"),
    P(r"x = 2 \text{ or } x = -2 \text{ or } x = 0", "|x^2-2| = 2", True, id="quadratic-inside"),
    P(r"x = 2 \text{ or } x = -2", "|x^2-2| = 2", False, id="quadratic-inside-root-missing"),
    P(r"x = 1 \text{ or } x = -1", "|x^2+1| = 2", True, id="complex-roots-of-the-negative-side-dropped"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), ABSOLUTE_VALUE_EQUATIONS)
def test_an_absolute_value_equation_is_answered_by_its_real_solutions(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected
