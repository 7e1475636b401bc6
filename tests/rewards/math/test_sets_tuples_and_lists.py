r"""Answers that are sets, tuples and lists (added in round 3), each both ways with the near misses that must stay wrong: interval sets (inequalities,
unions, set-builder, \mathbb{R}), several equations with \pm, solution sets of tuples, doubled backslashes,
lists of boxes. Every acceptance here has adversarial rows beside it: each is a reward a policy could farm."""

import time

import pytest

from rewards import InvalidReference, Reason, check_reference, grade, is_correct
from rewards.math.math_verifier import check

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

INTERVAL_SETS = [
    # --- one interval, every spelling, both ways ---
    P(r"x \in [-2, 7]", r"-2 \le x \le 7", True, id="membership-vs-chain"),
    P(r"-2 \le x \le 7", r"x \in [-2, 7]", True, id="chain-vs-membership"),
    P(r"[-2,7]", r"-2 \le x \le 7", True, id="interval-vs-chain"),
    P(r"\{x \mid -2 \le x \le 7\}", "[-2, 7]", True, id="set-builder-mid"),
    P("[-2, 7]", r"\{x \mid -2 \le x \le 7\}", True, id="set-builder-ref"),
    P(r"\{x : x > 3\}", r"x > 3", True, id="set-builder-colon"),
    P(r"\{x \in \mathbb{R} \mid x > 3\}", r"(3, \infty)", True, id="set-builder-over-reals"),
    P(r"\left\{ x \,|\, x \ge 3 \right\}", r"[3, \infty)", True, id="set-builder-bar-left-right"),
    P(r"x > -1 \text{ and } x < 3", "(-1, 3)", True, id="and-of-two-bounds"),
    P("(-1, 3)", r"x < 3 \text{ and } x > -1", True, id="and-of-two-bounds-ref"),
    P("(0,1)", "0<f(x)<1", True, id="bounded-function-no-spaces"),
    P("0<f(x)<1", "(0,1)", True, id="bounded-function-cand-no-spaces"),
    P(r"y \in (0, 1)", r"0 < f(x) < 1", True, id="bounded-function-as-y"),
    P(r"x \in \mathbb{R}", r"(-\infty, \infty)", True, id="reals-membership"),
    P(r"(-\infty, \infty)", r"\mathbb{R}", True, id="reals-ref"),
    P(r"\mathbb{R}", r"\mathbb{R}", True, id="reals-both"),
    # --- unions, both ways ---
    P(r"x < -1 \text{ or } x > 3", r"(-\infty,-1) \cup (3,\infty)", True, id="or-vs-union"),
    P(r"(-\infty,-1) \cup (3,\infty)", r"x < -1 \text{ or } x > 3", True, id="union-vs-or"),
    P(r"x > 3 \text{ or } x < -1", r"x < -1 \text{ or } x > 3", True, id="or-any-order"),
    P(r"x \le -1 \lor x \ge 3", r"(-\infty,-1] \cup [3,\infty)", True, id="lor-closed"),
    P(r"x \in (-\infty, -1) \cup (3, \infty)", r"x < -1 \text{ or } x > 3", True, id="membership-union"),
    # --- near misses: ends, strictness, bounds, variables ---
    P(r"-2 < x \le 7", r"x \in [-2, 7]", False, id="open-low-end"),
    P(r"-2 \le x < 7", "[-2, 7]", False, id="open-high-end"),
    P(r"\{x \mid -2 < x \le 7\}", "[-2, 7]", False, id="set-builder-open-end"),
    P(r"x \le -1 \text{ or } x > 3", r"(-\infty,-1) \cup (3,\infty)", False, id="union-closed-end"),
    P(r"(-\infty,-1] \cup (3,\infty)", r"x < -1 \text{ or } x > 3", False, id="union-closed-end-ref"),
    P(r"x < -1 \text{ or } x > 2", r"(-\infty,-1) \cup (3,\infty)", False, id="union-wrong-bound"),
    P(r"x < -1 \text{ or } y > 3", r"(-\infty,-1) \cup (3,\infty)", False, id="union-two-variables"),
    P(r"-2 \le y \le 7", r"x \in [-2, 7]", False, id="other-variable"),
    P(r"x \in (0, 1)", r"0 < f(x) < 1", False, id="domain-for-range"),
    P(r"\{y \mid -2 \le x \le 7\}", "[-2, 7]", False, id="set-builder-other-variable"),
    # --- adversarial: unions that cover more, empty sets, other domains, hedges as unions ---
    P(r"x < -1 \text{ and } x > 3", r"(-\infty,-1) \cup (3,\infty)", False, id="and-is-empty-not-union"),
    P(r"x<-1, x>3", r"(-\infty,-1) \cup (3,\infty)", False, id="comma-system-or-union"),
    P(r"x < -1 \text{ or } x > 3 \text{ and } x < 5", r"(-\infty,-1) \cup (3,5)", False, id="or-and-no-precedence"),
    P(r"3 < x < -1", "(3, -1)", False, id="empty-chain-is-not-a-point"),
    P(r"x < -1 \text{ and } x > 3", "(3, -1)", False, id="empty-and-is-not-a-point"),
    P(r"(-\infty, \infty)", r"(-\infty,-1) \cup (3,\infty)", False, id="reals-covers-more"),
    P(r"\mathbb{R}", r"(-\infty, 5)", False, id="reals-for-ray"),
    P(r"x \in \mathbb{R}", "[0, 1]", False, id="reals-for-interval"),
    P(r"\mathbb{R}^+", r"(0, \infty)", False, id="positive-reals-not-read"),
    P(r"\mathbb{Z}", r"(-\infty, \infty)", False, id="integers-are-not-reals"),
    P(r"\{x \in \mathbb{Z} \mid 1 \le x \le 3\}", "[1, 3]", False, id="set-builder-over-integers"),
    P(r"(-\infty,-1) \cup (3,\infty) \cup \{5\}", r"x < -1 \text{ or } x > 3", False, id="union-plus-a-point"),
    P(r"(0,1) \cup (1,2)", "(0, 2)", False, id="union-missing-a-point"),
    P(r"(0,2)", r"(0,1) \cup [1,2)", False, id="same-points-other-pieces-not-claimed"),
    P(r"(0, 1) \cup (2, 3)", "(0, 1)", False, id="union-hedge-for-interval"),
    P(r"(0, 1), (1, 2)", "(0, 1)", False, id="list-hedge-for-interval"),
    P(r"x > 3 \text{ or } x < 3", "3", False, id="union-for-a-value"),
]

