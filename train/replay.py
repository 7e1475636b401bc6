"""Replay a training step: recompute step N's loss and gradient norm from its recorded batch and the checkpoint
before it, without generating, and print them beside the values the run logged.

    python train/grpo.py --config configs/cpu-smollm2.yaml --log_replay_batches true --save_steps 1
    python -m train.replay runs/cpu-smollm2 --step 2

With ``log_replay_batches: true`` the trainer writes, for every step, the exact batches TRL computed the loss from
(``<run>/replay/step-000002.pt``: prompt and completion token ids and masks, advantages, the old and sampling
logprobs TRL holds; one entry per gradient-accumulation micro-batch). The replay builds the trainer the run's own
config builds (run.json; ``training_args.bin`` of the checkpoint), loads ``checkpoint-(N-1)`` the way a resume does,
and runs transformers' ``training_step`` on each recorded micro-batch (TRL's loss, the same scaling and backward),
then the gradient norm the training loop logs (``accelerator.clip_grad_norm_``). On CPU a seeded run replays
exactly (tests/integration/test_reward_hacking_alarm.py). Runs with vLLM rollouts are not replayed yet (their importance-sampling
ratios come from the engine); a counterfactual with a re-scored reward is not here yet either.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from train.artifacts.replay_batches import BATCH_NAME, REPLAY_DIR


class ReplayError(ValueError):
    """A step that cannot be replayed; the message says what is missing and what to do."""


def run_config(run_dir: Path, checkpoint: Path):
    """(script args, training args, model args) the run trained with: ``training_args.bin`` (the exact GRPOConfig)
    and run.json's script and model sections."""
    import torch
    from trl import ModelConfig

    from records.run_manifest import read_run_manifest
    from train.config import ScriptArguments
    from train.config.arguments import grpo_config_class

    grpo_config_class()  # defines the GRPOConfig class training_args.bin was pickled as

    manifest = read_run_manifest(run_dir) or read_run_manifest(checkpoint)
    if manifest is None:
        raise ReplayError(f"{run_dir}: no run.json (not a train/grpo.py output directory)")
    args_path = checkpoint / "training_args.bin"
    if not args_path.is_file():
        raise ReplayError(f"{args_path} not found: the checkpoint is incomplete")
    training_args = torch.load(args_path, weights_only=False)
    script_fields = {f.name for f in dataclasses.fields(ScriptArguments)}
    model_fields = {f.name for f in dataclasses.fields(ModelConfig) if f.init}
    script_args = ScriptArguments(**{k: v for k, v in manifest["config"]["script"].items() if k in script_fields})
    model_args = ModelConfig(**{k: v for k, v in manifest["config"]["model"].items() if k in model_fields})
    return script_args, training_args, model_args


def logged_step(run_dir: Path, step: int) -> dict:
    """The log-history entry of ``step`` (loss, grad_norm)."""
    from train.artifacts.curve import load_history

    entries = [e for e in load_history(run_dir) if e.get("step") == step and "loss" in e]
    if not entries:
        raise ReplayError(f"{run_dir}: step {step} logged no loss (logging_steps must be 1 to compare every step)")
    return entries[-1]


@contextmanager
def recorded_inputs(trainer, batch: dict):
    """transformers' ``training_step`` prepares its inputs with TRL's ``_prepare_inputs`` (which generates); here it
    returns the recorded batch instead, so the step runs exactly as it did, minus generation."""
    trainer._prepare_inputs = lambda _inputs: batch
    try:
        yield
    finally:
        del trainer._prepare_inputs


def replay(run_dir: Path, step: int) -> dict:
    """Recompute ``step``'s loss and gradient norm: {"replayed": {...}, "logged": {...}}."""
    import torch

    run_dir = Path(run_dir)
    batch_path = run_dir / REPLAY_DIR / BATCH_NAME.format(step=step)
    if not batch_path.is_file():
        raise ReplayError(f"{batch_path} not found: train with log_replay_batches: true to record each step's batch")
    checkpoint = run_dir / f"checkpoint-{step - 1}"
    if not checkpoint.is_dir():
        raise ReplayError(
            f"{checkpoint} not found: a step replays from the checkpoint before it (save_steps 1 keeps every one; "
            "step 1 has none)"
        )
    script_args, training_args, model_args = run_config(run_dir, checkpoint)
    if training_args.use_vllm:
        raise ReplayError("replaying a run with vLLM rollouts is not supported yet (its importance-sampling ratios)")
    from train.grpo import build_trainer

    with tempfile.TemporaryDirectory(prefix="verigrpo-replay-") as scratch:
        training_args.output_dir = scratch  # nothing of the replay lands in the run
        training_args.eval_strategy = "no"
        training_args.report_to = []
        training_args.resume_from_checkpoint = None
        script_args.log_rollouts = False
        script_args.log_replay_batches = False
        trainer, _, _ = build_trainer(script_args, training_args, model_args)
        try:
            trainer.load_checkpoint_weights(str(checkpoint))  # as a resume loads it (train/trl_seams.py)
            trainer.current_gradient_accumulation_steps = training_args.gradient_accumulation_steps
            model = trainer.model_wrapped
            model.zero_grad(set_to_none=True)
            loss = 0.0
            for entry in torch.load(batch_path, weights_only=False):
                with recorded_inputs(trainer, entry["inputs"]):
                    loss += trainer.training_step(model, {}, entry["num_items_in_batch"]).item()
            max_norm = training_args.max_grad_norm if training_args.max_grad_norm > 0 else math.inf
            grad_norm = float(trainer.accelerator.clip_grad_norm_(model.parameters(), max_norm))
        finally:
            trainer.close_rollout_engine()
    logged = logged_step(run_dir, step)
    return {"step": step, "replayed": {"loss": loss, "grad_norm": grad_norm}, "logged": logged}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a train/grpo.py output directory")
    parser.add_argument("--step", type=int, required=True, help="the step to replay (needs checkpoint-(step-1))")
    args = parser.parse_args(argv)
    try:
        result = replay(args.run_dir, args.step)
    except (ReplayError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    logged = result["logged"]
    for key in ("loss", "grad_norm"):
        ours, theirs = result["replayed"][key], logged.get(key)
        same = "equal" if ours == theirs else f"differs by {abs(ours - theirs):.3g}"
        print(f"step {args.step} {key}: replayed {ours!r}, logged {theirs!r} ({same})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
