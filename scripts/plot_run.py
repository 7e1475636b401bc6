"""Plot a training run: reward and format rate per step, from the run's log history -> <run>/curve.png.

    python scripts/plot_run.py runs/cpu-smollm2 [--out curve.png]

The figure is drawn by ``train/artifacts/curve.py`` (tests import it from there).
"""

import sys

from train.artifacts.curve import plot
from train.artifacts.figures import plot_command


def main() -> int:
    return plot_command(__doc__, plot, (FileNotFoundError, ValueError))


if __name__ == "__main__":
    sys.exit(main())
