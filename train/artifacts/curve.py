"""A training run's curve: reward and each domain's metrics per step, and the held-out evals, from the run's
log history.

    python scripts/plot_run.py runs/cpu-smollm2 [--out curve.png]

Reads ``log_history.json`` (written at the end of training) or, for a run still in progress or
interrupted, the newest ``checkpoint-*/trainer_state.json``. Writes ``<run>/curve.png``.
``scripts/plot_run.py`` is its command line (commands live in scripts/).
"""

from __future__ import annotations

import json
from pathlib import Path

from problems.domains import held_out_metrics, plot_metrics
from records.run_manifest import read_run_manifest
from train.artifacts.figures import save
from train.guards.on_policy import BAND_METRIC, GAP_METRIC

REWARD_SERIES = ("reward", "reward (weighted sum)", "-")


def series(run_rows: tuple = ()) -> tuple[tuple[str, str, str], ...]:
    """(key in the log history, label, line style): the weighted reward, then each domain's metrics
    (problems/domains.py) and ``run_rows``' (``recorded_row``); styles are distinct, so equal curves do not hide
    one another."""
    return tuple(dict.fromkeys((REWARD_SERIES, *plot_metrics(), *run_rows)))  # a row may be in both: once


def recorded_row(run_dir: Path) -> tuple[tuple, tuple]:
    """(plot lines, held-out headlines) of a row made at run time, which this process's domain table does not hold:
    an Inspect task's, as run.json records it (``inspect_task.plot``: inspect_tasks/domain.py); empty otherwise."""
    manifest = next((m for d in (run_dir, *checkpoints(run_dir)[::-1]) if (m := read_run_manifest(d))), None) or {}
    plot = (manifest.get("inspect_task") or {}).get("plot") or {}
    eval_metric = plot.get("eval_metric")
    return tuple(tuple(m) for m in plot.get("metrics", [])), ((tuple(eval_metric),) if eval_metric else ())


def checkpoints(run_dir: Path) -> list[Path]:
    return sorted(run_dir.glob("checkpoint-*/"), key=lambda p: int(p.name.split("-")[1]))


HELD_OUT_STYLE = {"color": "black", "marker": "D", "markersize": 5, "linewidth": 2}


def held_out_points(history: list[dict], run_rows: tuple = ()) -> list[tuple[str, list[int], list[float], int | None]]:
    """(label, steps, values, problems) of each held-out eval headline the history holds
    (train/artifacts/held_out.py logs them as separate entries, e.g. ``eval_correct/accuracy``); ``run_rows``: the
    headlines of a row made at run time (``recorded_row``)."""
    points = []
    for key, label in dict.fromkeys((*held_out_metrics(), *run_rows)):
        entries = [entry for entry in history if entry.get(key) is not None]
        if entries:
            problems = entries[-1].get("eval_samples")
            points.append((label, [e["step"] for e in entries], [e[key] for e in entries], problems))
    return points


def on_policy_axis(ax, history: list[dict]) -> list:
    """The on-policy guard's probe gap and band (train/guards/on_policy.py) on a right-hand axis: legend handles
    (none when the run logged no check)."""
    from matplotlib.lines import Line2D

    checks = [entry for entry in history if entry.get(GAP_METRIC) is not None]
    if not checks:
        return []
    right = ax.twinx()
    style = {"color": "tab:red", "marker": "x", "linestyle": ":", "linewidth": 1.5}
    right.plot([e["step"] for e in checks], [e[GAP_METRIC] for e in checks], **style)
    right.axhline(checks[-1][BAND_METRIC], color="tab:red", alpha=0.4, linewidth=1)
    right.set_ylim(0, 1.5 * max(max(e[GAP_METRIC] for e in checks), checks[-1][BAND_METRIC]))
    right.set_ylabel("on-policy probe gap (mean |Δ logprob|)", color="tab:red")
    return [Line2D([], [], label="on-policy probe gap (right axis; thin line: its band)", **style)]


def load_history(run_dir: Path) -> list[dict]:
    final = run_dir / "log_history.json"
    if final.is_file():
        return json.loads(final.read_text())
    states = sorted(run_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))
    if not states:
        raise FileNotFoundError(f"{run_dir}: no log_history.json and no checkpoint-*/trainer_state.json")
    return json.loads(states[-1].read_text())["log_history"]


def smooth(values: list[float], window: int) -> list[float]:
    """Trailing running mean: point i is the mean of steps i-window+1 .. i (fewer at the start)."""
    out = []
    for i in range(len(values)):
        chunk = values[max(0, i - window + 1) : i + 1]
        out.append(sum(chunk) / len(chunk))
    return out


def figure(run_dir: Path):
    """Each series twice: faint, its per-step value (noisy: a step sees a few prompts); bold, the trailing mean
    of the last ``window`` steps (a tenth of the run; under 20 steps, only the per-step values). The legend
    sits below the axes, where it hides nothing, and says which line is which."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    everything = load_history(run_dir)
    history = [entry for entry in everything if "reward" in entry]
    if not history:
        raise ValueError(f"{run_dir}: the log history has no reward entries (was logging_steps set?)")
    steps = [entry["step"] for entry in history]
    window = max(1, len(history) // 10)
    fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
    handles = []
    row_lines, row_headlines = recorded_row(run_dir)
    for key, label, style in series(row_lines):
        values = [entry.get(key) for entry in history]
        if any(v is None for v in values):
            continue
        if window == 1:  # too few steps to smooth: the per-step values, bold, with a marker per step
            (line,) = ax.plot(steps, values, linestyle=style, linewidth=2, marker="o", markersize=4)
        else:
            (line,) = ax.plot(steps, values, alpha=0.25, linewidth=1)
            ax.plot(steps, smooth(values, window), color=line.get_color(), linestyle=style, linewidth=2)
        handles.append(Line2D([], [], color=line.get_color(), linestyle=style, linewidth=2, label=label))
    held_out = held_out_points(everything, row_headlines)
    for label, eval_steps, values, problems in held_out:  # every eval, unsmoothed: each is already a mean
        ax.plot(eval_steps, values, **HELD_OUT_STYLE)
        for step, value in ((eval_steps[0], values[0]), (eval_steps[-1], values[-1]))[: len(values)]:
            ax.annotate(f"{value:.2f}", (step, value), textcoords="offset points", xytext=(0, 7), ha="center")
        described = f"{label} (greedy, {problems} problems)" if problems else f"{label} (greedy)"
        handles.append(Line2D([], [], label=described, **HELD_OUT_STYLE))
    handles += on_policy_axis(ax, everything)
    if window > 1:  # how to read the two lines of each series, in neutral grey
        handles.append(Line2D([], [], color="grey", alpha=0.35, linewidth=1, label="faint: the value at each step"))
        handles.append(
            Line2D([], [], color="grey", linewidth=2, label=f"bold: mean of the last {window} steps (trailing)")
        )
    ax.set_xlabel("step")
    ax.set_ylabel("mean over the step's completions" + ("\n(held-out: over its problems)" if held_out else ""))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(-0.05, max(1.05, max(entry["reward"] for entry in history) + 0.05))
    ax.set_title(f"GRPO run {run_dir.resolve().name}")
    ax.grid(alpha=0.3)
    fig.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False)
    return fig


def plot(run_dir: Path, out: Path | None = None) -> Path:
    """Write the figure to ``out`` (default ``<run>/curve.png``)."""
    return save(figure(run_dir), out or run_dir / "curve.png")
