"""Harness overhead and reward cost: train/grpo.py vs a minimal direct GRPOTrainer script, one run.

    python scripts/bench_train.py [--steps 4] [--rounds 2]

Both train the CPU default (SmolLM2-135M, 4-bit + LoRA) on the same problems with the same
GRPOConfig; rounds alternate harness/direct so machine noise hits both. Prints seconds per step
(TRL's own step_time, first step excluded as warm-up), the ratio direct/harness (target >= 0.95),
and the share of step time spent inside the reward functions (target <= 1 %).
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from pathlib import Path
from tempfile import TemporaryDirectory

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "configs" / "cpu-smollm2.yaml"

REWARD_SECONDS = {"total": 0.0}


def timed(func):
    @functools.wraps(func)  # keeps __name__, so TRL logs the same keys
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            REWARD_SECONDS["total"] += time.perf_counter() - start

    return wrapper


def config(output_dir: str, steps: int):
    from train.config import parse_config

    return parse_config(
        ["--config", str(CONFIG), "--output_dir", output_dir, "--max_steps", str(steps)]
        + ["--save_strategy", "no", "--logging_steps", "1"]
    )


def step_times(log_history: list[dict]) -> list[float]:
    return [float(e["step_time"]) for e in log_history if "step_time" in e][1:]


def run_harness(steps: int) -> tuple[list[float], float]:
    import rewards
    from train.grpo import main

    originals = dict(rewards.REWARD_FUNCS)
    for name, func in originals.items():
        rewards.REWARD_FUNCS[name] = timed(func)
    REWARD_SECONDS["total"] = 0.0
    try:
        with TemporaryDirectory() as out:
            result = main(*config(out, steps))
    finally:
        rewards.REWARD_FUNCS.update(originals)
    return step_times(result["log_history"]), REWARD_SECONDS["total"]


def run_direct(steps: int) -> list[float]:
    """What a user would write with TRL alone: same model, data, prompt, rewards and settings."""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import BitsAndBytesConfig
    from trl import GRPOTrainer

    from evals.math_data import procedural_arithmetic
    from rewards import build_messages, correctness, format_reward

    with TemporaryDirectory() as out:
        script_args, training_args, model_args = config(out, steps)
        problems = procedural_arithmetic(
            script_args.dataset_size,
            seed=script_args.dataset_seed,
            split="train",
            operations=script_args.arithmetic_operations,
            max_value=script_args.arithmetic_max_value,
        )
        dataset = Dataset.from_list([{"prompt": build_messages(p.question, 1), "answer": p.answer} for p in problems])
        training_args.model_init_kwargs = {"dtype": "float32"}
        trainer = GRPOTrainer(
            model=str((REPO / model_args.model_name_or_path).resolve()),
            reward_funcs=[correctness, format_reward],
            args=training_args,
            train_dataset=dataset,
            peft_config=LoraConfig(
                r=model_args.lora_r,
                lora_alpha=model_args.lora_alpha,
                lora_dropout=0.0,
                target_modules=model_args.lora_target_modules,
                task_type="CAUSAL_LM",
            ),
            quantization_config=BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype="float32"
            ),
        )
        trainer.train()
        return step_times(trainer.state.log_history)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    harness, direct, reward_seconds = [], [], 0.0
    for round_index in range(args.rounds):
        times, seconds = run_harness(args.steps)
        harness += times
        reward_seconds += seconds
        direct += run_direct(args.steps)
        print(
            f"round {round_index + 1}: harness {statistics.mean(harness):.2f} s/step, direct {statistics.mean(direct):.2f} s/step"
        )
    h, d = statistics.mean(harness), statistics.mean(direct)
    total_harness_time = sum(harness) * (args.steps / max(1, args.steps - 1))  # add back the warm-up steps' share
    print(f"\ntrain/grpo.py : {h:.2f} s/step (n={len(harness)}, median {statistics.median(harness):.2f})")
    print(f"direct TRL    : {d:.2f} s/step (n={len(direct)}, median {statistics.median(direct):.2f})")
    print(f"ratio direct/harness: {d / h:.3f}  (target >= 0.95)")
    print(
        f"reward functions: {reward_seconds:.2f} s of ~{total_harness_time:.0f} s of steps = "
        f"{100 * reward_seconds / total_harness_time:.2f} % (target <= 1 %)"
    )


if __name__ == "__main__":
    main()
