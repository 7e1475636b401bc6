"""CPU seconds per call of the symbolic comparison on the inputs that once cost seconds, and their neighbours.

    python scripts/measure_verifier_costs.py [--repeat 3] [--budget 5]

Issue #39: within the structural limits (``rewards.math.complexity``) no call should cost more than ~0.2 CPU-s,
and beyond them the refusal is structural (``cand_too_complex`` from the tree, the same on every machine), so
the CPU guard of ``rewards.math.worker_pool`` never fires. This runs each pair of
``tests/rewards/math/test_cost_bounds.py`` (and the pairs the exact methods decide,
``test_verifier_limits.DECIDED_WITHOUT_A_CLOCK``) in this process, as a worker does (``symbolic._compare_within``,
with the CPU net at ``--budget`` seconds), and prints the status and the CPU seconds of the slowest repeat. The
table test asserts the verdicts; the times are only printed here (they depend on the machine and its load).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from rewards.math import symbolic  # noqa: E402
from tests.rewards.math import test_cost_bounds as bounds  # noqa: E402
from tests.rewards.math import test_verifier_limits as limits  # noqa: E402


def rows() -> list[tuple[str, str]]:
    pairs = [tuple(row.values[:2]) for row in bounds.COSTLY + bounds.IDENTITIES]
    pairs += [(row.values[0], "5") for row in bounds.REFUSED_FROM_THE_TREE]
    pairs += [tuple(row.values[:2]) for row in limits.DECIDED_WITHOUT_A_CLOCK]
    return list(dict.fromkeys(pairs))


def cost(candidate: str, reference: str, budget: float) -> tuple[str, float]:
    symbolic.parse_leaf.cache_clear()  # each repeat parses again, as a first sighting does
    start = time.process_time()
    status, _ = symbolic._compare_within({"candidate": candidate, "reference": reference, "cpu": budget})
    return status, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3, help="runs per pair; the slowest is printed")
    parser.add_argument("--budget", type=float, default=5.0, help="the CPU net per call, seconds")
    parser.add_argument("--over", type=float, default=0.2, help="flag calls above this many CPU seconds")
    args = parser.parse_args()
    signal.signal(signal.SIGPROF, symbolic._on_cpu_timer)
    symbolic._warm_up()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; CPU seconds, slowest of {args.repeat}")
    slowest = []
    for candidate, reference in rows():
        runs = [cost(candidate, reference, args.budget) for _ in range(args.repeat)]
        statuses = {status for status, _ in runs}
        worst = max(seconds for _, seconds in runs)
        slowest.append(worst)
        flag = "  <-- over" if worst > args.over else ""
        print(f"{worst:7.3f}  {'/'.join(sorted(statuses)):17s} {candidate[:60]!s:60s} vs {reference[:30]}{flag}")
    over = sum(seconds > args.over for seconds in slowest)
    print(f"\n{len(slowest)} pairs; max {max(slowest):.3f} CPU-s; {over} over {args.over} CPU-s; net fired: see 'net'")


if __name__ == "__main__":
    main()
