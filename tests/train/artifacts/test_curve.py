"""train/artifacts/curve.py (scripts/plot_run.py's curve.png): the legend hides no curve and says what the faint
and bold lines are."""

import json
import random
import subprocess
import sys

import pytest

from tests.helpers import REPO
from train.artifacts import curve


def write_history(run, steps):
    """A log_history.json as training writes it: reward entries per step, plus the final summary entry."""
    rng = random.Random(0)
    history = []
    for step in range(1, steps + 1):
        correct, form = rng.random(), rng.random()
        history.append(
            {
                "step": step,
                "loss": 0.01,
                "reward": correct + 0.25 * form,
                "rewards/correctness/mean": correct,
                "rewards/format_reward/mean": form,
            }
        )
    history.append({"step": steps, "train_runtime": 100.0})
    run.mkdir()
    (run / "log_history.json").write_text(json.dumps(history))
    return run


def legend_and_axes(fig):
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    (legend,) = fig.legends
    return legend, ax, legend.get_window_extent(renderer), ax.get_tightbbox(renderer)


@pytest.mark.parametrize("steps", [30, 40])  # the demo's 30 steps: the legend used to cover steps 1-13
def test_legend_sits_below_the_axes_and_explains_the_lines(tmp_path, steps):
    fig = curve.figure(write_history(tmp_path / "run", steps))
    legend, ax, legend_box, axes_box = legend_and_axes(fig)
    assert legend_box.y1 <= axes_box.y0  # below everything the axes draw, tick labels included: it covers no curve
    labels = [text.get_text() for text in legend.get_texts()]
    assert labels[:3] == ["reward (weighted sum)", "correctness (verifier)", "format rate"]
    window = steps // 10
    assert labels[3:] == ["faint: the value at each step", f"bold: mean of the last {window} steps (trailing)"]
    assert all(float(tick).is_integer() for tick in ax.get_xticks())


def test_a_short_run_plots_the_steps_themselves(tmp_path):
    fig = curve.figure(write_history(tmp_path / "run", 2))
    legend, ax, _, _ = legend_and_axes(fig)
    assert [text.get_text() for text in legend.get_texts()] == [
        "reward (weighted sum)",
        "correctness (verifier)",
        "format rate",
    ]
    assert all(line.get_alpha() is None and line.get_marker() == "o" for line in ax.get_lines())
    assert [tick for tick in ax.get_xticks() if 1 <= tick <= 2] == [1, 2]


def test_the_script_writes_curve_png(tmp_path):
    run = write_history(tmp_path / "run", 30)
    out = subprocess.run([sys.executable, REPO / "scripts" / "plot_run.py", run], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(run / "curve.png")
    assert (run / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = subprocess.run(
        [sys.executable, REPO / "scripts" / "plot_run.py", tmp_path / "nope"], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "no log_history.json" in missing.stderr


def add_held_out_evals(run, every, problems=200):
    """The entries a run with held-out evals adds (train/artifacts/held_out.py): one per eval, step 0 included."""
    history = json.loads((run / "log_history.json").read_text())
    last = max(entry["step"] for entry in history)
    evals = [
        {"step": step, "eval_correct/accuracy": 0.2 + step / 100, "eval_format/mean": 0.9, "eval_samples": problems}
        for step in range(0, last + 1, every)
    ]
    (run / "log_history.json").write_text(json.dumps(sorted(history + evals, key=lambda e: e["step"])))
    return evals


def test_held_out_evals_are_drawn_at_their_steps_beside_the_reward(tmp_path):
    run = write_history(tmp_path / "run", 30)
    evals = add_held_out_evals(run, every=10)
    fig = curve.figure(run)
    legend, ax, legend_box, axes_box = legend_and_axes(fig)
    labels = [text.get_text() for text in legend.get_texts()]
    assert labels[:4] == [
        "reward (weighted sum)",
        "correctness (verifier)",
        "format rate",
        "held-out accuracy (greedy, 200 problems)",
    ]
    (held_out,) = [line for line in ax.get_lines() if line.get_marker() == "D"]
    assert list(held_out.get_xdata()) == [0, 10, 20, 30]  # one point per eval, at its step, unsmoothed
    assert list(held_out.get_ydata()) == [e["eval_correct/accuracy"] for e in evals]
    assert [t.get_text() for t in ax.texts] == ["0.20", "0.50"]  # the first and the last eval, written out
    assert legend_box.y1 <= axes_box.y0
    # a history without evals draws no such line (and the reward curves are unchanged)
    plain = curve.figure(write_history(tmp_path / "plain", 30))
    assert not [line for line in plain.axes[0].get_lines() if line.get_marker() == "D"]


def test_held_out_points_reads_each_domains_headline():
    history = [
        {"step": 1, "reward": 0.5},
        {"step": 2, "eval_fraction/mean": 0.25, "eval_samples": 7},
        {"step": 4, "eval_fraction/mean": 0.5, "eval_samples": 7},
    ]
    assert curve.held_out_points(history) == [("held-out unit tests passed (fraction)", [2, 4], [0.25, 0.5], 7)]
    assert curve.held_out_points(history[:1]) == []
