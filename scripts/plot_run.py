"""Plot a training run: reward and format rate per step, from the run's log history.

    python scripts/plot_run.py runs/cpu-smollm2 [--out curve.png]

Reads ``log_history.json`` (written at the end of training) or, for a run still in progress or
interrupted, the newest ``checkpoint-*/trainer_state.json``. Writes ``<run>/curve.png``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SERIES = (
    ("reward", "reward (weighted sum)"),
    ("rewards/correctness/mean", "correctness (verifier)"),
    ("rewards/format_reward/mean", "format rate"),
)


def load_history(run_dir: Path) -> list[dict]:
    final = run_dir / "log_history.json"
    if final.is_file():
        return json.loads(final.read_text())
    states = sorted(run_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))
    if not states:
        raise FileNotFoundError(f"{run_dir}: no log_history.json and no checkpoint-*/trainer_state.json")
    return json.loads(states[-1].read_text())["log_history"]


def smooth(values: list[float], window: int) -> list[float]:
    out = []
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        out.append(sum(chunk) / len(chunk))
    return out


def plot(run_dir: Path, out: Path | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = [entry for entry in load_history(run_dir) if "reward" in entry]
    if not history:
        raise ValueError(f"{run_dir}: the log history has no reward entries (was logging_steps set?)")
    steps = [entry["step"] for entry in history]
    window = max(1, len(history) // 10)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for key, label in SERIES:
        values = [entry.get(key) for entry in history]
        if any(v is None for v in values):
            continue
        ax.plot(steps, values, alpha=0.25)
        ax.plot(steps, smooth(values, window), label=f"{label} (mean of {window})", color=ax.lines[-1].get_color())
    ax.set_xlabel("step")
    ax.set_ylabel("per-step mean")
    ax.set_ylim(-0.05, max(1.05, max(entry["reward"] for entry in history) + 0.05))
    ax.set_title(f"GRPO run {run_dir.name}")
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    out = out or run_dir / "curve.png"
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    try:
        print(plot(args.run_dir, args.out))
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
