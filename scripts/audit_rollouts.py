"""Audit a training run: re-score every rollout the policy was paid for, count disagreements.

    python scripts/audit_rollouts.py runs/cpu-smollm2
    python scripts/audit_rollouts.py runs/x --scorer path/to/strict.py@my_scorer --window 5 --fail-above 0.02

Re-scores ``<run>/rollouts/*.eval`` with the current verifier (``verigrpo/math_verifier``) or the
named scorer, and prints per step window how many completions the training reward paid that the
re-scorer rejects (and the reverse), the first few of each with explanations, and writes
``<run>/rollouts-audit.png``. Exits 1 when the share of paid completions that the re-scorer
rejects is above ``--fail-above`` (default 0: any), so it can gate a run in CI or a cron job.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.rollout_audit import DEFAULT_SCORER, audit_logs, plot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a training output directory (holding rollouts/)")
    parser.add_argument(
        "--scorer",
        default=DEFAULT_SCORER,
        help="registered name or file.py@factory (default: verigrpo/math_verifier, or verigrpo/unit_test_scorer for code runs)",
    )
    parser.add_argument("--window", type=int, default=10, help="steps per reporting window")
    parser.add_argument("--fail-above", type=float, default=0.0, help="max tolerated paid-but-rejected share")
    parser.add_argument("--show", type=int, default=3, help="examples to print of each kind")
    args = parser.parse_args(argv)

    logs = sorted((args.run_dir / "rollouts").glob("*.eval"))
    if not logs:
        print(f"error: no rollout logs in {args.run_dir / 'rollouts'} (was log_rollouts off?)", file=sys.stderr)
        return 2
    audit = audit_logs(logs, args.scorer, args.window)
    print(
        f"re-scored {len(logs)} rollout logs with {args.scorer or 'the run verifier'} (recorded as {audit.scorer_name})"
    )
    print(f"{'steps':>13s} {'compared':>9s} {'paid':>6s} {'paid but rejected':>18s} {'unpaid but accepted':>20s}")
    total = audit.total
    for w in audit.windows + [total]:
        label = "all" if w is total else f"{w.first_step}-{w.last_step}"
        print(
            f"{label:>13s} {w.compared:9d} {w.paid:6d} {w.paid_rejected:9d} ({w.paid_rejected_rate:5.1%})"
            f" {w.unpaid_accepted:12d}"
        )
    for title, examples in (("paid but rejected", audit.paid_rejected), ("unpaid but accepted", audit.unpaid_accepted)):
        for ex in examples[: args.show]:
            tail = ex.completion.strip().replace("\n", " ")[-100:]
            print(
                f"  [{title}] step {ex.step} {ex.sample_id} #{ex.epoch}: answer={ex.answer!r} {ex.explanation} | ...{tail}"
            )
    png = plot(audit, args.run_dir / "rollouts-audit.png")
    print(f"plot: {png}")
    rate = total.paid_rejected_rate
    if rate > args.fail_above:
        print(
            f"FAIL: {rate:.2%} of paid completions are rejected by {args.scorer or audit.scorer_name} (--fail-above {args.fail_above:g})"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
