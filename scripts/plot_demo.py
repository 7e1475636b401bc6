"""Draw the demo's evals: accuracy before and after GRPO per base precision, and the paired differences.

    python scripts/plot_demo.py runs/demo-<time> [--out comparison.png]

Reads ``<run>/summary.json`` (written by scripts/demo.py) and writes ``<run>/comparison.png``: on the left each
eval's accuracy with its 95% Wilson interval, base and GRPO side by side for the 4-bit base training uses
and for the full-precision base; on the right each paired difference (the same problems before and
after) with its 95% Newcombe interval, against a line at zero.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evals.log_stats.paired import wilson_interval
from train.artifacts.figures import plot_command, save

# (summary key of the base eval, of the trained eval, the group's name)
GROUPS = (("base_4bit", "grpo_4bit", "4-bit base\n(as trained)"), ("base_full", "grpo_full", "full-precision base"))
BASE_COLOUR, GRPO_COLOUR = "#8c8c8c", "#1f77b4"


def load_summary(run_dir: Path) -> dict:
    path = run_dir / "summary.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: run scripts/demo.py first (it writes summary.json)")
    return json.loads(path.read_text())


def _interval(row: dict) -> tuple[float, float, float]:
    """(accuracy, distance down, distance up) for an error bar: the Wilson interval of the eval's accuracy."""
    hits = round(row["accuracy"] * row["n"])
    low, high = wilson_interval(hits, row["n"])
    return row["accuracy"], row["accuracy"] - low, high - row["accuracy"]


def figure(summary: dict):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evals, comparisons = summary["evals"], summary["comparisons"]
    n = summary["eval"]["problems"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained", width_ratios=(1, 1.25))

    for i, (base_key, grpo_key, _) in enumerate(GROUPS):
        for offset, key, colour, label in (
            (-0.15, base_key, BASE_COLOUR, "base"),
            (0.15, grpo_key, GRPO_COLOUR, "GRPO"),
        ):
            value, down, up = _interval(evals[key])
            left.errorbar(
                i + offset,
                value,
                yerr=[[down], [up]],
                fmt="o",
                color=colour,
                capsize=5,
                markersize=8,
                label=label if i == 0 else None,
            )
            left.annotate(f"{value:.2f}", (i + offset, value), textcoords="offset points", xytext=(9, -4), fontsize=9)
        left.annotate(
            "",
            xy=(i + 0.15, evals[grpo_key]["accuracy"]),
            xytext=(i - 0.15, evals[base_key]["accuracy"]),
            arrowprops={"arrowstyle": "->", "color": GRPO_COLOUR, "alpha": 0.5},
        )
    left.set_xticks(range(len(GROUPS)), [name for _, _, name in GROUPS])
    left.set_xlim(-0.6, len(GROUPS) - 0.4)
    left.set_ylim(0, 1)
    left.set_ylabel(f"accuracy on {n} held-out problems (greedy)")
    left.set_title("before and after GRPO (95% Wilson intervals)")
    left.grid(axis="y", alpha=0.3)
    left.legend(loc="upper left", frameon=False)

    keys = list(comparisons)
    for row, key in enumerate(keys):
        c = comparisons[key]
        colour = GRPO_COLOUR if c["low"] > 0 else ("#d62728" if c["high"] < 0 else BASE_COLOUR)
        right.errorbar(
            c["difference"],
            row,
            xerr=[[c["difference"] - c["low"]], [c["high"] - c["difference"]]],
            fmt="o",
            color=colour,
            capsize=5,
            markersize=8,
        )
        right.annotate(
            f"{c['difference']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]  (+{c['only_after']}/-{c['only_before']})",
            (c["difference"], row),
            textcoords="offset points",
            xytext=(0, 11),
            ha="center",
            fontsize=9,
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.8},
        )
    right.axvline(0, color="black", linewidth=1)
    right.set_yticks(range(len(keys)), [comparisons[k]["label"] for k in keys])
    right.set_ylim(-0.6, len(keys) - 0.3)
    right.invert_yaxis()
    span = max(0.1, *(abs(comparisons[k][end]) for k in keys for end in ("low", "high")))
    right.set_xlim(-1.15 * span, 1.15 * span)
    right.set_xlabel("accuracy difference, same problems (after - before)")
    right.set_title("paired differences (95% Newcombe intervals)")
    right.grid(axis="x", alpha=0.3)
    created = summary.get("created", "")[:10]
    fig.suptitle(
        f"verigrpo CPU demo {created}: {summary['training']['steps']} GRPO steps, commit {(summary.get('commit') or '?')[:12]}",
        fontsize=10,
    )
    return fig


def plot(run_dir: Path, out: Path | None = None) -> Path:
    return save(figure(load_summary(run_dir)), out or run_dir / "comparison.png")


def main() -> int:
    return plot_command(__doc__, plot, (FileNotFoundError, KeyError))


if __name__ == "__main__":
    sys.exit(main())
