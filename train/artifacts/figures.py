"""What the run's pictures share: saving a figure, and the command line that draws one from a run directory
(``scripts/plot_run.py`` for ``curve.png``, ``scripts/plot_demo.py`` for the demo's ``comparison.png``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def save(fig, out: Path) -> Path:
    """Write ``fig`` to ``out`` and free it (pyplot keeps every open figure alive)."""
    import matplotlib.pyplot as plt

    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_command(description: str, plot: Callable[[Path, Path | None], Path], errors: tuple[type, ...]) -> int:
    """``RUN_DIR [--out FILE]``: draw, print the picture's path; a missing or malformed input is one line, exit 2."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    try:
        print(plot(args.run_dir, args.out))
    except errors as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
