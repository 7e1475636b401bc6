"""Replay a training step: recompute step N's loss and gradient norm from its recorded batch and the nearest
checkpoint before it, without generating, and print them beside the values the run logged; with ``--counterfactual``,
also what the step would have done with the reward functions as they are now.

    python train/grpo.py --config configs/cpu-smollm2.yaml --max_steps 3 --save_steps 2
    python -m train.replay runs/cpu-smollm2 --step 3 [--counterfactual]

With ``log_replay_batches: true`` (the default) the trainer writes, for every step, the exact batches TRL computed the loss from
(``<run>/replay/step-000002.pt``: prompt and completion token ids and masks, advantages, the old and sampling
logprobs and importance-sampling ratios TRL holds, each row's index in its generation batch; one entry per
gradient-accumulation micro-batch). The replay builds the trainer the run's own config builds (run.json;
``training_args.bin`` of a checkpoint), loads the nearest checkpoint before step N the way a resume does (its weights,
optimizer and scheduler; with none, the start: TRL seeds the adapter's initialization), re-runs the recorded steps
between it and N as the training loop ran them (loss, backward, gradient clipping, optimizer and scheduler step), and
runs transformers' ``training_step`` on each of step N's recorded micro-batches (TRL's loss, the same scaling and
backward), then the gradient norm the training loop logs (``accelerator.clip_grad_norm_``). On CPU a seeded run replays exactly
(tests/integration/test_reward_hacking_alarm.py).

Runs with vLLM rollouts replay without an engine: the trainer is built with ``use_vllm`` off and only TRL's loss
switch turned back on, so the loss multiplies by the recorded importance-sampling ratios as it did (a seeded CPU
run with vLLM's CPU build replays exactly: tests/integration/test_replay_vllm.py). vLLM need not be installed.

The counterfactual (train/counterfactual.py) re-scores the step's completions with the trainer's reward functions as
the code defines them now (the run's ``reward_funcs`` and ``reward_weights``), recomputes the advantages through
TRL's own scoring, and replays the step with them; it prints the rewards and advantages that change and the loss
and gradient norm beside the replayed ones. It needs the step's rollout log (``log_rollouts``, on by default) and
one generation batch per step; runs with tools are not re-scored.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from records.run_manifest import read_run_manifest
from train import counterfactual as cf
from train.artifacts.curve import load_history
from train.artifacts.replay_batches import BATCH_NAME, REPLAY_DIR
from train.config import ScriptArguments
from train.config.arguments import grpo_config_class
from train.counterfactual import ReplayError
from train.grpo import build_trainer


def run_config(run_dir: Path, checkpoint: Path):
    """(script args, training args, model args) the run trained with: ``training_args.bin`` (the exact GRPOConfig)
    and run.json's script and model sections."""
    import torch
    from trl import ModelConfig

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


def start_of(run_dir: Path, step: int) -> tuple[int, Path | None]:
    """The nearest checkpoint before ``step`` (its step and directory), or (0, None): the start of the run."""
    saved = sorted(
        (int(path.name.split("-")[1]), path)
        for path in run_dir.glob("checkpoint-*")
        if path.name.split("-")[1].isdigit() and path.is_dir()
    )
    before = [(n, path) for n, path in saved if n < step]
    return before[-1] if before else (0, None)


def any_checkpoint(run_dir: Path) -> Path:
    """A checkpoint of the run, for its training_args.bin (every save holds the same)."""
    found = sorted(run_dir.glob("checkpoint-*/training_args.bin"))
    if not found:
        raise ReplayError(f"{run_dir}: no checkpoint holds training_args.bin (save_steps keeps them)")
    return found[0].parent


def batch_path(run_dir: Path, step: int) -> Path:
    path = run_dir / REPLAY_DIR / BATCH_NAME.format(step=step)
    if not path.is_file():
        raise ReplayError(
            f"{path} not found: each step's batch is recorded unless log_replay_batches is false, and a replay needs "
            "the steps from the nearest checkpoint before it"
        )
    return path


def rerun_step(trainer, entries: list[dict]) -> None:
    """One recorded step as the training loop ran it: the loss and backward of each micro-batch, the gradient clip,
    then the optimizer and scheduler step."""
    step_loss(trainer, entries, keep_gradients=True)
    trainer.optimizer.step()
    trainer.lr_scheduler.step()
    trainer.model_wrapped.zero_grad(set_to_none=True)


