"""Audit a training run: re-score every rollout the policy was paid for, count disagreements.

    python scripts/audit_rollouts.py runs/cpu-smollm2
    python scripts/audit_rollouts.py runs/x --scorer path/to/strict.py@my_scorer --window 5 --fail-above 0.02

Re-scores ``<run>/rollouts/*.eval`` with the current verifier (``verigrpo/math_verifier``; a code run's
``verigrpo/unit_test_scorer``; a domain of your own's ``grade``, which must be registered as for training) or the
named scorer, and prints per step window how many completions the training reward paid that the
re-scorer rejects (and the reverse), the first few of each with explanations, and writes
``<run>/rollouts-audit.png``.

Exit codes: 0 every log audited, no gate failure; 1 the gate alone: the share of paid completions
the re-scorer rejects is above ``--fail-above`` (default 0: any), so it can gate a run in CI or a
cron job; 2 unusable input: no logs, bad options, or a log that cannot be read (torn by a crash
during a write; it is named, skipped and counted, the rest are audited, but the audit is
incomplete until it is removed or restored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evals.log_stats.rollout_audit import DEFAULT_SCORER, AuditInputError, audit_logs, plot


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a training output directory (holding rollouts/)")
    parser.add_argument(
        "--scorer",
        default=DEFAULT_SCORER,
        help="registered name or file.py@factory (default: verigrpo/math_verifier; verigrpo/unit_test_scorer for code runs; a "
        "registered domain's own grade for its runs)",
    )
    parser.add_argument(
        "--train-score",
        default=None,
        help="the training score to audit where no domain names it: an Inspect task's reward (train_includes), judged "
        "by --scorer (as the alarm's inspect_audit_scorer judged it)",
    )
    parser.add_argument("--window", type=positive_int, default=10, help="steps per reporting window (>= 1)")
    parser.add_argument("--fail-above", type=float, default=0.0, help="max tolerated paid-but-rejected share")
    parser.add_argument("--show", type=int, default=3, help="examples to print of each kind")
    args = parser.parse_args(argv)

    logs = sorted((args.run_dir / "rollouts").glob("*.eval"))
    if not logs:
        print(f"error: no rollout logs in {args.run_dir / 'rollouts'} (was log_rollouts off?)", file=sys.stderr)
        return 2
    try:
        audit = audit_logs(logs, args.scorer, args.window, train_score=args.train_score)
    except AuditInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for skipped in audit.skipped:
        print(f"warning: skipped unreadable rollout log {skipped.path} ({skipped.reason})", file=sys.stderr)
    print(
        f"re-scored {len(audit.audited)} of {len(logs)} rollout logs with {args.scorer or 'the run verifier'} "
        f"(recorded as {audit.scorer_name}); {len(audit.skipped)} skipped as unreadable"
    )
    for domain in sorted(audit.self_judged):
        print(
            f"note: domain {domain!r} is re-judged by its own grade, the function that paid the reward: this finds "
            "what changed in it since training, not its leniencies; --scorer FILE.py@factory gives an independent judge"
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
    if audit.skipped:
        print(
            f"error: the audit is incomplete: {len(audit.skipped)} of {len(logs)} rollout logs could not be read "
            "(listed above); remove or restore them and re-run",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