PLUS_MINUS_EQUATIONS = [
    P(
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        True,
        id="identical",
    ),
    P(
        r"\frac{1}{2}, \frac{-1+\sqrt{13}}{4}, \frac{-1-\sqrt{13}}{4}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        True,
        id="values-for-equations",
    ),
    P(
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        r"\frac{1}{2}, \frac{-1+\sqrt{13}}{4}, \frac{-1-\sqrt{13}}{4}",
        True,
        id="equations-for-values",
    ),
    P(
        r"x = \frac{-1 \pm \sqrt{13}}{4} \text{ or } x = \frac{1}{2}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        True,
        id="any-order-or",
    ),
    P(r"x = 1 \mp 2", "-1, 3", False, id="mp"),  # #39: 1 - 2 is a computation, not the number -1
    P(r"2 \pm 1 + 3", "6, 4", False, id="pm-replaced-in-place"),  # #39: 1 - 2 is a computation, not the number -1
    P(r"\pm\sqrt{2}, \pm\sqrt{3}", r"\sqrt{2}, -\sqrt{2}, \sqrt{3}, -\sqrt{3}", True, id="two-pm-in-a-list"),
    P(r"\sqrt{4 \pm 1}", r"\sqrt{5}, \sqrt{3}", True, id="pm-inside-sqrt"),
    # --- near misses and hedges ---
    P(
        r"x = \frac{1}{2}, x = \frac{-1 + \sqrt{13}}{4}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        False,
        id="one-sign-missing",
    ),
    P(r"x = \frac{-1 \pm \sqrt{13}}{4}", r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}", False, id="half-missing"),
    P(
        r"x = \frac{1}{2}, x = \frac{1 \pm \sqrt{13}}{4}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        False,
        id="sign-flipped-inside",
    ),
    P(
        r"y = \frac{1}{2}, y = \frac{-1 \pm \sqrt{13}}{4}",
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        False,
        id="other-name",
    ),
    P(r"\frac{-1 \pm \sqrt{13}}{4}", r"\frac{-1 + \sqrt{13}}{4}", False, id="pm-hedge-for-one-value"),
    P(r"x = \frac{-1 \pm \sqrt{13}}{4}", r"\frac{-1 + \sqrt{13}}{4}", False, id="pm-equation-hedge-for-one-value"),
    P(r"2 \pm 1 + 3", "6, -2", False, id="pm-is-not-a-parenthesis"),
    P(r"1 \pm \sqrt{2} \pm \sqrt{3}", r"1+\sqrt{2}+\sqrt{3}", False, id="two-pm-unpaired"),
    P(r"x = \pm 2", "2", False, id="pm-equation-for-one-value"),
]

