r"""The verifier against an independent oracle: whatever it accepts must be equal by the generator's own objects.

``tests/rewards/math/oracle/`` builds the object first (a number, an expression tree, a set of roots, a union
of intervals, a labeled tuple, an assignment, a matrix), renders candidate and reference independently in many
spellings, and mutates the object into wrong twins (a root missing, an end opened, labels swapped, two values
side by side, a tautology, a constant as the variable, ``√16``). The oracle decides equality from the objects
(mpmath at 60 digits at random points, interval membership at every end), sharing no parser with the verifier.

The property is soundness: verifier True => oracle equal (a failure is a false accept, what GRPO would be paid
for). Recall on the oracle's equal pairs is measured per shape; a floor is asserted only for the shapes the
documented policy (docs/verifier.md) says it accepts. The default run is a fixed-seed sweep (every shape per
seed); ``-m slow`` runs many more seeds. Print a full table with
``python -m tests.rewards.math.oracle.judge --pairs 4400 --seed 1``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.rewards.math.oracle import objects as o
from tests.rewards.math.oracle.judge import Tally, ask, describe, repro
from tests.rewards.math.oracle.objects import Interval, Meaning
from tests.rewards.math.oracle.pairs import ALL_SHAPES, HELD_OUT, SHAPES, make_pair

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

DEFAULT_SEEDS = 12  # x 44 shapes = 528 pairs: ~5 s at load 7 on 2 cores
LONG_SEEDS = 500  # x 44 shapes = 22,000 pairs, ~3 min at load 7 on 2 cores

# recall floors where docs/verifier.md's policy table says the shape is accepted (measured well above these;
# a floor below 1 leaves room for spellings the policy does not promise, e.g. plain `x in [1, 2]`)
RECALL_FLOORS = {
    "number": 0.9,
    "decimal": 0.9,
    "expression": 0.85,
    "equation": 0.85,
    "pm": 0.85,
    "roots": 0.85,
    "tuple": 0.8,
    "tupleset": 0.9,
    "assign": 0.9,
    "matrix": 0.9,
    "intervals": 0.4,
    "rounding": 0.85,  # written values around decimal references (issue #50); misses: wide gaps around a sign
    "set_lists": 0.9,
    # issue #50, recall within the policy (oracle/recall.py): the spellings the verifier now reads; misses are
    # spellings the policy refuses on purpose (a wide gap before a sign, a bare bracket before a radical)
    "recall:mixed_percent": 0.95,
    "recall:coefficient": 0.9,
    "recall:ordinal": 0.95,
    "recall:time": 0.95,
    "recall:cases": 0.95,
    "recall:braces": 0.95,
    "recall:repeating": 0.95,
    "recall:abs_inequality": 0.95,
    "recall:union": 0.95,
    "recall:complex_roots": 0.95,
    "recall:letter_product": 0.95,
    "recall:matrix_rows": 0.95,
}
NEW_SHAPE_SEEDS = 60  # the shapes of issue #50 (rounding door, lists of sets) at more seeds: ~120 pairs, a few s


def sweep(seeds: int) -> tuple[Tally, float]:
    """Every shape once per seed; seeds drawn by hypothesis, derandomized and database-less (same pairs every run)."""
    tally = Tally()

    @settings(
        max_examples=seeds,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.integers(0, 2**32 - 1))
    def one_seed(seed: int) -> None:
        for shape in ALL_SHAPES:
            pair = make_pair(shape, seed)
            tally.add(pair, *ask(pair))

    start = time.perf_counter()
    one_seed()
    return tally, time.perf_counter() - start


def false_accept_report(tally: Tally) -> str:
    groups = defaultdict(list)
    for pair in tally.false_accepts:
        groups[(pair.shape, pair.twin)].append(pair)
    lines = [f"{len(tally.false_accepts)} false accepts (verifier True, oracle different):"]
    for (shape, twin), pairs in sorted(groups.items()):
        lines.append(f"  {shape} / {twin}: {len(pairs)}")
        lines += [f"    {describe(p)}\n      {repro(p)}" for p in pairs[:3]]
    return "\n".join(lines)


def recall_report(tally: Tally) -> str:
    return "recall per shape (oracle-equal pairs the verifier accepted):\n" + tally.table()


@pytest.fixture(scope="module")
def default_sweep():
    """One sweep for the module, under the generous deadline the verdict tests use (tests/conftest.py): a
    module fixture runs before the function-scoped ``generous_verifier_deadline``, so it sets the same here."""
    from rewards.math import worker_pool

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker_pool, "DEADLINE_S", 60.0)
        worker_pool.warm_up()
        yield sweep(DEFAULT_SEEDS)


def test_verifier_true_implies_oracle_equal(default_sweep):
    tally, seconds = default_sweep
    print(f"\n{sum(tally.equal.values()) + sum(tally.different.values())} pairs in {seconds:.1f} s")
    print(recall_report(tally))
    if tally.false_accepts:
        pytest.fail(false_accept_report(tally), pytrace=False)


@pytest.mark.parametrize("shape", sorted(RECALL_FLOORS))
def test_recall_on_shapes_the_policy_accepts(default_sweep, shape):
    tally, _ = default_sweep
    assert tally.equal[shape] >= 4, f"too few equal {shape} pairs to measure"
    assert tally.recall(shape) >= RECALL_FLOORS[shape], (
        f"{shape}: recall {tally.recall(shape):.3f} < {RECALL_FLOORS[shape]}\n"
        + "\n".join(describe(p) for p in tally.misses[shape][:10])
    )


def test_every_shape_is_exercised(default_sweep):
    """The oracle is not vacuous: each shape yields wrong twins, and the accepted shapes yield equal pairs too.
    (A VerifierError is no verdict: such pairs are counted in the table's err column, never as False.)"""
    tally, _ = default_sweep
    for shape in ALL_SHAPES:
        assert tally.different[shape] + tally.refused_reference[shape] > 0, shape
    for shape in [*RECALL_FLOORS, *HELD_OUT]:
        assert tally.equal[shape] + tally.refused_reference[shape] > 0, shape
    assert set(SHAPES) | set(HELD_OUT) == set(ALL_SHAPES)


def test_the_rounding_door_and_lists_of_sets_at_more_seeds():
    """Issue #50's shapes alone, at more seeds than the sweep: written values paid exactly when they round, and no
    computation, vacuous factor, negligible term or other partition paid (round 5 paid 479 of 1,200 such pairs)."""
    from rewards.math import worker_pool

    tally = Tally()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker_pool, "DEADLINE_S", 60.0)
        for shape in ("rounding", "set_lists"):
            for seed in range(NEW_SHAPE_SEEDS):
                pair = make_pair(shape, 7919 * seed + 1)
                tally.add(pair, *ask(pair))
    if tally.false_accepts:
        pytest.fail(false_accept_report(tally), pytrace=False)
    for shape in ("rounding", "set_lists"):
        assert tally.different[shape] >= 10 and tally.equal[shape] >= 10, tally.table()
        assert tally.recall(shape) >= RECALL_FLOORS[shape], tally.table()


