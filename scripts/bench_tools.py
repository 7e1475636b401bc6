"""Seconds per CPU GRPO step with the python tool and without, measured in one run (docs/tool-use.md).

    python scripts/bench_tools.py [--steps 3] [--rounds 1] [-- --use_vllm true ...]

Trains configs/cpu-smollm2.yaml (no tool) and configs/cpu-smollm2-tools.yaml (the python tool, its
ChatML template and the worked example that calls it) with the same batch, group size and completion
budget, alternating within each round so machine noise hits both, each in a fresh train/grpo.py process.
Prints TRL's step_time per step (the first step of each run excluded as warm-up), the ratio
tools/plain, the prompt length of each and the tool calls per rollout the tool run made. The tool run's
extra cost is its longer prompt (the tool schema and the worked example's call) and, when the policy
calls the tool, the extra generation rounds and sandbox runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CONFIGS = {"plain": REPO / "configs" / "cpu-smollm2.yaml", "tools": REPO / "configs" / "cpu-smollm2-tools.yaml"}
SHARED = [
    "--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "96",
    "--save_steps", "1000", "--log_rollouts", "false", "--report_to", "none",
]  # fmt: skip


def train(config: Path, steps: int, extra: list[str]) -> list[dict]:
    """One fresh training process; its log history's step entries."""
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as out:
        cmd = [sys.executable, str(REPO / "train" / "grpo.py"), "--config", str(config), "--max_steps", str(steps)]
        subprocess.run([*cmd, "--output_dir", out, *SHARED, *extra], cwd=REPO, check=True)
        history = json.loads(Path(out, "log_history.json").read_text())
    return [entry for entry in history if "step_time" in entry]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3, help="steps per run (the first is warm-up)")
    parser.add_argument("--rounds", type=int, default=1, help="plain/tools pairs, alternating")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    if args.steps < 2:
        parser.error("--steps must be >= 2: the first step is warm-up")
    times: dict[str, list[float]] = {name: [] for name in CONFIGS}
    calls: list[float] = []
    for _ in range(args.rounds):
        for name, config in CONFIGS.items():
            steps = train(config, args.steps, extra)
            times[name] += [float(entry["step_time"]) for entry in steps[1:]]
            if name == "tools":
                calls += [float(entry.get("tools/calls_per_rollout", 0.0)) for entry in steps]
    plain, tools = statistics.median(times["plain"]), statistics.median(times["tools"])
    print(f"plain: {plain:.1f} s/step (median of {len(times['plain'])}: {times['plain']})")
    print(f"tools: {tools:.1f} s/step (median of {len(times['tools'])}: {times['tools']})")
    print(
        f"ratio tools/plain: {tools / plain:.2f}; tool calls per rollout (mean over steps): {statistics.mean(calls):.2f}"
    )


if __name__ == "__main__":
    main()