SOLUTION_TUPLES = [
    P("(3,17,3,7), (3, 17, 3, 7), (17,3,3,7)", "(3,17,3,7),(17,3,3,7)", True, id="repeat-is-not-new"),
    P("(17,3,3,7), (3,17,3,7)", "(3,17,3,7),(17,3,3,7)", True, id="tuple-order-free"),
    P("(5,2),(7,2)", "p=5,q=2;p=7,q=2", True, id="groups-as-tuples"),
    P("p=5,q=2;p=7,q=2", "(5,2),(7,2)", True, id="groups-as-tuples-cand"),
    P("q=2,p=5;q=2,p=7", "p=5,q=2;p=7,q=2", True, id="groups-named-other-order"),
    P("p=7,q=2;p=5,q=2", "p=5,q=2;p=7,q=2", True, id="groups-order-free"),
    P("(5,2),(7,2),(5,2)", "p=5,q=2;p=7,q=2", True, id="groups-repeat"),
    P("1, 2, 2", "1, 2", True, id="value-repeat"),
    # --- near misses ---
    P("(3,17,3,7), (3,17,3,7)", "(3,17,3,7),(17,3,3,7)", False, id="repeat-does-not-fill-a-gap"),
    P("(3,17,3,7), (17,3,3,7), (3,3,17,7)", "(3,17,3,7),(17,3,3,7)", False, id="extra-tuple"),
    P("(17,3,7,3), (3,17,3,7)", "(3,17,3,7),(17,3,3,7)", False, id="order-inside-a-tuple"),
    P("(2,5),(2,7)", "p=5,q=2;p=7,q=2", False, id="groups-swapped-inside"),
    P("q=5,p=2;q=7,p=2", "p=5,q=2;p=7,q=2", False, id="groups-values-under-wrong-names"),
    P("(5,2)", "p=5,q=2;p=7,q=2", False, id="groups-one-missing"),
    P("1, 1", "1, 2", False, id="repeat-for-missing-value"),
    P("1, 2", "1, 1, 2", False, id="multiset-reference-keeps-count"),
    P("3, 3", "3", False, id="repeat-is-still-a-list-for-one-value"),
]

