"""What watching a run cost: the on-policy guard's, the held-out evals' and the reward-hacking alarm's share of the
training steps' time, measured in one run (its log history).

    python scripts/guard_overheads.py runs/cpu-smollm2-vllm

The computation is ``train/guards/overheads.py``.
"""

import sys

from train.guards.overheads import main

if __name__ == "__main__":
    sys.exit(main())
