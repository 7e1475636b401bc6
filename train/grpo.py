"""GRPO with TRL on the shared verifier.

    python train/grpo.py --config configs/cpu-smollm2.yaml               # the CPU default
    python train/grpo.py --config configs/cpu-smollm2.yaml --max_steps 2 # any key can be overridden
    python train/grpo.py --help                                          # every key

The reward functions are ``rewards``' (by the names the domain rows give them, ``problems.domains``) and the
prompt is ``rewards.build_messages``, imported unchanged, so ``inspect eval evals/`` scores the checkpoint with the function that
rewarded it. Every save holds the adapter, the tokenizer (with its chat template) and run.json.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Before torch loads its OpenMP runtime (libgomp in the Linux CPU wheels): an idle OpenMP thread spins
# 10,000 iterations at a barrier, then sleeps (libgomp's default: 300,000). On a busy CPU a long spin
# burns the time slice its descheduled partner needs: with 2 burner processes on 2 cores a small CPU
# GRPO step went 9.4 -> 80.3 s (8.6x; the fair share predicts 2x); with this setting 11.2 -> 27.6 s
# (2.5x). OMP_WAIT_POLICY=PASSIVE degrades exactly 2x (15.1 -> 30.2 s) but is 1.6x slower when quiet.
# Measured with scripts/bench_train.py --burners 2. Effective only when this file is imported before
# torch (the entry point); a value already in the environment wins.
os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from rewards.math.worker_pool import warm_up  # noqa: E402 - after the OpenMP setting
from train.config import ConfigError, ScriptArguments, parse_config, validate  # noqa: E402


def _summary(log_history: list[dict], seconds: float, first_step: int = 0) -> str:
    """What this process did (steps after ``first_step``, the resumed checkpoint's), and the run's reward trend."""
    steps = [entry for entry in log_history if "reward" in entry]
    ran = [entry for entry in steps if entry.get("step", 0) > first_step]
    if not ran:
        return "no training steps were logged"
    window = max(1, min(5, len(steps) // 3 or 1))
    first = sum(e["reward"] for e in steps[:window]) / window
    last = sum(e["reward"] for e in steps[-window:]) / window
    fmt_key = "rewards/format_reward/mean"
    fmt = ""
    if fmt_key in steps[0]:
        fmt_first = sum(e.get(fmt_key, 0.0) for e in steps[:window]) / window
        fmt_last = sum(e.get(fmt_key, 0.0) for e in steps[-window:]) / window
        fmt = f"; format rate {fmt_first:.2f} -> {fmt_last:.2f}"
    resumed = f" (resumed from checkpoint-{first_step})" if first_step else ""
    return (
        f"{len(ran)} step{'' if len(ran) == 1 else 's'}{resumed} in {seconds:.0f} s ({seconds / len(ran):.1f} s/step); "
        f"reward over the run's {len(steps)} steps (mean of first/last {window}) {first:.3f} -> {last:.3f}{fmt}"
    )


def build_trainer(script_args: ScriptArguments, training_args, model_args):
    """Validate, load the data and build the trainer: (trainer, rollout recorder or None, manifest).

    Raises ConfigError/DatasetError (and ServerError for servers that do not answer) before any model
    loads. ``main`` trains it; checks and benchmarks (scripts/check_on_policy.py) use it to get the very
    trainer ``main`` would run. Whoever builds it calls ``trainer.close_rollout_engine()`` when done.
    """
    dtype_line = getattr(model_args, "cpu_dtype_line", None)  # which dtype this CPU computes in, and why (parsing.py)
    if dtype_line and training_args.process_index == 0:
        print(dtype_line)
    validate(script_args, training_args, model_args)
    from train.data.rows import load_training_problems, to_dataset
    from train.engines.factory import engine_factory
    from train.guards.run_guards import add_guards, track_best  # imports transformers: not for --help

    problems = load_training_problems(script_args)  # bad data fails here, before any model is loaded
    if not problems:
        raise ConfigError("the training dataset is empty: check dataset, dataset_path and dataset_size.")
    from train.config.exploit_preflight import exploit_preflight

    exploit_preflight(problems, script_args, training_args)  # a reward that pays a scripted cheat stops here (exit 2)
    held_out = _held_out_eval(script_args, training_args)  # the held-out problems load here too
    track_best(held_out, training_args)  # train/guards/run_guards.py
    train_dataset = to_dataset(problems, script_args.num_shots, tools=bool(script_args.tools))
    engine = engine_factory(  # servers that do not answer, or cannot hold the longest prompt + completion, stop it here
        script_args,
        training_args,
        model_args,
        prompt_tokens=lambda: _longest_prompt(train_dataset, script_args, model_args, training_args),
    )

    # start the verifier's symbolic workers now, while the model loads, not inside the first reward call;
    # a pool that cannot start stops the run below (with the worker's own error), before training
    warming = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verifier-warm-up")
    warmed = warming.submit(warm_up)

    from trl import get_peft_config, get_quantization_config

    from cpu.bnb_cpu import keep_training_kernel
    from problems.domains import reward_funcs
    from train.config.tool_checks import trainer_tool_kwargs
    from train.trainer import RecordingGRPOTrainer

    model_path = _resolve_model(model_args, training_args)
    manifest, callbacks, recorder = _artifacts(script_args, training_args, model_args)
    trainer = RecordingGRPOTrainer(
        model=model_path,
        engine_factory=engine,
        held_out_eval=held_out,
        reward_funcs=reward_funcs(script_args.reward_funcs, think=script_args.think),
        reward_names=list(script_args.reward_funcs),
        rollout_recorder=recorder,
        args=training_args,
        train_dataset=train_dataset,
        peft_config=get_peft_config(model_args),
        quantization_config=get_quantization_config(model_args),
        callbacks=callbacks,
        **trainer_tool_kwargs(script_args, model_args, training_args),  # tools: environment and tokenizer
    )
    keep_training_kernel(trainer.model)  # an eval-mode forward (held-out evals) must not change the 4-bit math
    warming.shutdown(wait=False)
    try:
        warmed.result()  # VerifierUnavailable here, not tracebacks from a thread while training runs
    except BaseException:
        trainer.close_rollout_engine()
        raise
    if trainer.rollout_engine is not None:  # run.json: the vLLM engine and the adapter it serves
        callbacks[0].live = lambda: {"rollout_engine": trainer.rollout_engine_state()}
    trainer.manifest_callback = callbacks[0]
    add_guards(trainer, script_args, model_args)  # train/guards/run_guards.py
    return trainer, recorder, manifest


def _longest_prompt(dataset, script_args, model_args, training_args) -> int:
    from train.engines.server import longest_prompt_tokens

    if not script_args.tools:
        return longest_prompt_tokens(dataset, model_args, training_args.trust_remote_code)
    from python_tool.trl_environment import tool_limits, tool_schemas
    from train.config.tool_checks import tool_tokenizer

    tokenizer = tool_tokenizer(script_args, model_args, training_args)
    return longest_prompt_tokens(dataset, model_args, tokenizer=tokenizer, tools=tool_schemas(tool_limits(script_args)))


def _held_out_eval(script_args, training_args):
    """The held-out Inspect eval the trainer evaluates with (None when ``eval_strategy`` is ``no``)."""
    from train.artifacts.held_out import held_out_eval
    from train.config.validation import evaluates_held_out

    main_process = training_args.process_index == 0
    if not evaluates_held_out(training_args):
        if training_args.eval_steps is not None and main_process:
            print("[verigrpo] eval_steps is set but eval_strategy is no: no held-out evals (set eval_strategy: steps)")
        return None
    held_out = held_out_eval(script_args, training_args)
    if main_process:
        print(
            f"[verigrpo] held-out evals: {held_out.spec} on {held_out.problems} problems, greedy, "
            f"{_eval_schedule(training_args)}; logs in {held_out.log_dir}"
        )
    return held_out


def _eval_schedule(training_args) -> str:
    when = "every epoch" if training_args.eval_strategy == "epoch" else f"every {training_args.eval_steps} steps"
    return f"{when}{' and at step 0' if training_args.eval_on_start else ''}"


def _resolve_model(model_args, training_args) -> str:
    """The base model as the trainer loads it: a local directory made absolute (so the adapter's
    base_model_name_or_path works from any directory, inspect eval hf/<adapter>), and its loading arguments."""
    model_path = model_args.model_name_or_path
    if Path(model_path).is_dir():
        model_path = model_args.model_name_or_path = str(Path(model_path).resolve())
    training_args.model_init_kwargs = {
        "revision": model_args.model_revision,
        "dtype": model_args.dtype,
        "attn_implementation": model_args.attn_implementation,
        **(training_args.model_init_kwargs or {}),
    }
    return model_path


def _artifacts(script_args, training_args, model_args):
    """(manifest, callbacks, rollout recorder or None): run.json in every checkpoint, rollout logs if asked."""
    from train.artifacts.manifest import ManifestCallback, build_manifest, rollout_metadata
    from train.artifacts.rollout_log import RolloutRecorder
    from train.trainer import RolloutFlushCallback

    manifest = build_manifest(script_args, training_args, model_args)  # records the think setting
    callbacks = [ManifestCallback(manifest)]
    recorder = None
    if script_args.log_rollouts:
        recorder = RolloutRecorder(
            Path(training_args.output_dir) / "rollouts",
            every_steps=script_args.rollout_log_steps,
            num_generations=training_args.num_generations,
            metadata=rollout_metadata(manifest),
        )
        callbacks.append(RolloutFlushCallback(recorder))
    return manifest, callbacks, recorder


def main(script_args: ScriptArguments, training_args, model_args) -> dict:
    """Train; return output_dir, global_step, log_history, rollout_logs. Raises ConfigError/DatasetError early."""
    trainer, recorder, manifest = build_trainer(script_args, training_args, model_args)
    from train.artifacts.manifest import write_manifest
    from train.engines.vllm_server_api import ServerError
    from train.guards.run_guards import best_lines, raise_if_a_guard_stopped
    from train.trainer import RunSpanCallback

    output_dir = Path(training_args.output_dir)
    span = RunSpanCallback()
    trainer.add_callback(span)
    start = time.perf_counter()
    try:
        trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    except ServerError as exc:  # say where the run stopped: the checkpoints before it are complete
        step = trainer.state.global_step
        raise ServerError(
            f"{exc} [the run stopped in training step {step + 1} ({step} completed); resume from its last checkpoint "
            "with --resume_from_checkpoint]",
            status=exc.status,
            detail=exc.detail,
        ) from None
    finally:
        trainer.close_rollout_engine()  # adapter files and server connections go, also after a failure
    seconds = time.perf_counter() - start
    trainer.save_model(str(output_dir))
    history = trainer.state.log_history
    if trainer.is_world_process_zero():
        write_manifest(trainer.manifest_callback.current(), output_dir, trainer.state.global_step)
        (output_dir / "log_history.json").write_text(json.dumps(history, indent=1))
        print(f"[verigrpo] {_summary(history, seconds, span.first_step or 0)}")
        print(f"[verigrpo] checkpoint: {output_dir} (adapter + tokenizer + run.json)")
        print(f"[verigrpo] curve: python scripts/plot_run.py {output_dir}")
        if recorder is not None:
            held = len(list((output_dir / "rollouts").glob("*.eval")))  # the run's, not only this process's
            print(
                f"[verigrpo] rollouts: {held} Inspect logs in {output_dir / 'rollouts'} ({len(recorder.written)} new) "
                f"(inspect view --log-dir {output_dir / 'rollouts'}; audit: python scripts/audit_rollouts.py {output_dir})"
            )
        for line in best_lines(trainer, script_args, output_dir):
            print(f"[verigrpo] {line}")
    raise_if_a_guard_stopped(trainer)  # saved and summarised above; the exit code says it stopped
    return {
        "output_dir": str(output_dir),
        "global_step": trainer.state.global_step,
        "log_history": history,
        "rollout_logs": [str(p) for p in recorder.written] if recorder else [],
    }


def _error(exc: Exception, status: int) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return status


def cli(argv: list[str] | None = None) -> int:
    from problems.math_data import DatasetError

    try:
        script_args, training_args, model_args = parse_config(argv)  # --help exits here, before any model library
    except (ConfigError, DatasetError) as exc:
        return _error(exc, 2)
    from train.engines.vllm_server_api import ServerError
    from train.guards.on_policy import OffPolicy  # imports torch
    from train.guards.reward_hacking import RewardHacking

    try:
        main(script_args, training_args, model_args)
    except (ConfigError, DatasetError) as exc:
        return _error(exc, 2)
    except ServerError as exc:  # a vLLM server failed (before or during training): saved checkpoints are complete
        return _error(exc, 3)
    except (OffPolicy, RewardHacking) as exc:  # a run guard stopped training (train/guards/); checkpoints are complete
        return _error(exc, 4)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
