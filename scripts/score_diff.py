"""How many items changed grade between two scorers in one Inspect log, and which.

    python scripts/score_diff.py LOG.eval                     # first vs last scorer in the log
    python scripts/score_diff.py LOG.eval --before match --after math_verifier [--show 20]

Typical use: re-score an old log with the project's verifier, then report the difference:

    inspect score OLD.eval --scorer verigrpo/math_verifier --action append --output-file NEW.eval --model none/none
    python scripts/score_diff.py NEW.eval
"""

from __future__ import annotations

import argparse
import sys

from inspect_ai.log import read_eval_log

from evals.log_stats.grade_changes import grade_changes, scorer_names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", help="an .eval or .json Inspect log holding two scorers' results")
    parser.add_argument("--before", help="scorer name to compare from (default: the first in the log)")
    parser.add_argument("--after", help="scorer name to compare to (default: the last in the log)")
    parser.add_argument("--key", default="correct", help="which entry of a dict score to compare (default: correct)")
    parser.add_argument("--show", type=int, default=10, help="how many changed items to list")
    args = parser.parse_args(argv)

    log = read_eval_log(args.log)
    names = scorer_names(log)
    if len(names) < 2 and not (args.before and args.after):
        print(f"{args.log}: needs two scorers' results, found {names or 'none'}", file=sys.stderr)
        return 2
    before, after = args.before or names[0], args.after or names[-1]
    compared, changes = grade_changes(log, before, after, args.key)
    up = sum(c.after > c.before for c in changes)
    print(f"{before} -> {after}: {len(changes)} of {compared} items changed grade ({up} up, {len(changes) - up} down)")
    for change in changes[: args.show]:
        print(
            f"  {change.sample_id} (epoch {change.epoch}): {change.before:g} -> {change.after:g}"
            f"  answer={change.answer!r}  {change.explanation or ''}"
        )
    if len(changes) > args.show:
        print(f"  ... and {len(changes) - args.show} more (--show N)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
