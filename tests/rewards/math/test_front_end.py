r"""The closed token-level front end and the one rule for unevaluated answers (issue #39, items 1 and 2).

Two numbers side by side are never a product, whatever wraps them; a computation of numerals never answers a
number; a number's written forms still do. Tables are (candidate, reference, expected), grouped by case type,
with the honest answers and near misses beside each attack. Every row marked "was paid" returned True before
round 5 (``rewards/math/tokens.py``, ``rewards/math/vocabulary.py``).
"""

import re

import pytest

from problems.math_data import procedural_arithmetic
from rewards import InvalidReference, grade, is_correct
from rewards.math import tokens, vocabulary
from rewards.math.answer_tree import Unparseable
from rewards.math.structure import normalize

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

# the issue's eleven cheats, as templates over the question's two numbers a and b (aa and bb: their squares); on
# "Each of 9 friends brings 3 cookies..." (answer 27) each was paid, as an ANSWER line and inside \boxed{}
CHEATS = [
    "{{{a}}}{{{b}}}",
    r"\text{{{a}}}\text{{{b}}}",
    "${a}$ ${b}$",
    "({a})({b})",
    "{a}^{{1}}{b}^{{1}}",
    r"\frac{{{a}}}{{1}}{{{b}}}",
    r"\sqrt{{{aa}}}\sqrt{{{bb}}}",
    "√{aa}√{bb}",
    r"{a} \times {b}",
    "{a}*{b}",
    "{a}({b})",
]


def cheat_text(cheat: str, a: int, b: int) -> str:
    return cheat.format(a=a, b=b, aa=a * a, bb=b * b)


@pytest.mark.parametrize("gap", ["\n", "\r", "\r\n"])
def test_a_line_break_inside_a_box_is_a_wide_gap(gap):
    """A carriage return is a line break too (it was collapsed to a space, so 32, a carriage return and \\sqrt{11} paid 32√11)."""
    assert grade(f"The answer is \\boxed{{32{gap}\\sqrt{{11}}}}", r"32\sqrt{11}").correct is False
    assert grade(f"The answer is \\boxed{{32\\sqrt{{11}}}}{gap}", r"32\sqrt{11}").correct is True


@pytest.mark.parametrize("cheat", CHEATS)
@pytest.mark.parametrize("form", ["ANSWER: {}", r"The answer is \boxed{{{}}}."])
def test_the_issue_cheats_are_not_paid(cheat, form):
    verdict = grade(form.format(cheat_text(cheat, 9, 3)), "27")
    assert verdict.correct is False
    assert verdict.reason.value in ("unparseable", "mismatch")


@pytest.mark.parametrize("form", ["ANSWER: {}", r"\boxed{{{}}}"])
def test_no_cheat_is_paid_on_the_projects_own_arithmetic(form):
    """The question's two numbers, in every cheat, on 200 held-out procedural problems (default operations)."""
    paid = []
    problems = procedural_arithmetic(n=200, seed=0, split="test")
    for problem in problems:
        a, b = (int(x) for x in re.findall(r"\d+", problem.question)[:2])
        for cheat in CHEATS:
            text = form.format(cheat_text(cheat, a, b))
            if grade(text, problem.answer).correct:
                paid.append((problem.question, text))
    assert paid == []
    assert sum(p.metadata["operations"] == ["mul"] for p in problems) > 50  # the products the cheats imitate


