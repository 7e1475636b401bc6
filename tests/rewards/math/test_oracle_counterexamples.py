r"""False accepts the soundness oracle found (tests/rewards/math/oracle/), one row each, by class (issue #29).

Each row is a pair the verifier called equal while the generator had built different objects; ``expected`` is
the oracle's verdict. The ``via`` column says how the oracle asked: ``is_correct`` on the extracted answer, or
``grade`` on a whole completion. Found on the verifier of 2026-12-02 (before the round-4 fixes).
"""

import pytest

from rewards import grade, is_correct

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

ROWS = [
    # 1. `and` between two memberships is their intersection (here empty), never their union
    pytest.param(
        r"x \in \left(-\infty, 1\right] \text{ and } x \in \left(11, \infty\right)",
        r"1 \ge x \text{ or } x > 11",
        False,
        "is_correct",
        id="1-and-memberships-vs-or-inequalities",
    ),
    pytest.param(
        r"x \in (-\infty, -1) \text{ and } x \in [6, 8)",
        r"x \in \left(-\infty,-1\right) \text{ or } x \in \left[6,8\right)",
        False,
        "is_correct",
        id="1-and-memberships-vs-or-memberships",
    ),
    pytest.param(
        r"x \in [1,2] \text{ and } x \in [3,4]", r"[1,2] \cup [3,4]", False, "is_correct", id="1-and-vs-union"
    ),
    pytest.param(r"x \in [1,2] and x \in [3,4]", r"[1,2] \cup [3,4]", False, "is_correct", id="1-plain-and-vs-union"),
    # 2. two variables in one interval answer
    pytest.param(
        r"x \in [-5,\!7)\text{ or }y \in (11, \infty)",
        r"x \in [-5,7) \cup (11,\infty)",
        False,
        "is_correct",
        id="2-mixed-variables-named-reference",
    ),
    pytest.param(
        r"x \in (-8, 3) \text{ or } y \in [5, 8]",
        r"(−8,\quad 3) \cup [5,\quad 8]",
        False,
        "is_correct",
        id="2-mixed-variables-notation-reference",
    ),
    pytest.param(
        r"y \in [1,2] \cup (3, \infty)",
        r"t \in [1,2] \text{ or } t \in (3,\infty)",
        False,
        "is_correct",
        id="2-or-list-reference-forgets-its-variable",
    ),
    pytest.param(
        r"t \in [7, 9) \text{ and } t \in [5, 12]",
        r"t \in [7,9)\text{ or }t \in [5,12]",
        False,
        "is_correct",
        id="1-and-overlapping-memberships",
    ),
    # 3. a constant is not the variable: `\pi < 6` is a true statement, not the set (-inf, 6)
    pytest.param(r"\pi < 6", r"\left(-\infty,\,6\right)", False, "is_correct", id="3-pi-less-than"),
    pytest.param(r"\pi \in (-\infty, 5)", "(-infinity,5)", False, "is_correct", id="3-pi-in"),
    pytest.param("e < 8", r"(-\infty,8)", False, "is_correct", id="3-e-less-than"),
    pytest.param(r"e \in (-\infty, 4)", "(-infinity, 4)", False, "is_correct", id="3-e-in"),
    # 4. a tuple's labels count: (y, x) = (a, b) says x = b
    pytest.param("(y, x) = (-7, -9)", "(x, y) = (-7,-9)", False, "is_correct", id="4-labels-swapped"),
    pytest.param(
        r"\left(y, x\right) = \left(−5,\,9\right)",
        r"\left(x, y\right) = \left(-5,9\right)",
        False,
        "is_correct",
        id="4-labels-swapped-left-right",
    ),
    pytest.param("(y, x, z) = (4, 41, -8)", "(x, y, z) = (4,41,-8)", False, "is_correct", id="4-three-labels"),
    # 5. an unnamed list does not pay a named answer
    pytest.param("−7, 6", "x = -7, y = 6", False, "is_correct", id="5-unnamed-in-order"),
    pytest.param("4, −7", "x = -7, y = 4", False, "is_correct", id="5-unnamed-reordered"),
    pytest.param("8, 1, 4", "x = 4, y = 1, z = 8", False, "is_correct", id="5-unnamed-three"),
    pytest.param("ANSWER: 4\nANSWER: -5", "x = 4, y = −5", False, "grade", id="5-answer-lines"),
    pytest.param("ANSWER: 9\nANSWER: 4", "x = 4, y = 9", False, "grade", id="5-answer-lines-reordered"),
    # 6. two values side by side are two answers, never their product
    pytest.param(r"\sqrt{15}\;23", r"\sqrt{15}*23", False, "is_correct", id="6-thick-space-number"),
    pytest.param(r"18\quad \sqrt{15}", r"18\times \sqrt{15}", False, "is_correct", id="6-quad"),
    pytest.param(
        r"\frac{29}{5}\quad \frac{11}{2}", r"\dfrac{29}{5} \cdot \dfrac{11}{2}", False, "is_correct", id="6-quad-fracs"
    ),
    pytest.param(
        r"\tfrac{\pi}{4}\;\tfrac{1}{5}", r"(\frac{\pi}{4}) \cdot (\frac{1}{5})", False, "is_correct", id="6-semi-fracs"
    ),
    pytest.param(r"-33\,\dfrac{-2}{8}", r"(-33)\times (\dfrac{-2}{8})", False, "is_correct", id="6-thin-space-frac"),
    pytest.param("13\n\\sqrt{6}", r"13\sqrt{6}", False, "is_correct", id="6-newline"),
    pytest.param(r"2\pi  2\pi", r"(2\pi) \cdot (2\pi)", False, "is_correct", id="6-two-spaces"),
    pytest.param(
        r"3 \cdot \sqrt{5}\ 41", r"\left(3\sqrt{5}\right) \cdot 41", False, "is_correct", id="6-control-space"
    ),
    pytest.param(
        r"The answer is \boxed{-18\qquad\sqrt{15}}", r"(-18)\times \sqrt{15}", False, "grade", id="6-in-a-box"
    ),
    pytest.param(
        "The answer is \\boxed{22\n\\sqrt{3}}",
        r"22\times \sqrt{3}",
        False,
        "grade",
        id="6-newline-before-root-in-a-box",
    ),
    pytest.param(
        r"2 \cdot \pi\ \tfrac{29}{12}",
        r"(2 \cdot \pi) \cdot \dfrac{29}{12}",
        False,
        "is_correct",
        id="6-letter-then-fraction",
    ),
    pytest.param("The answer is \\boxed{\\sqrt{2}\n3}", r"3\sqrt{2}", False, "grade", id="6-newline-in-a-box"),
    # 7. `√16` is the root of 16, not √1·6
    pytest.param("√16", "1 \\cdot 6", False, "is_correct", id="7-root-16"),
    pytest.param("√64", r"\sqrt{6} × 4", False, "is_correct", id="7-root-64"),
    pytest.param("√81", "sqrt(8)*1", False, "is_correct", id="7-root-81"),
    pytest.param("√45", r"\sqrt{4} \cdot 5", False, "is_correct", id="7-root-45"),
    # 8. a tautology is no equation
    pytest.param("3 = 3", "y = 3", False, "is_correct", id="8-constant-tautology"),
    pytest.param("-4 = -4", "x = -4", False, "is_correct", id="8-negative-tautology"),
    pytest.param("0 = 0", "x = 0", False, "is_correct", id="8-zero-tautology"),
    pytest.param("x - x = 0", "x = 0", False, "is_correct", id="8-variable-cancels"),
    # 9. set-builder with \leqslant: the condition's bound and variable were ignored (found by the oracle, not in #29)
    pytest.param(r"\{t : t\leqslant 13\}", r"\{t : t\leqslant 99\}", False, "is_correct", id="9-leqslant-bound"),
    pytest.param(r"\{t : t\leqslant 13\}", r"\{s : s\leqslant 12\}", False, "is_correct", id="9-leqslant-variable"),
    pytest.param(r"\{t : t\leqslant 13\}", r"\\{t : t\\leqslant 12\\}", False, "is_correct", id="9-leqslant-doubled"),
    pytest.param(r"\{x : x \geqslant 2\}", r"\{x : x\geqslant 5\}", False, "is_correct", id="9-geqslant-bound"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected", "via"), ROWS)
def test_oracle_counterexample(candidate, reference, expected, via):
    if via == "grade":
        assert grade(candidate, reference).correct is expected
    else:
        assert is_correct(candidate, reference) is expected
