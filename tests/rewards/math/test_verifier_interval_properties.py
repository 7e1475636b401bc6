r"""Property tests for interval sets: one set of reals written every way is equal to itself; changed at
one end, one bound, one piece, one connective or its variable, it never is."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewards import is_correct

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INF = None  # an unbounded end


@st.composite
def interval_sets(draw):
    """1-3 pieces with integer ends, sorted, with gaps between them; the outer ends may be unbounded."""
    count = draw(st.integers(1, 3))
    points = sorted(draw(st.lists(st.integers(-40, 40), min_size=2 * count, max_size=2 * count, unique=True)))
    pieces = []
    for k in range(count):
        low, high = points[2 * k], points[2 * k + 1]
        pieces.append([low, high, draw(st.booleans()), draw(st.booleans())])
    if draw(st.booleans()):
        pieces[0][0], pieces[0][2] = INF, False
    if draw(st.booleans()) and not (count == 1 and pieces[0][0] is INF):
        pieces[-1][1], pieces[-1][3] = INF, False
    return [tuple(p) for p in pieces]


def interval_text(piece) -> str:
    low, high, closed_low, closed_high = piece
    low_text = r"-\infty" if low is INF else str(low)
    high_text = r"\infty" if high is INF else str(high)
    return ("[" if closed_low else "(") + f"{low_text}, {high_text}" + ("]" if closed_high else ")")


def inequality_text(piece, name: str = "x") -> str:
    low, high, closed_low, closed_high = piece
    le_low, le_high = (r"\le" if closed_low else "<"), (r"\le" if closed_high else "<")
    if low is INF:
        return f"{name} {le_high} {high}"
    if high is INF:
        ge_low = r"\ge" if closed_low else ">"
        return f"{name} {ge_low} {low}"
    return f"{low} {le_low} {name} {le_high} {high}"


def written_forms(pieces) -> list[str]:
    forms = [
        r" \cup ".join(interval_text(p) for p in pieces),
        r"x \in " + r" \cup ".join(interval_text(p) for p in pieces),
        r" \text{ or } ".join(inequality_text(p) for p in reversed(pieces)),
    ]
    if len(pieces) == 1:
        forms.append(r"\{x \mid " + inequality_text(pieces[0]) + r"\}")
    return forms


def perturbations(pieces) -> list[tuple[str, list[int]]]:
    """(changed answer, which written forms of the original it is checked against)."""
    out = []
    for k, (low, high, closed_low, closed_high) in enumerate(pieces):
        changed = []
        if low is not INF:
            changed += [(low, high, not closed_low, closed_high), (low - 1, high, closed_low, closed_high)]
        if high is not INF:
            changed += [(low, high, closed_low, not closed_high), (low, high + 1, closed_low, closed_high)]
        for piece in changed:
            out.append((r" \cup ".join(interval_text(p if i != k else piece) for i, p in enumerate(pieces)), [0, 2]))
    if len(pieces) > 1:
        out.append((r" \cup ".join(interval_text(p) for p in pieces[1:]), [0, 2]))  # a piece missing
        out.append((r" \text{ and } ".join(inequality_text(p) for p in pieces), [0, 2]))  # and is not or
        out.append((", ".join(inequality_text(p) for p in pieces), [0, 2]))  # a system? a union? not read
    out.append((r" \text{ or } ".join(inequality_text(p, "y") for p in pieces), [1, 2]))  # another variable
    out.append((r"(-\infty, \infty)", [0, 2]))  # the reals cover more
    return out


@SETTINGS
@given(interval_sets())
def test_every_written_form_is_equal(pieces):
    forms = written_forms(pieces)
    for candidate in forms:
        for reference in forms:
            assert is_correct(candidate, reference), (candidate, reference)


@SETTINGS
@given(interval_sets())
def test_no_perturbation_is_equal(pieces):
    reference_forms = written_forms(pieces)
    for candidate, against in perturbations(pieces):
        for reference in (reference_forms[k] for k in against):
            assert not is_correct(candidate, reference), (candidate, reference)
