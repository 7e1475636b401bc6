r"""Lists of sets are never flattened (issue #50, item 2).

Round 5 refused a braced set of sets (``\{\{1,2\},3\}``) but flattened every other list of sets into one list of
values, so ``\{1\}, \{2, 3\}`` paid for the different partition ``\{1, 2\}, \{3\}``, whatever separated the sets
(``,`` ``;`` ``\text{ and }``, ``or``, boxes, two ``ANSWER:`` lines), and ``\{1,2\} \text{ or } \{3\}`` paid for
``\{1,2,3\}``. A set written in braces is now one element of the list that holds it
(``rewards.math.answer_tree.collection``); a union (``\cup``) is still one set. The oracle's ``set_lists`` shape
(``tests/rewards/math/oracle/pairs.py``) generates partitions and their wrong twins.
"""

import pytest

from rewards import InvalidReference, grade, is_correct

P = pytest.param
pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

PARTITION = r"\{1, 2\}, \{3\}"

# each was paid by round 5: another partition of the same elements, or a list of sets for one set
FLATTENED = [
    P(r"\{1\}, \{2, 3\}", PARTITION, id="another-partition-comma"),
    P(r"\{1\}; \{2, 3\}", r"\{1, 2\}; \{3\}", id="another-partition-semicolon"),
    P(r"\{1\} \text{ and } \{2, 3\}", PARTITION, id="another-partition-and"),
    P(r"\{1\} \text{ or } \{2, 3\}", PARTITION, id="another-partition-or"),
    P(r"\{1\} or \{2, 3\}", PARTITION, id="another-partition-plain-or"),
    P(r"\left\{3, 1\right\}, \left\{2\right\}", PARTITION, id="another-partition-left-right"),
    P(r"\{1\}, \{2\}, \{3\}", PARTITION, id="finer-partition"),
    P(r"\{1,2\} \text{ or } \{3\}", r"\{1,2,3\}", id="two-sets-for-one"),
    P(r"\{1,2\}, \{3\}", r"\{1,2,3\}", id="a-list-of-sets-for-one-set"),
    P(r"\{1, 2\}, \{3\}", "1, 2, 3", id="a-list-of-sets-for-a-list-of-values"),
    P(r"\{1\}, 2, 3", "1, 2, 3", id="a-set-among-values"),
    P(r"x \in \{1, 2\} \text{ or } x \in \{3\}", r"\{1, 2, 3\}", id="memberships"),
]

SAME = [
    P(r"\{3\}, \{2, 1\}", PARTITION, True, id="sets-and-elements-reordered"),
    P(r"\{2, 1\}; \{3\}", PARTITION, True, id="semicolon"),
    P(r"\{3\} \text{ or } \{1, 2\}", PARTITION, True, id="or-list-of-the-same-sets"),
    P(r"\left\{1,2\right\},\quad \left\{3\right\}", PARTITION, True, id="left-right-and-quad"),
    P(r"\{1, 2\}, \{3\}, \{3\}", PARTITION, True, id="a-repeated-set-is-not-a-new-one"),
    P(r"\{1, 2\}", PARTITION, False, id="a-set-missing"),
    P(r"\{1, 2, 3\}", PARTITION, False, id="one-set-for-a-list"),
    P(r"\{1, 2\} \cup \{3\}", PARTITION, False, id="a-union-for-a-list"),
    # a union is one set; a set still equals a list of its values
    P(r"\{1, 2\} \cup \{3\}", r"\{1, 2, 3\}", True, id="union-of-sets"),
    P(r"\{1\} \cup \{2, 3\}", "1, 2, 3", True, id="union-for-a-list-of-values"),
    P(r"\{1, 2, 3\}", "1, 2, 3", True, id="set-for-a-list"),
    P("3, 1, 2", r"\{1, 2, 3\}", True, id="list-for-a-set"),
    P(r"x \in \{1, 2\}", "x = 1, x = 2", True, id="membership"),
    P(r"\{1 \pm \sqrt{5}, -2\}", r"\{1 + \sqrt{5}, 1 - \sqrt{5}, -2\}", True, id="pm-inside-a-set-is-two-values"),
    P(r"\{1\} \cup \{2\}, \{3\}", PARTITION, False, id="a-union-beside-a-list"),
]


@pytest.mark.parametrize(("candidate", "reference"), FLATTENED)
def test_a_list_of_sets_is_not_its_values(candidate, reference):
    assert is_correct(candidate, reference) is False


@pytest.mark.parametrize(("candidate", "reference", "expected"), SAME)
def test_lists_of_sets_and_unions(candidate, reference, expected):
    assert is_correct(candidate, reference) is expected


@pytest.mark.parametrize(
    ("completion", "reference", "correct"),
    [
        P("ANSWER: \\{1\\}\nANSWER: \\{2, 3\\}", PARTITION, False, id="answer-lines-another-partition"),
        P("ANSWER: \\{1,2\\}\nANSWER: \\{3\\}", r"\{1,2,3\}", False, id="answer-lines-for-one-set"),
        P(r"\boxed{\{1\}}, \boxed{\{2, 3\}}", PARTITION, False, id="boxes-another-partition"),
        P(r"\boxed{\{1,2\}} and \boxed{\{3\}}", r"\{1,2,3\}", False, id="boxes-for-one-set"),
        P("ANSWER: \\{3\\}\nANSWER: \\{2, 1\\}", PARTITION, True, id="answer-lines-the-same-partition"),
        P(r"\boxed{\{1, 2\}}, \boxed{\{3\}}", PARTITION, True, id="boxes-the-same-partition"),
        P("ANSWER: 1\nANSWER: 2, 3", r"\{1,2,3\}", True, id="answer-lines-of-values"),
    ],
)
def test_grade_reads_several_answers_as_a_list_of_sets(completion, reference, correct):
    assert grade(completion, reference).correct is correct


def test_a_list_of_sets_is_a_readable_reference():
    """Before, ``\\{1, 2\\}, \\{3\\}`` was read as the values 1, 2, 3; a set of sets is still refused."""
    assert is_correct("1, 2, 3", PARTITION) is False
    with pytest.raises(InvalidReference, match="set of sets"):
        is_correct("1", r"\{\{1, 2\}, \{3\}\}")