def step_loss(trainer, entries: list[dict], keep_gradients: bool = False) -> dict:
    """The step's loss and gradient norm from its micro-batches: transformers' ``training_step`` on each (TRL's
    loss, the same scaling and backward), then the norm the training loop logs (``accelerator.clip_grad_norm_``)."""
    import math

    model = trainer.model_wrapped
    model.zero_grad(set_to_none=True)
    loss = 0.0
    for entry in entries:
        with recorded_inputs(trainer, entry["inputs"]):
            loss += trainer.training_step(model, {}, entry["num_items_in_batch"]).item()
    max_norm = trainer.args.max_grad_norm if trainer.args.max_grad_norm > 0 else math.inf
    grad_norm = float(trainer.accelerator.clip_grad_norm_(model.parameters(), max_norm))
    if not keep_gradients:
        model.zero_grad(set_to_none=True)
    return {"loss": loss, "grad_norm": grad_norm}


def counterfactual_step(trainer, run_dir: Path, step: int, entries: list[dict], script_args) -> dict:
    """The step re-scored with the reward functions as they are now (train/counterfactual.py): the rewards and
    advantages that change, and the loss and gradient norm with the new advantages."""
    args = trainer.args
    if args.num_iterations != 1 or args.steps_per_generation != args.gradient_accumulation_steps:
        raise ReplayError(
            "the counterfactual needs one generation batch per step (num_iterations 1, steps_per_generation equal "
            "to gradient_accumulation_steps)"
        )
    if script_args.tools:
        raise ReplayError("the counterfactual does not re-run tool calls: runs with tools are not re-scored")
    names = list(script_args.reward_funcs)
    batch = cf.generation_order(entries)
    logged = cf.logged_rollouts(run_dir, step, args.num_generations, names)
    if len(logged) != len(batch["prompt_ids"]):
        raise ReplayError(
            f"step {step}: the rollout log holds {len(logged)} rollouts, the replay batch {len(batch['prompt_ids'])}"
        )
    rows = cf.dataset_rows(trainer, logged)
    now_funcs = list(trainer.reward_funcs)
    paid = cf.score(trainer, rows, batch, cf.paid_rewards(logged, names), names)
    cf.check_match(logged, batch, paid)  # every row is its own log sample: else ReplayError
    now = cf.score(trainer, rows, batch, now_funcs, names)
    rewards, advantages = cf.changes(logged, paid, now)
    new = now.advantages.to(batch["advantages"].dtype)
    return {
        "rollouts": len(logged),
        "num_generations": args.num_generations,
        "reward_funcs": names,
        "reward_weights": [float(w) for w in trainer.reward_weights],
        "changed_rewards": rewards,
        "changed_advantages": advantages,
        **step_loss(trainer, cf.with_advantages(entries, new)),
    }


def replay(run_dir: Path, step: int, counterfactual: bool = False) -> dict:
    """Recompute ``step``'s loss and gradient norm: {"replayed": {...}, "logged": {...}}; with ``counterfactual``
    also {"counterfactual": {...}} (``counterfactual_step``)."""
    import torch

    run_dir = Path(run_dir)
    if step < 1:
        raise ReplayError(f"--step {step}: steps count from 1")
    start, checkpoint = start_of(run_dir, step)
    paths = [batch_path(run_dir, n) for n in range(start + 1, step + 1)]  # every step to re-run, then step N
    script_args, training_args, model_args = run_config(run_dir, checkpoint or any_checkpoint(run_dir))
    use_vllm = training_args.use_vllm
    with tempfile.TemporaryDirectory(prefix="verigrpo-replay-") as scratch:
        training_args.output_dir = scratch  # nothing of the replay lands in the run
        training_args.eval_strategy = "no"  # the replay evaluates nothing (a run's held-out evals are in its log)
        training_args.eval_steps = None  # else train/grpo.py says "eval_steps is set but eval_strategy is no"
        training_args.report_to = []
        training_args.resume_from_checkpoint = None
        # vLLM rollouts replay without an engine: the recorded batch holds what TRL's loss took from it (the
        # sampling logprobs and importance-sampling ratios); only the loss's switch is turned back on below
        training_args.use_vllm = False
        script_args.log_rollouts = False
        script_args.log_replay_batches = False
        trainer, _, _ = build_trainer(script_args, training_args, model_args)
        try:
            trainer.use_vllm = use_vllm  # TRL's loss multiplies by the recorded importance-sampling ratios as it did
            if checkpoint is not None:
                trainer.load_checkpoint_weights(str(checkpoint))  # as a resume loads it (train/trl_seams.py)
            trainer.current_gradient_accumulation_steps = training_args.gradient_accumulation_steps
            if len(paths) > 1:  # steps between the checkpoint and N: the optimizer and scheduler as the loop had them
                trainer.create_optimizer_and_scheduler(num_training_steps=training_args.max_steps)
                if checkpoint is not None:
                    trainer.load_optimizer_and_scheduler(str(checkpoint))  # what a resume loads (train/trl_seams.py)
                for path in paths[:-1]:
                    rerun_step(trainer, torch.load(path, weights_only=False))
            entries = torch.load(paths[-1], weights_only=False)
            result = {"step": step, "from": start, "vllm": use_vllm, "replayed": step_loss(trainer, entries)}
            if counterfactual:
                result["counterfactual"] = counterfactual_step(trainer, run_dir, step, entries, script_args)
        finally:
            trainer.close_rollout_engine()
    result["logged"] = logged_step(run_dir, step)
    return result


