r"""Labels on a list of tuples (issue #39, outside attack set: "labels dropped on a list of tuples").

``(x, y) = (1, 2), (3, 4)`` says x is 1 and y is 2 in the first solution. Before this fix the labels were
dropped when the right side was a list (the reference read as two unlabeled points), so ``(y, x) = (1, 2),
(3, 4)``, ``(a, b) = (1, 2), (3, 4)`` and a partly relabeled list were paid; rows marked "was paid" returned True
before. An unlabeled list in the labels' order still pays, as an unlabeled tuple does for one labeled point.
"""

import pytest

from rewards import InvalidReference, is_correct

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

REF = "(x, y) = (1, 2), (3, 4)"

LABELED_LISTS = [
    # honest answers
    P(REF, REF, True, id="same"),
    P("(y, x) = (2, 1), (4, 3)", REF, True, id="labels-and-values-swapped"),
    P(r"(x, y) = (1, 2) \text{ or } (x, y) = (3, 4)", REF, True, id="each-labeled"),
    P("(y,x) = (2,1), (x,y) = (3,4)", REF, True, id="mixed-labels-paired"),
    P(r"\{(x, y) = (1, 2), (x, y) = (3, 4)\}", REF, True, id="set-of-labeled"),
    P(r"(x, y) = \{(1, 2), (3, 4)\}", REF, True, id="labels-on-a-set"),
    P(r"(x, y) = (1, 2) \text{ or } (3, 4)", REF, True, id="label-shared-by-or"),
    P(r"(y, x) = (2, 1) \text{ or } (4, 3)", REF, True, id="swapped-label-shared-by-or"),
    P("(3, 4), (1, 2)", REF, True, id="unlabeled-in-label-order"),
    P(r"(x,y) \in \{(1, 2), (3, 4)\}", REF, True, id="membership-in-a-set-of-points"),
    P("(y, x) = (2, 1), (4, 3)", r"(x, y) = (1, 2) \text{ or } (3, 4)", True, id="ref-label-shared-by-or"),
    P("(y, x) = (2, 1), (4, 3)", r"(x,y) \in \{(1, 2), (3, 4)\}", True, id="ref-membership"),
    P("(b, a, c) = (2, 1, 3), (2, 3, 1)", "(a, b, c) = (1, 2, 3), (3, 2, 1)", True, id="triples-relabeled"),
    # near misses
    P("(y, x) = (1, 2), (3, 4)", REF, False, id="labels-swapped-was-paid"),
    P("(a, b) = (1, 2), (3, 4)", REF, False, id="other-labels-was-paid"),
    P(r"(y, x) = (1, 2) \text{ or } (y, x) = (3, 4)", REF, False, id="each-swapped-was-paid"),
    P(r"(y,x)=(1,2) \text{ and } (y,x)=(3,4)", REF, False, id="each-swapped-and-was-paid"),
    P("(x, y) = (1, 2), (y, x) = (3, 4)", REF, False, id="second-relabeled-was-paid"),
    P("(y,x) = (1,2), (x,y) = (3,4)", REF, False, id="first-relabeled-was-paid"),
    P(r"(y, x) = \{(1, 2), (3, 4)\}", REF, False, id="swapped-labels-on-a-set"),
    P(r"(y, x) = (1, 2) \text{ or } (3, 4)", REF, False, id="swapped-label-shared-by-or-was-paid"),
    P("(2, 1), (4, 3)", REF, False, id="unlabeled-out-of-order"),
    P(r"(y,x) \in \{(1, 2), (3, 4)\}", REF, False, id="membership-swapped"),
    P("(x, y) = (1, 2), (3, 4, 5)", REF, False, id="labels-do-not-pair"),
    P("(x, y) = (1, 2)", REF, False, id="one-solution-missing"),
    P("(y, x) = (1, 2), (3, 4)", "(x, y) = (1, 2), (x, y) = (3, 4)", False, id="ref-each-labeled-was-paid"),
    P("(y, x) = (1, 2), (3, 4)", r"\{(x, y) = (1, 2), (x, y) = (3, 4)\}", False, id="ref-set-of-labeled-was-paid"),
    P("(y, x) = (1, 2), (4, 3)", r"(x, y) = (1, 2) \text{ or } (3, 4)", False, id="ref-or-half-swapped"),
    P("(y, x) = (2, 1), (3, 4)", r"(x, y) = (1, 2) \text{ and } (3, 4)", False, id="ref-and-half-swapped"),
    P("(y, x) = (1, 2), (3, 4)", r"(x,y) \in \{(1, 2), (3, 4)\}", False, id="ref-membership-swapped"),
    P("(b, a, c) = (1, 2, 3), (3, 2, 1)", "(a, b, c) = (1, 2, 3), (3, 2, 1)", False, id="triples-relabeled-was-paid"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), LABELED_LISTS)
def test_labels_on_a_list_of_tuples(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


def test_labels_that_do_not_pair_make_a_bad_reference():
    with pytest.raises(InvalidReference, match="do not pair"):
        is_correct("(1, 2), (3, 4)", "(x, y) = (1, 2), (3, 4, 5)")
