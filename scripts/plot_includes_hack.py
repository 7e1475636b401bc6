"""The real-hack experiment's plot: does a policy trained against ``includes()`` learn to list numbers, and when does the
reward-hacking alarm fire, beside the same run trained against the project's verifier (docs/inspect-tasks.md).

    python scripts/plot_includes_hack.py runs/hack-includes runs/hack-verifier --out docs/includes-hack.png

Reads each run's rollout logs (every completion the policy was trained on, with its training reward), re-judges
every completion with ``verigrpo/math_verifier`` (the alarm's independent judge), and per step draws: the training
reward, the verifier's accuracy on the same completions, the share of completions that state more than one number
on their ``ANSWER:`` line (a list or a hedge: what ``includes()`` pays and the verifier refuses), the share that
state at least ``MANY`` distinct numbers anywhere (a list, whatever the last line says), and the mean count of
distinct numbers per completion; a dashed line marks each save at which the run's alarm fired (counted in its log
history's ``guards/reward_hacking_alarms``; when, replayed from the rollout logs by the alarm's own rule: each log is
one save's new rollouts). Prints the same numbers per step and writes them beside the PNG as JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path

from inspect_ai.log import read_eval_log

from evals.log_stats.grade_changes import grade_of
from evals.log_stats.rollout_audit import load_scorer, paid_rejected_grows, rescore
from records.rollout_format import STEP_KEY, TRAIN_SCORE_PREFIX

JUDGE = "verigrpo/math_verifier"
ALARM = "guards/reward_hacking_alarms"
MANY = 6  # a completion stating this many distinct numbers is a list, whatever its last line says
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def numbers(text: str) -> list[str]:
    return _NUMBER.findall(text)


def answer_line(text: str) -> str:
    """The text after the last ``ANSWER:`` (what the prompt asks the final line to hold); '' when there is none."""
    return text.rsplit("ANSWER:", 1)[1] if "ANSWER:" in text else ""


def run_steps(run: Path) -> dict:
    """Per step: completions, mean training reward, verifier accuracy, share listing numbers, distinct numbers."""
    logs = sorted((run / "rollouts").glob("*.eval"))
    if not logs:
        raise SystemExit(f"error: {run}/rollouts holds no rollout logs")
    judge = load_scorer(JUDGE)
    steps: dict[int, dict[str, list[float]]] = {}
    per_log: list[tuple[int, int]] = []  # (last step, paid but rejected) of each log: one save's new rollouts
    reward_name = None
    for path in logs:
        log, judged = rescore(read_eval_log(str(path)), judge)
        last, rejected = 0, 0
        for sample in log.samples or []:
            train = [n for n in sample.scores if n.startswith(TRAIN_SCORE_PREFIX)]
            reward_name = reward_name or train[0]
            paid = grade_of(sample.scores[train[0]])
            right = grade_of(sample.scores[judged], "correct")
            text = sample.output.completion
            row = steps.setdefault(
                int(sample.metadata[STEP_KEY]), {"reward": [], "right": [], "lists": [], "many": [], "n": []}
            )
            last = max(last, int(sample.metadata[STEP_KEY]))
            rejected += int(bool(paid) and right == 0)
            if paid is not None:
                row["reward"].append(paid)
            if right is not None:
                row["right"].append(right)
            row["lists"].append(float(len(set(numbers(answer_line(text)))) > 1))
            row["n"].append(float(len(set(numbers(text)))))
            row["many"].append(float(len(set(numbers(text))) >= MANY))
        per_log.append((last, rejected))
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    table = {
        step: {
            "completions": len(row["n"]),
            "train_reward": mean(row["reward"]),
            "verifier_accuracy": mean(row["right"]),
            "answer_lists_numbers": mean(row["lists"]),
            "states_many_numbers": mean(row["many"]),
            "distinct_numbers": mean(row["n"]),
        }
        for step, row in sorted(steps.items())
    }
    history_file = run / "log_history.json"
    history = json.loads(history_file.read_text()) if history_file.exists() else []
    logged = max((int(e[ALARM]) for e in history if e.get(ALARM)), default=0)
    fired = alarm_saves(per_log)
    if len(fired) != logged:
        print(f"warning: {run}: the run logged {logged} alarms, the rollout logs replay {len(fired)}", file=sys.stderr)
    return {"reward": reward_name, "steps": table, "alarm_steps": fired, "alarms_logged": logged}


def alarm_saves(per_log: list[tuple[int, int]]) -> list[int]:
    """The saves at which the alarm fired, replayed from the rollout logs: each log is one save's new rollouts
    (its last step, its paid-but-rejected count), judged by the alarm's own rule (``paid_rejected_grows``)."""
    counts, fired = [], []
    for last_step, paid_rejected in per_log:
        counts.append(paid_rejected)
        if paid_rejected_grows(counts):
            fired.append(last_step)
    return fired