DOUBLED_BACKSLASHES = [
    P(r"\\frac{1}{5}", "0.2", True, id="frac"),
    P(r"\frac{1}{5}", r"\\frac{1}{5}", True, id="frac-ref"),
    P(r"\\left( \\frac{1}{5},\\frac{1}{6}\\right)", r"(\frac15, \frac16)", True, id="left-right-tuple"),
    P(r"x \in [-2,7]", r"-2 \\le x \\le 7", True, id="le-ref"),
    P(r"-2 \\le x \\le 7", r"x \in [-2,7]", True, id="le-cand"),
    P(r"\\sqrt{2}", r"\sqrt{2}", True, id="sqrt"),
    P(r"\\{1, 2\\}", r"\{2, 1\}", True, id="set-braces"),
    P(r"\\(\\frac{1}{2}\\)", "0.5", True, id="math-delimiters"),
    P(r"12\\%", r"12\%", True, id="percent"),
    P(r"\\begin{pmatrix}1 \\\\ 2\\end{pmatrix}", r"\begin{pmatrix}1\\2\end{pmatrix}", True, id="matrix-rows"),
    P(r"\n\n\frac{1}{2}", "0.5", True, id="escaped-newlines"),
    P("185\\\\", "185", True, id="trailing-line-break"),
    # --- a doubled pair that could be a line break: refused, never guessed ---
    P(r"\\sqrt{2}", r"\sqrt{3}", False, id="near-miss"),
    P(r"\\frac{1}{2} \\ \\frac{1}{2}", r"\frac{1}{4}", False, id="line-break-between-answers-not-product"),
    P(r"\\frac{1}{2} \\ \\frac{1}{2}", r"\frac{1}{2}", False, id="line-break-between-answers-not-one"),
    P(r"\\frac{1}{2}\frac{1}{2}", r"\frac{1}{4}", False, id="mixed-single-and-doubled"),
    P(r"\frac{1}{2} \\ \frac{1}{2}", r"\frac{1}{4}", False, id="single-line-break-not-product"),
    P(r"3 \\ 4", "34", False, id="line-break-not-concatenation"),
    P(r"3 \\ 4", "3", False, id="line-break-not-first"),
    P(r"\\frac{1}{2} \\\\ \\frac{1}{2}", r"\frac{1}{4}", False, id="doubled-line-break-outside-matrix"),
    P(r"\\begin{pmatrix}1 \\\\ 2\\end{pmatrix}", r"\begin{pmatrix}1&2\end{pmatrix}", False, id="matrix-shape"),
]

LISTS_OF_BOXES = [
    P(r"\boxed{2} and \boxed{3}", "2, 3", True, id="and"),
    P(r"$\boxed{(2, 2)} \quad \text{and} \quad \boxed{(6, 2)}$", "(2, 2), (6, 2)", True, id="quad-text-and"),
    P(r"\boxed{1},\boxed{2},\boxed{3}", r"\{1,2,3\}", True, id="commas"),
    P("2, 3", r"\boxed{2}, \boxed{3}", True, id="boxed-reference"),
    P("-2, 1", r"\(\boxed{1}\) and \(\boxed{-2}\).", True, id="boxed-reference-delimiters"),
    # --- near misses and hedges ---
    P(r"\boxed{2} and \boxed{3}", "2", False, id="list-for-one-value"),
    P(r"\boxed{2} and \boxed{3}", "(2, 3)", False, id="list-for-a-tuple"),
    P(r"\boxed{2} and \boxed{3}", "[2, 3]", False, id="list-for-an-interval"),
    P(r"\boxed{2}, \boxed{3}, \boxed{4}", "2, 3", False, id="extra-box"),
    P(r"\boxed{2} or maybe \boxed{3}", "2, 3", False, id="words-between-boxes"),
    P(r"\boxed{(3, 3)} \text{ for part (a) and } \boxed{(1, 1)}", "(3, 3), (1, 1)", False, id="prose-between-boxes"),
    P("6", r"\boxed{2}\boxed{3}", False, id="product-of-boxed-reference"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), INTERVAL_SETS)
