"""What watching a run cost: the on-policy guard's, the held-out evals' and the reward-hacking alarm's share of the
training steps' time, measured in one run (its log history).

    python scripts/guard_overheads.py runs/cpu-smollm2-vllm

The computation is ``train/guards/overheads.py``.
"""

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a train/grpo.py output directory (finished or in progress)")
    args = parser.parse_args(argv)
    # lazy: its guards import torch and transformers (--help in 0.1 s, not 5 s)
    from train.guards.overheads import report

    try:
        print(report(args.run_dir))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