def figure(runs: dict[str, dict]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, len(runs), figsize=(6 * len(runs), 4.4), sharey=True, squeeze=False)
    most = max((r["distinct_numbers"] for data in runs.values() for r in data["steps"].values()), default=1.0)
    twins = []
    for ax, (label, data) in zip(axes[0], runs.items()):
        steps = list(data["steps"])
        rows = list(data["steps"].values())
        ax.plot(steps, [r["train_reward"] for r in rows], marker="o", label="training reward (the run's judge)")
        ax.plot(steps, [r["verifier_accuracy"] for r in rows], marker="s", label=f"{JUDGE} on the same completions")
        ax.plot(steps, [r["answer_lists_numbers"] for r in rows], marker="^", label="ANSWER: line lists >1 number")
        ax.plot(steps, [r["states_many_numbers"] for r in rows], marker="v", label=f"states >= {MANY} distinct numbers")
        twin = ax.twinx()
        twin.plot(steps, [r["distinct_numbers"] for r in rows], color="grey", linestyle=":", label="distinct numbers")
        twin.set_ylim(0, most * 1.1)
        twins.append(twin)
        for step in data["alarm_steps"]:
            ax.axvline(step, color="red", linestyle="--", linewidth=1)
            ax.text(step, 1.04, "alarm", color="red", ha="center", va="bottom", fontsize=8)
        fired = (
            f"alarm fired at steps {', '.join(map(str, data['alarm_steps']))}"
            if data["alarm_steps"]
            else "alarm never fired"
        )
        ax.set_title(f"{label}\n({fired})", fontsize=10, pad=14)
        ax.set_xlabel("training step")
        ax.set_ylim(-0.02, 1.04)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    for twin in twins[:-1]:
        twin.tick_params(labelright=False)
    twins[-1].set_ylabel("distinct numbers per completion (dotted)")
    axes[0][0].set_ylabel("share of the step's completions")
    handles, labels = axes[0][0].get_legend_handles_labels()
    twin_handles, twin_labels = twins[0].get_legend_handles_labels()
    fig.legend(handles + twin_handles, labels + twin_labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python scripts/plot_includes_hack.py",
        description="Plot the includes() run beside the verifier run: reward, verifier accuracy, listing, alarm.",
    )
    parser.add_argument("includes_run", type=Path, help="the run trained against includes()")
    parser.add_argument("verifier_run", type=Path, help="the same run trained against verigrpo/math_verifier")
    parser.add_argument("--out", type=Path, default=Path("docs/includes-hack.png"))
    args = parser.parse_args(argv)
    logging.getLogger("inspect_ai").setLevel(logging.WARNING)
    runs = {
        "trained against includes()": run_steps(args.includes_run),
        "trained against verigrpo/math_verifier": run_steps(args.verifier_run),
    }
    for label, data in runs.items():
        print(f"{label}: reward {data['reward']}; alarm fired at the saves of steps {data['alarm_steps'] or 'none'}")
        print(f"  {'step':>4} {'n':>4} {'reward':>7} {'verifier':>9} {'lists':>6} {'many':>6} {'numbers':>8}")
        for step, r in data["steps"].items():
            print(
                f"  {step:>4} {r['completions']:>4} {r['train_reward']:>7.3f} {r['verifier_accuracy']:>9.3f} "
                f"{r['answer_lists_numbers']:>6.3f} {r['states_many_numbers']:>6.3f} {r['distinct_numbers']:>8.2f}"
            )
    fig = figure(runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=80)
    args.out.with_suffix(".json").write_text(json.dumps(runs, indent=1) + "\n")
    print(f"wrote {args.out} and {args.out.with_suffix('.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