# --- two numbers side by side: never a product, whatever wraps them ---------------------------------------
SIDE_BY_SIDE = [
    P(r"{9}{3}", "27", False, id="braces"),
    P(r"\mathbf{9}\mathbf{3}", "27", False, id="mathbf"),
    P(r"\textbf{9}\,\text{3}", "27", False, id="text-family-thin-space"),
    P(r"\boxed{9}3", "27", False, id="box-then-number"),
    P("9\\;3", "27", False, id="medium-space"),
    P("9~3", "27", False, id="tilde"),
    P("9\n3", "27", False, id="newline"),
    P(r"9\quad 3", "27", False, id="quad"),
    P(r"9\hspace{1em}3", "27", False, id="hspace"),
    P(r"3^{2}3", "27", False, id="after-an-exponent"),
    P(r"(1+2)(4+5)", "27", False, id="two-numeric-brackets"),
    P(r"\sqrt{9}\,\sqrt{81}", "27", False, id="two-roots"),
    P(r"\sqrt{2}\sqrt{3}", r"\sqrt{6}", False, id="two-roots-symbolic-reference"),
    P(r"\frac{1}{2}\frac{1}{3}", r"\frac{1}{6}", False, id="two-fractions"),
    P(r"3\frac{\pi}{2}", r"\frac{3\pi}{2}", False, id="number-then-fraction"),
    P(r"x 3", "3x", False, id="symbol-then-number"),
    P(r"\pi 2", r"2\pi", False, id="constant-then-number"),
    P(r"x = 9\,3", "x = 27", False, id="inside-an-equation"),
    P(r"(9 3, 1)", "(27, 1)", False, id="inside-a-tuple"),
    P(r"\{9\,3\}", r"\{27\}", False, id="inside-a-set"),
    P(r"[9\,3, 30]", "[27, 30]", False, id="inside-an-interval"),
    P(r"\begin{pmatrix} 9\,3 & 1 \end{pmatrix}", r"\begin{pmatrix} 27 & 1 \end{pmatrix}", False, id="matrix-cell"),
    P(r"9\,3 \pm 1", "26, 28", False, id="with-pm"),
    P("3 5/2", "7.5", False, id="improper-spaced-fraction"),
    P(r"2\frac{5}{3}", r"\frac{11}{3}", False, id="improper-mixed"),
    # the products people write, and mixed numbers, stay what they were
    P(r"2\pi", r"\pi + \pi", True, id="coefficient-constant"),
    P(r"3\sqrt{2}", r"\sqrt{18}", True, id="coefficient-root"),
    P("2x", "x+x", True, id="coefficient-name"),
    P("2(x+1)", "2x+2", True, id="coefficient-bracket"),
    P(r"(1+i)(2-i)", "3+i", True, id="complex-brackets"),
    P(r"x\sqrt{2}", r"\sqrt{2}x", True, id="name-root"),
    P(r"\frac{1}{2}x", "x/2", True, id="fraction-name"),
    P(r"2\frac{1}{3}", "7/3", True, id="mixed-number"),
    P(r"-2\,\frac{1}{3}", "-7/3", True, id="mixed-number-negative-spaced"),
    P("2 1/3", "7/3", True, id="mixed-number-slash"),
    P(r"1\,000", "1000", True, id="thin-space-thousands"),
    P(r"5 \quad \text{cm}", r"5\text{ cm}", True, id="unit-after-a-wide-gap"),
    P(r"\log_2 x", r"\frac{\ln x}{\ln 2}", True, id="subscript-digit-is-no-value"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), SIDE_BY_SIDE)