def _value(value) -> str:
    return "None" if value is None else f"{value:.6g}"


def _excerpt(text: str, limit: int = 60) -> str:
    """A completion on one line, cut to ``limit`` characters (the rollout log holds it whole)."""
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


def counterfactual_lines(result: dict) -> list[str]:
    """What the CLI prints for a counterfactual: the changed rewards and advantages, the two losses."""
    cf, replayed, step = result["counterfactual"], result["replayed"], result["step"]
    weights = " ".join(f"{w:g}" for w in cf["reward_weights"])
    lines = [
        f"counterfactual: step {step} re-scored with the reward functions as they are now "
        f"({', '.join(cf['reward_funcs'])}; weights {weights}; groups of {cf['num_generations']})"
    ]
    rows = {(c.sample, c.epoch) for c in cf["changed_rewards"]}
    lines.append(f"  rewards changed: {len(rows)} of {cf['rollouts']} completions")
    lines += [
        f"    {c.sample} #{c.epoch} {c.what}: {_value(c.old)} -> {_value(c.new)}   {_excerpt(c.completion)}"
        for c in cf["changed_rewards"]
    ]
    groups = len({c.sample for c in cf["changed_advantages"]})
    lines.append(
        f"  advantages changed: {len(cf['changed_advantages'])} of {cf['rollouts']} completions, "
        f"{groups} group{'' if groups == 1 else 's'}"
    )
    lines += [f"    {c.sample} #{c.epoch}: {_value(c.old)} -> {_value(c.new)}" for c in cf["changed_advantages"]]
    for key in ("loss", "grad_norm"):
        same = "equal" if cf[key] == replayed[key] else f"differs by {abs(cf[key] - replayed[key]):.3g}"
        lines.append(f"  {key}: counterfactual {cf[key]!r}, replayed {replayed[key]!r} ({same})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a train/grpo.py output directory")
    parser.add_argument(
        "--step", type=int, required=True, help="the step to replay (from the nearest checkpoint before it)"
    )
    parser.add_argument(
        "--counterfactual",
        action="store_true",
        help="also re-score the step with the reward functions as they are now and print what changes",
    )
    args = parser.parse_args(argv)
    try:
        result = replay(args.run_dir, args.step, counterfactual=args.counterfactual)
    except (ReplayError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    logged = result["logged"]
    start = f"checkpoint-{result['from']}" if result["from"] else "the start"
    print(f"step {args.step}: from {start}, re-running the {args.step - result['from'] - 1} recorded step(s) between")
    for key in ("loss", "grad_norm"):
        ours, theirs = result["replayed"][key], logged.get(key)
        same = "equal" if ours == theirs else f"differs by {abs(ours - theirs):.3g}"
        print(f"step {args.step} {key}: replayed {ours!r}, logged {theirs!r} ({same})")
    if result["vllm"]:
        print(f"step {args.step} had vLLM rollouts: replayed without an engine, with the recorded sampling logprobs")
    for line in counterfactual_lines(result) if args.counterfactual else []:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
