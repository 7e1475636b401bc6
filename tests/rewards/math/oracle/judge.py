"""Ask the verifier about a generated pair, and tally soundness and recall per shape.

``python -m tests.rewards.math.oracle.judge --pairs N --seed S`` prints, per shape, how many pairs were equal and
different by the oracle, the verifier's recall on the equal ones, and every false accept with its repro.
A ``VerifierError`` (overloaded) and an ``InvalidReference`` are not verdicts: counted apart, never as
False.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from rewards import InvalidReference, VerifierError, grade, is_correct
from tests.rewards.math.oracle.pairs import ALL_SHAPES, Pair, make_pair


def ask(pair: Pair) -> tuple[bool | None, str]:
    """(verdict, status): status is "verdict", "invalid_reference" or the VerifierError's name."""
    try:
        if pair.as_completion:
            text = pair.candidate if ("ANSWER:" in pair.candidate or "\\boxed" in pair.candidate) else None
            text = text or f"ANSWER: {pair.candidate}"
            return grade(text, pair.reference).correct, "verdict"
        return is_correct(pair.candidate, pair.reference), "verdict"
    except InvalidReference:
        return None, "invalid_reference"
    except VerifierError as exc:
        return None, type(exc).__name__


def repro(pair: Pair) -> str:
    """A one-line shell command that asks the verifier the same question."""
    call = "grade" if pair.as_completion else "is_correct"
    cand = pair.candidate
    if pair.as_completion and "ANSWER:" not in cand and "\\boxed" not in cand:
        cand = f"ANSWER: {cand}"
    return "python -c " + shlex.quote(f"import rewards; print(rewards.{call}({cand!r}, {pair.reference!r}))")


@dataclass(repr=False)
class Tally:
    equal: Counter = field(default_factory=Counter)  # shape -> equal pairs with a verdict
    accepted: Counter = field(default_factory=Counter)  # shape -> equal pairs the verifier accepted
    different: Counter = field(default_factory=Counter)
    refused_reference: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    false_accepts: list[Pair] = field(default_factory=list)
    misses: dict[str, list[Pair]] = field(default_factory=lambda: defaultdict(list))

    def add(self, pair: Pair, verdict: bool | None, status: str) -> None:
        if status == "invalid_reference":
            self.refused_reference[pair.shape] += 1
        elif verdict is None:
            self.errors[pair.shape] += 1
        elif pair.truth:
            self.equal[pair.shape] += 1
            self.accepted[pair.shape] += verdict
            if not verdict:
                self.misses[pair.shape].append(pair)
        else:
            self.different[pair.shape] += 1
            if verdict:
                self.false_accepts.append(pair)

    def __repr__(self) -> str:
        return f"Tally({sum(self.equal.values())} equal, {sum(self.different.values())} different)"

    def recall(self, shape: str) -> float | None:
        return self.accepted[shape] / self.equal[shape] if self.equal[shape] else None

    def table(self) -> str:
        lines = [
            f"{'shape':22s} {'equal':>6s} {'recall':>7s} {'differ':>7s} {'false acc':>9s} {'bad ref':>7s} {'err':>4s}"
        ]
        shapes = sorted(set(self.equal) | set(self.different) | set(self.refused_reference) | set(self.errors))
        for shape in shapes:
            fa = sum(p.shape == shape for p in self.false_accepts)
            rec = self.recall(shape)
            lines.append(
                f"{shape:22s} {self.equal[shape]:6d} {'-' if rec is None else f'{rec:.3f}':>7s} "
                f"{self.different[shape]:7d} {fa:9d} {self.refused_reference[shape]:7d} {self.errors[shape]:4d}"
            )
        return "\n".join(lines)


def describe(pair: Pair) -> str:
    return f"[{pair.shape}: {pair.twin or 'equal'}] candidate {pair.candidate!r} reference {pair.reference!r}"


def run(count: int, seed: int = 0, shapes=None) -> Tally:
    tally = Tally()
    shapes = list(shapes or ALL_SHAPES)
    for k in range(count):
        pair = make_pair(shapes[k % len(shapes)], seed * 1_000_003 + k)
        tally.add(pair, *ask(pair))
    return tally


def main(argv: list[str] | None = None) -> int:
    import argparse

    import rewards

    parser = argparse.ArgumentParser(
        prog="python -m tests.rewards.math.oracle.judge",
        description="Generated pairs against the verifier: recall per shape and every false accept, with a repro.",
    )
    parser.add_argument("--pairs", type=int, default=2200, help="how many pairs (shapes in turn)")
    parser.add_argument("--seed", type=int, default=0, help="which run of seeds (the same seed, the same pairs)")
    parser.add_argument("--misses", action="store_true", help="also print up to 8 missed equal pairs per shape")
    args = parser.parse_args(argv)
    rewards.warm_up()
    start = time.perf_counter()
    result = run(args.pairs, args.seed)
    print(f"{args.pairs} pairs in {time.perf_counter() - start:.1f} s")
    print(result.table())
    print(f"\nfalse accepts: {len(result.false_accepts)}")
    for pair in result.false_accepts:
        print(" ", describe(pair))
        print("   ", repro(pair))
    if args.misses:
        for shape, pairs in sorted(result.misses.items()):
            print(f"\nmisses ({shape}):")
            for pair in pairs[:8]:
                print(" ", describe(pair))
    return 1 if result.false_accepts else 0


if __name__ == "__main__":
    sys.exit(main())
