"""evals/log_stats/paired.py: the paired difference, its interval and test, on tables checkable by hand or in print."""

import math
import random

import pytest

from evals.log_stats.paired import (
    PairedTable,
    compare,
    compare_outcomes,
    mcnemar_midp,
    newcombe_interval,
    paired_table,
    wilson_interval,
)

# --- Wilson score interval: the building block ---


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [
        # 0 of n: the upper end is z^2 / (n + z^2) (here 1.96^2 / 13.8415), the classic 0.2775
        (0, 10, 0.0, 0.27753),
        (10, 10, 0.72247, 1.0),
        # 5 of 10: centred on 0.5; half width z*sqrt(0.025 + z^2/400)/(1 + z^2/10) = 0.26340
        (5, 10, 0.23659, 0.76341),
        # 1 of 2: centre 0.5, half width 1.96*sqrt(0.125 + z^2/16)/(1 + z^2/2) = 0.40547
        (1, 2, 0.09453, 0.90547),
    ],
)
def test_wilson_interval_on_hand_computed_values(successes, n, low, high):
    got = wilson_interval(successes, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_wilson_interval_rejects_impossible_counts():
    for successes, n in [(-1, 10), (11, 10), (0, 0)]:
        with pytest.raises(ValueError):
            wilson_interval(successes, n)


# --- the 2x2 table ---


def test_table_counts_and_difference():
    table = paired_table(
        before={"a": True, "b": True, "c": False, "d": False, "e": False},
        after={"a": True, "b": False, "c": True, "d": True, "e": False},
    )
    assert table == PairedTable(both=1, only_after=2, only_before=1, neither=1)
    assert (table.n, table.before, table.after, table.difference) == (5, 0.4, 0.6, pytest.approx(0.2))


def test_table_needs_the_same_problems_on_both_sides():
    with pytest.raises(ValueError, match="not on the same problems"):
        paired_table({"a": True, "b": True}, {"a": True, "c": False})


@pytest.mark.parametrize("bad", [-1, 1.5, True, None])
def test_table_rejects_non_counts(bad):
    with pytest.raises(ValueError, match="must be a count"):
        PairedTable(both=bad, only_after=0, only_before=0, neither=1)


def test_empty_table_is_an_error():
    with pytest.raises(ValueError, match="at least one problem"):
        PairedTable(0, 0, 0, 0)


# --- Newcombe's interval and McNemar's mid-p test: published values ---


def test_published_example_cavo_2012():
    """Fagerland, Lydersen & Laake (Statistical Analysis of Contingency Tables, 2017, ch. 8; the R package
    contingencytables prints the same): complete response before/after consolidation therapy, n = 161,
    59 both, 6 only in the first measurement, 16 only in the second, 80 neither. Difference -0.0621,
    Newcombe square-and-add 95% CI -0.1186 to -0.0046; McNemar mid-p 0.035 (exact conditional 0.052)."""
    table = PairedTable(both=59, only_after=6, only_before=16, neither=80)
    result = compare(table)
    assert result.difference == pytest.approx(-10 / 161)
    assert (round(result.low, 4), round(result.high, 4)) == (-0.1186, -0.0046)
    # by hand: 2 * (sum_{i<6} C(22, i) + C(22, 6) / 2) / 2^22 = 2 * (35443 + 37306.5) / 4194304
    assert result.p_value == pytest.approx(145499 / 4194304)
    assert result.verdict == "worse"


@pytest.mark.parametrize(
    ("only_after", "only_before", "p"),
    [
        (0, 0, 1.0),  # no discordant problem: no evidence either way
        (3, 3, 1.0),  # a tie: mid-p is exactly 1
        # 1 vs 0 discordant: P(X=0)/2 doubled = 2 * (1/2) / 2 = 0.5
        (1, 0, 0.5),
        # 5 vs 0: 2 * (C(5,0)/2) / 32 = 1/32
        (5, 0, 1 / 32),
        # 7 vs 1: 2 * (C(8,0) + C(8,1)/2) / 256 = 2 * 5 / 256
        (7, 1, 10 / 256),
    ],
)
def test_mcnemar_midp_by_hand(only_after, only_before, p):
    table = PairedTable(both=10, only_after=only_after, only_before=only_before, neither=10)
    assert mcnemar_midp(table) == pytest.approx(p)


def test_interval_depends_only_on_which_side_is_after():
    """Swapping before and after negates the interval exactly (the method treats both sides alike)."""
    table = PairedTable(both=90, only_after=35, only_before=12, neither=63)
    swapped = PairedTable(both=90, only_after=12, only_before=35, neither=63)
    low, high = newcombe_interval(table)
    assert newcombe_interval(swapped) == pytest.approx((-high, -low))


@pytest.mark.parametrize(
    "table",
    [
        PairedTable(200, 0, 0, 0),  # all correct on both sides
        PairedTable(0, 0, 0, 200),  # all wrong on both sides
        PairedTable(0, 200, 0, 0),  # every problem flipped to correct
        PairedTable(0, 0, 200, 0),
        PairedTable(1, 0, 0, 0),  # one problem
        PairedTable(10, 1, 0, 189),
    ],
)
def test_interval_is_well_formed_at_the_edges(table):
    result = compare(table)
    assert -1.0 <= result.low <= result.difference <= result.high <= 1.0
    assert all(math.isfinite(v) for v in (result.low, result.high, result.p_value))


def test_no_discordant_problems_means_no_clear_difference():
    result = compare(PairedTable(both=120, only_after=0, only_before=0, neither=80))
    assert result.difference == 0 and result.low < 0 < result.high
    assert result.verdict == "no clear difference" and result.p_value == 1.0


def test_pairing_narrows_the_interval():
    """Strongly correlated outcomes (most problems agree): the paired interval is much narrower than the
    one an unpaired comparison of the same two accuracies gives (here 0.52 -> 0.60 on 200 problems)."""
    table = PairedTable(both=100, only_after=20, only_before=4, neither=76)
    low, high = newcombe_interval(table)
    assert low > 0  # 16 more problems right, 20 gained vs 4 lost: a clear gain
    unpaired = math.sqrt(0.52 * 0.48 / 200 + 0.60 * 0.40 / 200) * 1.96 * 2
    assert high - low < 0.6 * unpaired


def test_coverage_is_near_nominal_on_simulated_evals():
    """The 95% interval holds the true difference ~95% of the time on 200-problem evals like the demo's
    (seeded: this test gives the same answer every run)."""
    rng = random.Random(20)
    # true cell probabilities: both, only_after, only_before, neither (difference 0.10)
    cells = (0.45, 0.15, 0.05, 0.35)
    truth = cells[1] - cells[2]
    trials, covered = 2000, 0
    for _ in range(trials):
        counts = [0, 0, 0, 0]
        for cell in rng.choices(range(4), weights=cells, k=200):
            counts[cell] += 1
        low, high = newcombe_interval(PairedTable(*counts))
        covered += low <= truth <= high
    assert 0.93 <= covered / trials <= 0.97


def test_compare_outcomes_and_dict_form():
    before = {i: i < 50 for i in range(200)}  # 50 right
    after = {i: i < 50 or i >= 170 for i in range(200)}  # the same 50 and 30 more
    result = compare_outcomes(before, after)
    row = result.to_dict()
    assert row["n"] == 200 and row["before"] == 0.25 and row["after"] == 0.4
    assert row["only_after"] == 30 and row["only_before"] == 0 and row["verdict"] == "better"
    assert row["low"] > 0 and row["confidence"] == 0.95