RECALL_SHAPE_SEEDS = 30  # issue #50's recall shapes at more seeds than the sweep: 360 pairs, a few s


def test_the_recall_shapes_at_more_seeds():
    """Issue #50's recall within the policy, alone at more seeds: the new spellings (``33\\frac{1}{3}\\%``,
    ``\\frac{1}{2}\\sqrt{3}``, ``7^\\text{th}``, ``3\\text{ p.m.}``, ``\\begin{cases}``, ``\\frac{{1}}{{3}}``,
    ``0.\\bar{3}``, ``2 > |x|``, ``x \\ge 1 \\text{ or } 1 \\le x``, ``x = 2i, x = -2i``, ``yx``, ``\\\\[4pt]``) are paid on
    either side, and none of their wrong twins (two values side by side in the new positions, the other half of
    the day, a wrong ordinal suffix, a contradictory system, a gap in a union, a root dropped) is."""
    from rewards.math import worker_pool
    from tests.rewards.math.oracle.recall import RECALL_SHAPES

    tally = Tally()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(worker_pool, "DEADLINE_S", 60.0)
        for shape in RECALL_SHAPES:
            for seed in range(RECALL_SHAPE_SEEDS):
                pair = make_pair(shape, 7919 * seed + 3)
                tally.add(pair, *ask(pair))
    if tally.false_accepts:
        pytest.fail(false_accept_report(tally), pytrace=False)
    for shape in RECALL_SHAPES:
        assert tally.different[shape] >= 5 and tally.equal[shape] >= 5, tally.table()
        assert tally.recall(shape) >= RECALL_FLOORS[shape], tally.table()


@pytest.mark.slow
def test_long_run_finds_no_false_accept():
    tally, seconds = sweep(LONG_SEEDS)
    print(f"\n{LONG_SEEDS * len(ALL_SHAPES)} pairs in {seconds:.0f} s")
    print(recall_report(tally))
    if tally.false_accepts:
        pytest.fail(false_accept_report(tally), pytrace=False)


# ---------------------------------------------------------------- the oracle itself (no verifier involved)

x, y = o.var("x"), o.var("y")
R = o.num


def iv(low, high, closed_low=False, closed_high=False) -> Interval:
    return Interval(
        None if low is None else Fraction(low), None if high is None else Fraction(high), closed_low, closed_high
    )


