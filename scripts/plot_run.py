"""Plot a training run: reward and format rate per step, from the run's log history -> <run>/curve.png.

    python scripts/plot_run.py runs/cpu-smollm2 [--out curve.png]

The figure is drawn by ``train/artifacts/curve.py`` (tests import it from there).
"""

import sys

from train.artifacts.curve import main

if __name__ == "__main__":
    sys.exit(main())
