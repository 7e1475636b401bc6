"""Measure ``rewards.is_correct`` on your own labeled pairs: precision, recall, false accepts, latency.

    python scripts/verifier_scorecard.py LABELED.jsonl [--compare math-verify] [--completions] [--json OUT]

One ``{"candidate", "reference", "expected", "tags"?}`` object per line; the logic lives in
``rewards.scorecard`` (importable, tested). Example: evals/data/verifier_scorecard_example.jsonl.
"""

import sys

from rewards.scorecard import main

if __name__ == "__main__":
    sys.exit(main())