ORACLE_TABLE = [
    # expressions: numeric evaluation at random points and next to singularities
    pytest.param(
        o.value(o.power(o.add(x, R(1)), 2)), o.value(o.add(o.power(x, 2), o.mul(R(2), x), R(1))), True, id="square"
    ),
    pytest.param(o.value(o.sqrt(o.power(x, 2))), o.value(x), False, id="sqrt-x2-is-not-x"),
    pytest.param(
        o.value(o.div(o.add(o.power(x, 2), R(-1)), o.add(x, R(-1)))), o.value(o.add(x, R(1))), True, id="removable"
    ),
    pytest.param(o.value(o.func("sin", o.div(o.PI, R(6)))), o.value(R(Fraction(1, 2))), True, id="sin-pi-6"),
    pytest.param(
        o.value(o.add(R(1), o.div(R(1), o.mul(R(10**20), o.add(x, R(2)))))), o.value(R(1)), False, id="tiny-difference"
    ),
    pytest.param(o.value(o.sqrt(R(16))), o.value(o.mul(R(1), R(6))), False, id="root-16-is-not-6"),
    pytest.param(o.value(o.add(o.power(R(10), 32), R(-1))), o.value(o.power(R(10), 32)), False, id="big-off-by-one"),
    pytest.param(o.value(o.power(R(2), -72)), o.value(R(0)), False, id="tiny-is-not-zero"),
    pytest.param(o.value(o.func("sin", o.PI)), o.value(R(0)), True, id="sin-pi-is-zero"),
    pytest.param(
        o.value(o.num(Fraction("1.4142135623730950488"))), o.value(o.sqrt(R(2))), False, id="digits-of-root-2"
    ),
    pytest.param(o.value(R(3), "x"), o.value(R(3)), True, id="named-value-vs-bare"),
    pytest.param(o.value(R(3), "k"), o.value(R(3), "n"), False, id="names-differ"),
    # sets of values, hedges
    pytest.param(o.values([R(1), R(2)]), o.values([R(2), R(1)], "x"), True, id="order-free"),
    pytest.param(o.values([R(2), R(3)]), o.value(R(6)), False, id="two-values-for-one"),
    pytest.param(o.values([R(2), R(2)]), o.values([R(2)]), True, id="repeat-is-not-new"),
    # intervals: ends and strictness by membership
    pytest.param(
        Meaning("intervals", (iv(0, 1),)), Meaning("intervals", (iv(0, 1, True),)), False, id="open-vs-closed"
    ),
    pytest.param(
        Meaning("intervals", (iv(0, 1, True, True), iv(1, 2, False, False))),
        Meaning("intervals", (iv(0, 2, True),)),
        True,
        id="touching-union",
    ),
    pytest.param(
        Meaning("intervals", (iv(None, None),)),
        Meaning("intervals", (iv(None, 0), iv(0, None, True))),
        True,
        id="real-line",
    ),
    pytest.param(Meaning("intervals", ()), Meaning("intervals", (iv(1, 2),)), False, id="empty"),
    # tuples, assignments
    pytest.param(
        Meaning("tuple", (R(1), R(2)), labels=("y", "x")),
        Meaning("tuple", (R(1), R(2)), labels=("x", "y")),
        False,
        id="labels-swapped",
    ),
    pytest.param(
        Meaning("tuple", (R(2), R(1)), labels=("y", "x")),
        Meaning("tuple", (R(1), R(2)), labels=("x", "y")),
        True,
        id="labels-and-values-swapped",
    ),
    pytest.param(o.values([R(3), R(2)]), Meaning("assign", (("x", R(2)), ("y", R(3)))), False, id="unnamed-for-named"),
    # equations
    pytest.param(Meaning("lineq", ((("x", Fraction(0)),), Fraction(0))), o.value(R(1), "x"), False, id="tautology"),
    pytest.param(
        Meaning("lineq", ((("x", Fraction(2)), ("y", Fraction(4))), Fraction(6))),
        Meaning("lineq", ((("x", Fraction(-1)), ("y", Fraction(-2))), Fraction(-3))),
        True,
        id="scaled-equation",
    ),
    pytest.param(Meaning("nothing"), Meaning("nothing"), False, id="no-answer-is-never-equal"),
    # a decimal reference stated to N places: a written value rounds to it, a computation never answers it
    pytest.param(o.value(o.sqrt(R(2))), Meaning("rounded", (Fraction("1.41"),), labels=(2,)), True, id="root-rounds"),
    pytest.param(o.value(o.sqrt(R(2))), Meaning("rounded", (Fraction("1.42"),), labels=(2,)), False, id="root-not"),
    pytest.param(o.value(R(Fraction(1, 3))), Meaning("rounded", (Fraction("0.33"),), labels=(2,)), True, id="third"),
    pytest.param(o.value(R(Fraction("0.333"))), Meaning("rounded", (Fraction("0.33"),), labels=(2,)), False, id="dec"),
    pytest.param(o.value(R(Fraction("27.5"))), Meaning("rounded", (Fraction("27.5"),), labels=(1,)), True, id="same"),
    pytest.param(
        o.value(o.add(R(Fraction("27.54")), o.mul(o.power(R(10), -20), o.PI))),
        Meaning("rounded", (Fraction("27.5"),), labels=(1,)),
        True,
        id="epsilon-rounds-numerically",  # the generator marks it a computation (Meaning "computation"): refused
    ),
    pytest.param(Meaning("computation"), Meaning("rounded", (Fraction("27.5"),), labels=(1,)), False, id="computed"),
    pytest.param(
        o.value(o.E("log", (R(3),), 2)), Meaning("rounded", (Fraction("1.58"),), labels=(2,)), True, id="log-2-3"
    ),
    # lists of sets: order-free, each set order-free, never flattened
    pytest.param(
        Meaning("setlist", (frozenset({Fraction(1)}), frozenset({Fraction(2), Fraction(3)}))),
        Meaning("setlist", (frozenset({Fraction(1), Fraction(2)}), frozenset({Fraction(3)}))),
        False,
        id="another-partition",
    ),
    pytest.param(
        Meaning("setlist", (frozenset({Fraction(3)}), frozenset({Fraction(2), Fraction(1)}))),
        Meaning("setlist", (frozenset({Fraction(1), Fraction(2)}), frozenset({Fraction(3)}))),
        True,
        id="same-partition",
    ),
    pytest.param(
        o.values([R(1), R(2), R(3)]),
        Meaning("setlist", (frozenset({Fraction(1), Fraction(2)}), frozenset({Fraction(3)}))),
        False,
        id="flattened",
    ),
    # times of day: minutes after midnight; a bare number is no time
    pytest.param(Meaning("time", (15 * 60,)), Meaning("time", (15 * 60,)), True, id="same-time"),
    pytest.param(Meaning("time", (3 * 60,)), Meaning("time", (15 * 60,)), False, id="other-half-of-the-day"),
    pytest.param(o.value(R(3)), Meaning("time", (3 * 60,)), False, id="a-number-is-no-time"),
    # complex roots, and an unsolvable system (no answer)
    pytest.param(
        o.values([o.mul(R(2), o.IMAG), o.mul(R(-2), o.IMAG)], "x"),
        o.values([o.mul(R(-2), o.IMAG), o.mul(R(2), o.IMAG)], "x"),
        True,
        id="conjugate-roots",
    ),
    pytest.param(
        o.values([o.mul(R(2), o.IMAG), o.mul(R(2), o.IMAG)], "x"),
        o.values([o.mul(R(2), o.IMAG), o.mul(R(-2), o.IMAG)], "x"),
        False,
        id="a-root-missing",
    ),
    pytest.param(Meaning("nothing"), Meaning("assign", (("x", R(1)), ("y", R(2)))), False, id="contradiction"),
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), ORACLE_TABLE)
def test_the_oracle_decides_known_cases(candidate, reference, expected):
    assert o.truth(candidate, reference) is expected
    assert o.truth(reference, candidate) is expected or candidate.kind != reference.kind


def test_the_oracle_is_deterministic_and_renders_independently():
    first = [make_pair(shape, 7) for shape in ALL_SHAPES]
    assert first == [make_pair(shape, 7) for shape in ALL_SHAPES]
    spellings = {make_pair(shape, seed).reference for shape in SHAPES for seed in range(50)}
    assert (
        any("\\dfrac" in s for s in spellings)
        and any("−" in s for s in spellings)
        and any("\\left(" in s for s in spellings)
    )


def test_the_renderer_spells_what_the_normalizer_knows():
    """Gaps, boxes, delimiters and units come from rewards.math.vocabulary (spellings only, no parser): every gap it
    lists is rendered, and side-by-side twins wrap their values in its wrappers."""
    from rewards.math import vocabulary
    from tests.rewards.math.oracle import pairs, render

    assert {render.gap_text(g) for g in vocabulary.SPACING} <= set(render.SPACES)
    assert set(render.WIDE_GAPS) == {render.gap_text(g) for g, wide in vocabulary.SPACING.items() if wide}
    assert pairs.UNITS == sorted(vocabulary.UNITS)
    assert set(render.BOXES) | set(render.DELIMITERS) <= set(vocabulary.WRAPPERS.values())
    twins = [make_pair("side_by_side", seed).candidate for seed in range(200)]
    assert any(f"{before}" in t and t.count(after) >= 2 for t in twins for before, after in render.MATH_WRAPPERS)