def test_interval_sets(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


@pytest.mark.parametrize(("candidate", "reference", "expected"), PLUS_MINUS_EQUATIONS)
def test_several_equations_and_plus_minus(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


@pytest.mark.parametrize(("candidate", "reference", "expected"), SOLUTION_TUPLES)
def test_solution_sets_of_tuples(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


@pytest.mark.parametrize(("candidate", "reference", "expected"), DOUBLED_BACKSLASHES)
def test_doubled_backslashes(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


@pytest.mark.parametrize(("candidate", "reference", "expected"), LISTS_OF_BOXES)
def test_lists_of_boxes(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


def test_the_explanation_says_how_doubled_backslashes_were_read():
    accepted = check(r"\\frac{1}{5}", "0.2")
    assert accepted.equal and "doubled backslashes" in accepted.detail
    reference_doubled = check("0.2", r"\\frac{1}{5}")
    assert reference_doubled.equal and "reference's doubled backslashes" in reference_doubled.detail
    assert check("0.2", r"\frac{1}{5}").detail == "verified equal"
    refused = check(r"\\frac{1}{2} \\ \\frac{1}{2}", r"\frac{1}{4}")
    assert refused.reason is Reason.UNPARSEABLE and "line break" in refused.detail and "refused" in refused.detail


def test_an_ambiguous_doubled_reference_is_a_dataset_error():
    with pytest.raises(InvalidReference, match="line break"):
        check_reference(r"\\frac{1}{2} \\ \\frac{1}{3}")


def test_references_of_the_new_shapes_are_readable():
    for reference in (
        r"x = \frac{1}{2}, x = \frac{-1 \pm \sqrt{13}}{4}",
        r"\{x \mid x > 3\}",
        r"x < -1 \text{ or } x > 3",
        "p=5,q=2;p=7,q=2",
        r"\boxed{2}, \boxed{3}",
        r"-2 \\le x \\le 7",
    ):
        check_reference(reference)


# (completion, reference, correct): a whole completion with several boxes, through extraction
BOXED_COMPLETIONS = [
    P(r"The solutions are $\boxed{2}$ and $\boxed{3}$.", "2, 3", True, id="two-boxes-for-two-values"),
    P(r"The solutions are $\boxed{2}$ and $\boxed{3}$.", "2", False, id="two-boxes-for-one-value"),
    P(r"Maybe \boxed{5}. Final: \boxed{2} and \boxed{3}", "2, 3", False, id="a-tentative-box-counts"),
    P(r"So \boxed{2}.", "2, 3", False, id="one-of-two"),
]


@pytest.mark.parametrize(("completion", "reference", "correct"), BOXED_COMPLETIONS)
def test_grade_reads_several_boxes_as_a_list_only_for_a_list(completion, reference, correct):
    verdict = grade(completion, reference)
    assert verdict.correct is correct, verdict
    if correct:
        assert "read as one list" in verdict.explanation


BOUND_S = 3.0  # generous for a loaded CI box; scripts/bench_verifier.py reports the real maximum
UNION = r"(-\infty,-1) \cup (3,\infty)"
# every new reading, pushed to its size limits: False (or a refusal), fast
OVERSIZED = [
    P(r" \text{ or } ".join(["x < 1", "x > 2"] * 40), UNION, id="many-or-inequalities"),
    P(r" \cup ".join(f"({k}, {k + 1})" for k in range(0, 140, 2)), UNION, id="union-of-70-intervals"),
    P(r"\{x \mid " * 40 + "x > 3" + r"\}" * 40, r"(3, \infty)", id="nested-set-builders"),
    P(r"\pm" * 300, "1, -1", id="many-pm"),
    P(r"\frac{1 \pm 2}{3 \pm 4}", "1, 2", id="two-pm-in-one-value"),
    P("\\\\" * 490, "1", id="doubled-pairs-only"),
    P("\\\\frac{" * 80 + "1" + "}{2}" * 80, "1", id="doubled-deep-fracs"),
    P(", ".join(rf"\boxed{{{k}}}" for k in range(80)), "1, 2", id="eighty-boxes"),
    P("(1,2), " * 120 + "(1,2)", "(1, 2), (2, 1)", id="repeated-tuples"),
    P(";".join(["p=1,q=2"] * 60), "p=1,q=2;p=2,q=1", id="repeated-groups"),
]


@pytest.mark.parametrize(("candidate", "reference"), OVERSIZED)
def test_oversized_new_shapes_are_false_fast(candidate, reference):
    start = time.monotonic()
    outcome = check(candidate, reference)
    assert outcome.equal is False, outcome
    assert time.monotonic() - start < BOUND_S