def test_side_by_side(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


@pytest.mark.parametrize("name", sorted(vocabulary.WRAPPERS))
def test_no_wrapper_joins_two_numbers(name):
    """The normalizer's own table: each wrapper, around each of two numbers, leaves two numbers side by side."""
    before, after = vocabulary.WRAPPERS[name]
    for text in (f"{before}9{after}{before}3{after}", f"9{before}3{after}", f"{before}9{after}3"):
        with pytest.raises(Unparseable, match="side by side|wide gap"):
            tokens.read(text)


@pytest.mark.parametrize("gap", sorted(g for g in vocabulary.SPACING if g != r"\hspace"))
def test_no_gap_joins_two_numbers(gap):
    with pytest.raises(Unparseable, match="side by side|wide gap"):
        tokens.read(f"9{gap}3" if not gap[-1:].isalpha() else f"9{gap} 3")


# --- the closed vocabulary ---------------------------------------------------------------------------------
VOCABULARY = [
    P(r"\foo{3}", r"unsupported notation: \\foo", id="unknown-macro"),
    P(r"3\heartsuit", r"unsupported notation: \\heartsuit", id="unknown-symbol"),
    P("3 @ 4", "unsupported character '@'", id="unknown-character"),
    P("3#", "unsupported character '#'", id="hash"),
    P(r"\frac{1}23", "unbraced argument", id="unbraced-two-digit-argument"),
]


@pytest.mark.parametrize(("text", "reason"), VOCABULARY)
def test_unknown_notation_is_refused_with_its_name(text, reason):
    with pytest.raises(Unparseable, match=reason):
        normalize(text)
    verdict = grade(f"ANSWER: {text}", "3")
    assert verdict.correct is False and verdict.reason.value == "unparseable"


def test_every_known_macro_is_in_one_table():
    tables = (
        *vocabulary.WRAPPERS,
        *vocabulary.SPACING,
        *vocabulary.MODIFIERS,
        *vocabulary.CONSTANTS,
        *vocabulary.FUNCTIONS,
        *vocabulary.ARGUMENT_MACROS,
        *vocabulary.OPERATORS,
        *vocabulary.RELATIONS,
        *vocabulary.BRACKETS,
        *vocabulary.BRACKETS.values(),
        *vocabulary.SYMBOLS,
    )
    assert {m for m in vocabulary.KNOWN_MACROS if m[1:].isalpha()} <= set(tables)
    assert set(vocabulary.TEXT_MACROS) <= set(vocabulary.WRAPPERS)


def test_a_reference_in_unknown_notation_is_a_dataset_error():
    with pytest.raises(InvalidReference, match="unsupported notation"):
        is_correct("3", r"\foo{3}")


# --- unevaluated answers: a computation of numerals does not answer a number --------------------------------
UNEVALUATED = [
    P(r"9 \times 3", "27", False, id="product-times"),
    P("9*3", "27", False, id="product-star"),
    P(r"9 \cdot 3", "27", False, id="product-cdot"),
    P("9(3)", "27", False, id="product-bracket"),
    P("3+24", "27", False, id="sum"),
    P("30-3", "27", False, id="difference"),
    P("54/2", "27", False, id="quotient-slash"),
    P(r"\frac{54}{2}", "27", False, id="unreduced-fraction"),
    P(r"\frac{27}{1}", "27", False, id="over-one"),
    P("27/1", "27", False, id="over-one-slash"),
    P("27 ÷ 1", "27", False, id="divided-by-one"),
    P("6/8", "3/4", False, id="unreduced-against-fraction"),
    P("3^3", "27", False, id="power"),
    P("2^{10}", "1024", False, id="power-braced"),
    P(r"\sqrt{729}", "27", False, id="root"),
    P(r"\sqrt[3]{27}", "3", False, id="cube-root"),
    P(r"\log_2 8", "3", False, id="log"),
    P(r"5.5 \times 5", "27.5", False, id="product-for-a-decimal"),
    P(r"\frac{1}{3} \cdot 1", "0.33", False, id="computation-for-a-rounded-reference"),
    P(r"1 \pm 2", "-1, 3", False, id="pm-computation"),
    P("x = 3 + 24", "x = 27", False, id="named-computation"),
    P("(3+24, 1)", "(27, 1)", False, id="computation-in-a-tuple"),
    P(r"[1+1, 5]", "[2, 5]", False, id="computation-at-an-interval-end"),
    P("3+24", "27.0", False, id="trailing-zero-reference-is-exact"),
    # a number's written forms are not computations
    P("27", "27", True, id="integer"),
    P("27.0", "27", True, id="decimal-trailing-zero"),
    P("1,000", "1000", True, id="thousands"),
    P(r"\frac{1}{2}", "0.5", True, id="reduced-fraction"),
    P("1/2", "0.5", True, id="slash-fraction"),
    P(r"-\frac{3}{4}", "-0.75", True, id="negative-fraction"),
    P(r"\frac{-3}{4}", "-0.75", True, id="sign-in-the-numerator"),
    P(r"2\frac{1}{3}", "7/3", True, id="mixed"),
    P(r"1.5\times10^{3}", "1500", True, id="scientific-latex"),
    P("1.5e3", "1500", True, id="scientific-e"),
    P(r"50\%", "50%", True, id="percent"),
    P(r"0.\overline{3}", "1/3", True, id="repeating"),
    P(r"{27}", "27", True, id="braced"),
    P(r"\text{27}", "27", True, id="text-wrapped"),
    P(r"\frac{54}{2}", r"\frac{54}{2}", True, id="written-as-the-reference"),
    P(r"9 \times 3 = 27", "27", True, id="worked-chain-with-result"),
    P(r"9 \times 3 = 28", "27", False, id="worked-chain-wrong-result"),
    P(r"27 = 9 \times 3", "27", False, id="chain-ending-in-a-computation"),
    P(r"\sqrt{2}", "1.41", True, id="exact-irrational-for-a-rounded-reference"),
    P(r"\pi", "3.14", True, id="constant-for-a-rounded-reference"),
    # symbolic references keep their symbolic equivalence
    P(r"\sqrt{18}", r"3\sqrt{2}", True, id="radical-reference"),
    P(r"2 \cdot \pi", r"2\pi", True, id="pi-reference"),
    P("(x+1)^2", "x^2+2x+1", True, id="expression-reference"),
    P(r"\frac{6}{8}x", r"\frac{3}{4}x", True, id="unreduced-inside-an-expression"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), UNEVALUATED)
def test_unevaluated_answers(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


def test_a_computation_is_explained():
    verdict = grade(r"ANSWER: 9 \times 3", "27")
    assert verdict.reason.value == "mismatch" and "computation" in verdict.explanation


# --- one string, one reading -------------------------------------------------------------------------------
READINGS = [
    P("1e1", "10", True, id="scientific-is-ten"),
    P("1e1", "e", False, id="scientific-is-not-e"),
    P("1e1", "10e", False, id="scientific-is-not-10e"),
    P("2e", "2e", True, id="coefficient-e"),
    P(r"1\text{ Mg}", r"1\text{ mg}", False, id="unit-case-Mg-mg"),
    P(r"1\text{ mg}", r"1\text{ mg}", True, id="unit-case-same"),
    P(r"5\text{ meters}", r"5\text{ m}", True, id="unit-word-and-symbol"),
    P(r"5\text{ Meters}", r"5\text{ m}", True, id="unit-word-capitalized"),
    P(r"5\text{ M}", r"5\text{ m}", False, id="unit-symbol-case"),
    P("3 5/2", "15/2", False, id="not-three-times-five-halves"),
    P("3 5/2", "7/2", False, id="not-a-mixed-number"),
    P(r"\frac{749}{300}", "2.50", False, id="trailing-zero-not-a-rounding"),
    P(r"\frac{481}{30}", "16.0", False, id="trailing-zero-not-a-rounding-16"),
    P(r"\frac{1}{3}", "0.33", True, id="rounding-still-pays-a-repeating-fraction"),
    P("2.5", "2.50", True, id="trailing-zero-exact"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), READINGS)
def test_one_string_one_reading(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


def test_the_front_end_is_linear():
    """A long, wrapped, spaced answer is read in one pass: no quadratic blow-up (counted, not timed)."""
    text = r"\text{" + " + ".join(["x"] * 300) + "}"
    assert tokens.read(text).names
    assert len(tokens._lex(text)) < 4 * len(text)


def test_a_leaf_over_300_characters_is_read_within_the_1000_character_screen():
    """Only a numeric literal over 300 characters is refused as one; a long expression is compared (it was too_complex)."""
    long = " + ".join(f"{k}x^{{{k}}}" for k in range(1, 40))
    assert 300 < len(long) < 1000
    assert is_correct(long, long.replace("39x", "39 x")) is True
    assert is_correct(long.replace("+ 39x", "- 39x"), long) is False
    assert grade("ANSWER: " + "1" * 350, "1").reason.value == "too_complex"


# --- the outside attack set's other classes (issue #39 item 4) --------------------------------------------
OUTSIDE_CLASSES = [
    P("2", "|z| = 2", False, id="modulus-reference-is-not-a-label"),
    P("z = 2", "|z| = 2", False, id="modulus-reference-not-one-point"),
    P("|z| = 2", "2", False, id="modulus-candidate-is-not-a-label"),
    P("|AB| = 2", "2", True, id="segment-length-is-a-label"),
    P("2", "|AB| = 2", True, id="segment-length-reference"),
    P(r"x = 2 \text{ or } x = -2", "|x| = 2", True, id="modulus-equation-solved"),
    P(r"\{\{1,2\},3\}", r"\{1,2,3\}", False, id="nested-set-not-flattened"),
    P(r"\{\{1\}\}", r"\{1\}", False, id="set-of-a-set"),
    P(r"\{1,2,3\}", r"\{3,2,1\}", True, id="flat-set-order-free"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), OUTSIDE_CLASSES)
def test_outside_attack_classes(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected
