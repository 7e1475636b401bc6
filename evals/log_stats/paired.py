r"""Did a change help? Paired comparison of two evals graded on the same problems.

Two greedy evals of the same problems (before and after training, or two precisions of one policy)
are *paired*: a problem that is easy for one is easy for the other, so the accuracy difference is
far more precise than two independent ``accuracy ± stderr`` rows suggest. Everything here works on
the 2x2 table of per-problem outcomes::

                      after correct   after wrong
    before correct        both         only_before
    before wrong       only_after        neither

difference = accuracy(after) - accuracy(before) = (only_after - only_before) / n.

Methods (Fagerland, Lydersen & Laake, "Recommended confidence intervals and tests for the difference
between paired binomial proportions", Stat. Med. 2013; and their book, 2017, ch. 8):

* the interval is **Newcombe's square-and-add (hybrid Wilson score) interval** for a difference of
  paired proportions (Newcombe, Stat. Med. 1998, method 10): two Wilson score intervals combined with
  the observed correlation. Closed form and deterministic (the same logs always give the same
  interval, unlike a bootstrap without a fixed seed), near-nominal coverage from n = 20 up, and it
  stays sensible with few discordant problems, where a percentile bootstrap or the Wald interval
  under-cover;
* the test is the **McNemar mid-p test**: the exact binomial test on the discordant problems
  (``only_after`` against ``only_before`` under p = 1/2), with the mid-p correction. The exact
  conditional test is known to be conservative; mid-p keeps close to the nominal level.

Pure stdlib (math, statistics): importable anywhere, including a training loop's own eval.
Reading the per-problem outcomes out of Inspect logs is ``evals.log_stats.eval_pairs``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from statistics import NormalDist

CONFIDENCE = 0.95


@dataclass(frozen=True)
class PairedTable:
    """Counts of problems by outcome before and after (see the module docstring)."""

    both: int
    only_after: int
    only_before: int
    neither: int

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a count (int >= 0), got {value!r}")
        if self.n == 0:
            raise ValueError("a paired table needs at least one problem")

    @property
    def n(self) -> int:
        return self.both + self.only_after + self.only_before + self.neither

    @property
    def before(self) -> float:
        return (self.both + self.only_before) / self.n

    @property
    def after(self) -> float:
        return (self.both + self.only_after) / self.n

    @property
    def difference(self) -> float:
        return (self.only_after - self.only_before) / self.n


def paired_table(before: Mapping[object, bool], after: Mapping[object, bool]) -> PairedTable:
    """The table of two outcome maps (problem id -> correct) over the same problems."""
    if before.keys() != after.keys():
        only_b = sorted(map(str, before.keys() - after.keys()))[:5]
        only_a = sorted(map(str, after.keys() - before.keys()))[:5]
        raise ValueError(
            f"the two evals are not on the same problems (only before: {only_b}, only after: {only_a}); "
            "a paired comparison needs the same problem ids on both sides"
        )
    counts = {(True, True): 0, (False, True): 0, (True, False): 0, (False, False): 0}
    for key, was in before.items():
        counts[(bool(was), bool(after[key]))] += 1
    return PairedTable(
        both=counts[(True, True)],
        only_after=counts[(False, True)],
        only_before=counts[(True, False)],
        neither=counts[(False, False)],
    )


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (Wilson, JASA 1927)."""
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n > 0, got {successes} of {n}")
    z = _z(confidence)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends: no 1e-17 rounding residue
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def newcombe_interval(table: PairedTable, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Newcombe's square-and-add interval for ``table.difference`` (after - before), 1998 method 10."""
    n = table.n
    after_hits, before_hits = table.both + table.only_after, table.both + table.only_before
    p1, p2 = table.after, table.before
    l1, u1 = wilson_interval(after_hits, n, confidence)
    l2, u2 = wilson_interval(before_hits, n, confidence)
    margins = after_hits * (n - after_hits) * before_hits * (n - before_hits)
    phi = 0.0  # the observed correlation of the two outcomes, shrunk towards 0 as Newcombe prescribes
    if margins > 0:
        cross = table.both * table.neither - table.only_after * table.only_before
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    d = table.difference
    low = d - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = d + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1.0, low), min(1.0, high)


def mcnemar_midp(table: PairedTable) -> float:
    """Two-sided McNemar mid-p value: exact binomial on the discordant problems, mid-p corrected."""
    m = table.only_after + table.only_before
    if m == 0:
        return 1.0
    k = min(table.only_after, table.only_before)
    tail = sum(math.comb(m, i) for i in range(k)) + math.comb(m, k) / 2  # P(X < k) + P(X = k) / 2, times 2**m
    return min(1.0, 2 * tail / 2**m)


@dataclass(frozen=True)
class PairedDifference:
    """after - before on the same problems, with its interval and test (all fractions, not percent)."""

    n: int
    before: float
    after: float
    difference: float
    low: float
    high: float
    p_value: float
    confidence: float
    table: PairedTable

    @property
    def verdict(self) -> str:
        """What the interval supports, in words: ``better``, ``worse`` or ``no clear difference``."""
        if self.low > 0:
            return "better"
        if self.high < 0:
            return "worse"
        return "no clear difference"

    def to_dict(self) -> dict:
        return {
            **{k: v for k, v in asdict(self).items() if k != "table"},
            "verdict": self.verdict,
            **asdict(self.table),
        }


def compare(table: PairedTable, confidence: float = CONFIDENCE) -> PairedDifference:
    """The paired difference after - before, its Newcombe interval and McNemar mid-p value."""
    low, high = newcombe_interval(table, confidence)
    return PairedDifference(
        n=table.n,
        before=table.before,
        after=table.after,
        difference=table.difference,
        low=low,
        high=high,
        p_value=mcnemar_midp(table),
        confidence=confidence,
        table=table,
    )


def compare_outcomes(
    before: Mapping[object, bool], after: Mapping[object, bool], confidence: float = CONFIDENCE
) -> PairedDifference:
    """``compare`` on two outcome maps (problem id -> correct) over the same problems."""
    return compare(paired_table(before, after), confidence)
