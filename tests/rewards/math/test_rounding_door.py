r"""The rounding door (issue #50, item 1): an exact answer may round to a decimal reference only when it is a
*written value*, never a computation, a vacuous factor or a sum with a term below the reference's precision.

Tables are (candidate, reference, expected) by case type, with the honest answers beside each attack. Round 5's
verifier paid most refused rows here (81 of this file's cases fail on it: every issue row, vacuous factor and
negligible term, and most computations; the rest were refused already and guard the rule), through
``is_correct``, ``grade`` and the TRL reward. The rule is ``rewards/math/written_values.py``; the independent
oracle's ``rounding`` shape (``tests/rewards/math/oracle/pairs.py``) attacks it with generated objects.
"""

import pytest

from rewards import correctness, grade, is_correct
from rewards.math import written_values

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

# ---- the issue's rows: each was paid by round 5 -----------------------------------------------------------------
ISSUE_ROWS = [
    P(r"5.5 \times 5 \cdot e^{0}", "27.5", id="computation-times-e-to-the-0"),
    P(r"5.5 \times 5 \cdot x^{0}", "27.5", id="computation-times-x-to-the-0"),
    P(r"5.5 \times 5 \cdot \frac{\pi}{\pi}", "27.5", id="computation-times-pi-over-pi"),
    P(r"\log_4 32", "2.5", id="rational-logarithm"),
    P(r"\sqrt{6.25}", "2.5", id="root-of-a-decimal-square"),
    P(r"\sin^2 60^\circ", "0.75", id="trigonometric-computation"),
    P(r"\max(5.5 \times 5, 0)", "27.5", id="max-of-a-computation"),
    P(r"27.54 + 10^{-20}\pi", "27.5", id="near-miss-plus-epsilon"),
]

# ---- vacuous factors: a factor equal to 1 beside the answer, a computation or a near miss (were paid) ----------
VACUOUS = [
    P(r"\frac{1}{3} \cdot e^{0}", "0.33", id="fraction-times-e0"),
    P(r"\sqrt{2} \cdot e^0", "1.41", id="root-times-e0"),
    P(r"\sqrt{2} \cdot 1", "1.41", id="root-times-1"),
    P(r"1 \cdot \pi", "3.14", id="one-times-pi"),
    P(r"\pi \cdot 1^{5}", "3.14", id="pi-times-1-to-the-5"),
    P(r"\pi \cdot \frac{3}{3}", "3.14", id="pi-times-3-over-3"),
    P(r"\pi \cdot \frac{e}{e}", "3.14", id="pi-times-e-over-e"),
    P(r"\sqrt{2} \cdot \frac{\sqrt{3}}{\sqrt{3}}", "1.41", id="root-times-root-over-root"),
    P(r"\pi \cdot \sqrt{1}", "3.14", id="pi-times-root-1"),
    P(r"\pi \cdot \log_2 2", "3.14", id="pi-times-log-2-2"),
    P(r"\pi \cdot \ln e", "3.14", id="pi-times-ln-e"),
    P(r"\pi \cdot \cos 0", "3.14", id="pi-times-cos-0"),
    P(r"\pi^{1}", "3.14", id="pi-to-the-1"),
    P(r"\pi^{0} \cdot 3.14", "3.14", id="pi-to-the-0"),
    P(r"\frac{\pi}{1}", "3.14", id="over-one"),
    P(r"\frac{2\pi}{2}", "3.14", id="unreduced"),
    P(r"27.5 \cdot \frac{\pi}{\pi}", "27.5", id="the-reference-times-pi-over-pi"),
    P(r"7.2 \cdot e^{0}", "7.25", id="near-miss-times-e0"),
    P(r"(\sqrt{3})^{0} \cdot \frac{2}{3}", "0.67", id="root-to-the-0"),
    P(r"n^{0}\sqrt{2}", "1.41", id="name-to-the-0"),
]

# ---- terms below the reference's precision (were paid) ---------------------------------------------------------
EPSILON = [
    P(r"27.5 + 10^{-20}\pi", "27.5", id="reference-plus-power-epsilon"),
    P(r"\frac{83}{3} + \frac{\pi}{1000000000}", "27.7", id="fraction-plus-pi-over-10-9"),
    P(r"\sqrt{2} + \frac{\pi}{100000}", "1.41", id="root-plus-small-pi"),
    P(r"\sqrt{2} - e^{-12}", "1.41", id="root-minus-e-to-the-minus-12"),
    P(r"7.25 - \frac{\sqrt{2}}{10000000}", "7.25", id="reference-minus-small-root"),
    P(r"\frac{1}{100000\pi} + \frac{29}{4}", "7.25", id="small-term-first"),
    P(r"\frac{\ln 2}{10000} + 1.1", "1.1", id="small-logarithm"),
]

# ---- computations with an irrational value: refused though they round -------------------------------------------
IRRATIONAL_COMPUTATIONS = [
    P(r"\sqrt{8} + \sqrt{2}", "4.24", id="like-radicals"),
    P(r"\sqrt{2} + 3 - 3", "1.41", id="plus-minus-the-same"),
    P(r"\pi - \pi + \sqrt{2}", "1.41", id="pi-minus-pi"),
    P(r"2 \cdot 3\pi", "18.85", id="numbers-multiplied"),
    P(r"\pi \cdot \pi", "9.87", id="pi-times-pi"),
    P(r"\frac{\pi^2}{\pi}", "3.14", id="pi-squared-over-pi"),
    P(r"\frac{2}{\sqrt{2}}", "1.41", id="reducible-over-a-root"),
    P(r"\frac{4 + 2\sqrt{2}}{2}", "3.41", id="reducible-numerator"),
    P(r"\sqrt{2} \cdot \sqrt{3}", "2.45", id="two-radicals"),
    P(r"\frac{\sqrt{6}}{\sqrt{2}}", "1.73", id="radical-over-radical"),
    P(r"\sqrt{2}^{3}", "2.83", id="power-of-a-radical"),
    P(r"(1 + \sqrt{2})^{2}", "5.83", id="power-of-a-sum"),
    P(r"2(\frac{1}{2} + \sqrt{2})", "3.83", id="distributed-numbers"),
    P(r"\ln 2 + \ln 3", "1.79", id="two-logarithms"),
    P(r"\log 5", "1.61", id="log-without-base"),
    P(r"\sqrt{2 + \sqrt{3}}", "1.93", id="nested-radical"),
    P(r"\frac{1}{1 + \sqrt{2}}", "0.41", id="sum-in-a-denominator"),
    P(r"\sin 1", "0.84", id="trigonometric-function"),
    P(r"\arctan 2", "1.11", id="inverse-trigonometric"),
    P(r"\sqrt{2.25}\pi", "4.71", id="decimal-radicand"),
    P(r"1.5\pi", "4.71", id="decimal-coefficient"),
    P(r"\pi r^2", "3.14", id="a-name"),
]

# ---- computations with a rational value (refused: the question asks to evaluate them) ---------------------------
RATIONAL_COMPUTATIONS = [
    P(r"\log_8 2", "0.33", id="log-8-2"),
    P(r"\tan^2 30^\circ", "0.33", id="tan-squared-30"),
    P(r"\sqrt{\frac{1}{9}}", "0.33", id="root-of-a-ninth"),
    P(r"\sqrt{\frac{25}{4}}", "2.5", id="root-of-a-fraction-square"),
    P(r"\sqrt[3]{15.625}", "2.5", id="cube-root-of-a-decimal"),
    P(r"\log_{9} 27", "1.5", id="log-9-27"),
    P(r"\log_2 \sqrt{8}", "1.5", id="log-of-a-root"),
    P(r"e^{\ln 2.5}", "2.5", id="e-to-a-log"),
    P(r"\sqrt{4}\pi", "6.28", id="root-of-a-square-times-pi"),
    P(r"\frac{\ln 8}{\ln 2}", "3", id="ratio-of-logs"),
]

# ---- written values: paid when they round, refused when they do not ---------------------------------------------
WRITTEN = [
    P(r"\sqrt{2}", "1.41", True, id="root"),
    P(r"\sqrt2", "1.41", True, id="root-unbraced"),
    P("√2", "1.41", True, id="root-unicode"),
    P("sqrt(2)", "1.41", True, id="root-plain"),
    P(r"2\sqrt{3}", "3.46", True, id="coefficient-root"),
    P(r"2 \cdot \sqrt{3}", "3.46", True, id="coefficient-cdot-root"),
    P(r"\sqrt{8}", "2.83", True, id="unsimplified-root"),
    P(r"\frac{\sqrt{3}}{2}", "0.87", True, id="root-over-two"),
    P(r"\frac{3\sqrt{2}}{4}", "1.06", True, id="coefficient-root-over-four"),
    P(r"\frac{1}{\sqrt{2}}", "0.71", True, id="one-over-root"),
    P(r"\sqrt{8}/2", "1.41", True, id="unsimplified-root-over-two"),
    P(r"\frac{1+\sqrt{5}}{2}", "1.62", True, id="golden-ratio"),
    P("(1+sqrt(5))/2", "1.62", True, id="golden-ratio-plain"),
    P(r"\frac{\sqrt{6}-\sqrt{2}}{4}", "0.26", True, id="difference-of-roots"),
    P(r"2 - \sqrt{3}", "0.27", True, id="integer-minus-root"),
    P(r"2(1 + \sqrt{3})", "5.46", True, id="coefficient-times-sum"),
    P(r"\sqrt[3]{2}", "1.26", True, id="cube-root"),
    P("2^{1/3}", "1.26", True, id="fractional-power"),
    P(r"10^{\frac{1}{2}}", "3.16", True, id="a-half-power-is-a-root"),
    P("cbrt(2)", "1.26", True, id="cube-root-plain"),
    P(r"\sqrt{\frac{2}{3}}", "0.82", True, id="root-of-a-fraction"),
    P(r"\pi", "3.14", True, id="pi"),
    P(r"2\pi", "6.28", True, id="two-pi"),
    P(r"\frac{\pi}{4}", "0.79", True, id="pi-over-four"),
    P("pi/4", "0.79", True, id="pi-over-four-plain"),
    P(r"\frac{2\pi}{3}", "2.09", True, id="two-pi-over-three"),
    P(r"\frac{4}{3}\pi", "4.19", True, id="four-thirds-pi"),
    P(r"100 - 25\pi", "21.46", True, id="integer-minus-pi-multiple"),
    P(r"\frac{\pi^2}{6}", "1.64", True, id="pi-squared-over-six"),
    P(r"\pi\sqrt{2}", "4.44", True, id="pi-root"),
    P("e", "2.72", True, id="e"),
    P("e^2", "7.39", True, id="e-squared"),
    P(r"\frac{1}{e}", "0.37", True, id="one-over-e"),
    P("e^{-1}", "0.37", True, id="e-to-the-minus-1"),
    P(r"1 - \frac{1}{e}", "0.63", True, id="one-minus-one-over-e"),
    P(r"\ln 2", "0.69", True, id="ln-2"),
    P(r"\log_2 3", "1.58", True, id="log-2-3"),
    P(r"\frac{1}{3}", "0.33", True, id="fraction-no-finite-decimal"),
    P(r"\frac{83}{3}", "27.7", True, id="fraction-rounds"),
    P(r"x = \sqrt{2}", "1.41", True, id="named"),
    P(r"-\sqrt{2}", "-1.41", True, id="negative"),
    P(r"\sqrt{2}\text{ cm}", r"1.41\text{ cm}", True, id="with-a-unit"),
    P(r"(\sqrt{2}, \pi)", "(1.41, 3.14)", True, id="in-a-tuple"),
    P(r"\sqrt{2} + \frac{\pi}{50}", "1.48", True, id="a-term-above-the-precision"),
    P("3 ÷ 4 = 0.75", "0.75", True, id="a-division-with-its-result"),
    P("x ÷ 2", "x/2", True, id="a-division-sign-in-an-expression"),
    # a reference in scientific notation states its decimal places too (2.3148 \times 10^{-3}: 7)
    P(r"\frac{1}{432}", r"2.314814814815 \times 10^{-3}", True, id="fraction-for-a-scientific-reference"),
    P(r"\frac{1}{432}", "2.3148e-3", True, id="fraction-for-an-e-reference"),
    P(r"\frac{\sqrt{2}}{1000}", r"1.41 \times 10^{-3}", True, id="root-for-a-scientific-reference"),
    P(r"\frac{1}{431}", r"2.3148 \times 10^{-3}", False, id="another-fraction-for-a-scientific-reference"),
    P("0.00231", r"2.3148 \times 10^{-3}", False, id="a-decimal-is-exact"),
    P(r"\frac{3001}{2}", r"1.5 \times 10^{3}", False, id="no-places-above-the-point"),
    # written values that do not round to the reference
    P(r"\sqrt{2}", "1.42", False, id="root-wrong-last-digit"),
    P(r"\sqrt{3}", "1.41", False, id="another-root"),
    P(r"\frac{\sqrt{3}}{2}", "0.86", False, id="truncated-not-rounded"),
    P(r"\pi", "3.1415", False, id="pi-truncated"),
    P(r"2\pi", "6.29", False, id="two-pi-wrong"),
    # exact references (a whole number, one significant digit, a trailing zero) never round
    P(r"\sqrt{2}", "1", False, id="integer-reference"),
    P(r"\frac{\sqrt{2}}{20}", "0.07", False, id="one-digit-reference"),
    P(r"\pi", "3.0", False, id="trailing-zero-reference"),
    P(r"\frac{\pi}{4}", "0.8", False, id="one-digit-decimal"),
]

# ---- the division sign is an operator, never a fraction bar (found by the exploit probe on decimal answers) ------
DIVISION_SIGN = [
    P("3 ÷ 4", "0.75", id="division-sign-for-a-decimal"),
    P("3 ÷ 4", "3/4", id="division-sign-for-a-fraction"),
    P(r"3 \div 4", "0.75", id="div-for-a-decimal"),
]

ALL_REFUSED = ISSUE_ROWS + VACUOUS + EPSILON + IRRATIONAL_COMPUTATIONS + RATIONAL_COMPUTATIONS + DIVISION_SIGN


@pytest.mark.parametrize(("candidate", "reference"), ALL_REFUSED)
def test_refused_through_is_correct(candidate, reference):
    assert is_correct(candidate, reference) is False


@pytest.mark.parametrize(("candidate", "reference"), ISSUE_ROWS + VACUOUS[:6] + EPSILON[:3])
def test_refused_through_grade_and_the_reward(candidate, reference):
    """The same verdict through extraction (an ANSWER line, a box) and TRL's calling convention."""
    for completion in (f"ANSWER: {candidate}", rf"The answer is $\boxed{{{candidate}}}$."):
        verdict = grade(completion, reference)
        assert verdict.correct is False and verdict.reason.value == "mismatch", verdict
        assert "computation does not answer" in verdict.explanation
        (reward,) = correctness(
            prompts=[[{"role": "user", "content": "q"}]],
            completions=[[{"role": "assistant", "content": completion}]],
            answer=[reference],
        )
        assert reward == 0.0


@pytest.mark.parametrize(("candidate", "reference", "expected"), WRITTEN)
def test_written_values(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


def test_a_written_value_is_paid_through_grade():
    assert grade(r"ANSWER: \frac{1+\sqrt{5}}{2}", "1.62").correct
    assert grade(r"so it is $\boxed{\frac{\pi}{4}}$", "0.79").correct


@pytest.mark.parametrize(
    ("candidate", "places", "rule"),
    [
        P(r"5.5 \times 5 \cdot e^{0}", 1, "a decimal", id="decimal"),
        P(r"\frac{1}{3} \cdot e^{0}", 2, "e to the power 0", id="e0"),
        P(r"\sqrt{2} \cdot 1", 2, "a factor of 1", id="factor-1"),
        P(r"\frac{\pi}{\pi}\sqrt{2}", 2, "above and below", id="cancels"),
        P(r"\log_4 32", 1, "rational", id="log"),
        P(r"\sqrt{4}\pi", 2, "perfect power", id="root"),
        P(r"\sqrt{2} + \frac{\pi}{100000}", 2, "below the reference's precision", id="epsilon"),
        P(r"\sqrt{8} + \sqrt{2}", 2, "like terms", id="like-terms"),
        P(r"2 \cdot 3\pi", 2, "numbers multiplied", id="numbers-multiplied"),
        P(r"\frac{2}{\sqrt{2}}", 2, "reduces", id="reduces"),
        P(r"\sin^2 60^\circ", 2, r"'\\sin' is not part", id="function"),
        P("10^{-20}", 2, "a power of numbers", id="power-of-numbers"),
        P(r"\ln 2\pi", 2, "ambiguous", id="ambiguous-log"),
    ],
)
def test_each_rule_says_why(candidate, places, rule):
    with pytest.raises(written_values.NotWritten, match=rule):
        written_values.check(candidate, places)
    assert rule.replace("\\\\", "\\") in grade(f"ANSWER: {candidate}", "27.5" if places == 1 else "3.14").explanation


def test_the_precision_rule_is_the_reference_s_last_place():
    """A term of 0.004 is below 2.50's neighbour 1.41's precision (0.01) but not below a 3-decimal reference's."""
    with pytest.raises(written_values.NotWritten):
        written_values.check(r"\sqrt{2} + \frac{\pi}{800}", 2)
    written_values.check(r"\sqrt{2} + \frac{\pi}{800}", 3)
    assert is_correct(r"\sqrt{2} + \frac{\pi}{800}", "1.418") and not is_correct(r"\sqrt{2} + \frac{\pi}{800}", "1.42")


def test_the_written_value_reader_only_ever_says_not_written():
    """Token soup from the grammar's own pieces: every refusal is ``NotWritten`` (a verdict), never another error."""
    import random

    pieces = [r"\pi", "e", "2", "0", "1", "10", "9" * 15, "7.5", r"\sqrt", r"\frac", "{", "}", "(", ")", "^", "_"]
    pieces += ["-", "+", r"\cdot", "*", "/", r"\ln", r"\log", "sqrt", "cbrt", "[", "]", " ", "x", r"\sin", "1e5"]
    rng = random.Random(50)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        try:
            written_values.check(text, rng.choice([1, 2, 4]))
        except written_values.NotWritten:
            pass
