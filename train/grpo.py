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

from cpu.bnb_cpu import keep_training_kernel  # noqa: E402 - after the OpenMP setting
from problems.math_data import DatasetError  # noqa: E402
from python_tool.trl_environment import tool_limits, tool_schemas  # noqa: E402
from rewards.math.worker_pool import warm_up  # noqa: E402
from train.artifacts.held_out import held_out_eval  # noqa: E402
from train.config import ConfigError, ScriptArguments, parse_config  # noqa: E402
from train.config.exploit_preflight import exploit_preflight  # noqa: E402
from train.config.resolved import RunPlan, resolve_run  # noqa: E402
from train.config.tool_checks import tool_tokenizer, trainer_tool_kwargs  # noqa: E402
from train.engines.factory import engine_factory  # noqa: E402
from train.engines.vllm_server_api import ServerError  # noqa: E402
from train.guards.on_policy import OffPolicy  # noqa: E402

# Everything above imports in milliseconds and loads no model library: `python train/grpo.py --help` (which exits in
# parse_config) must not import torch, transformers, TRL, datasets or Inspect (tests/test_script_help.py). What does
# is imported where the run first needs it, each marked `# lazy:`.


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
    return trainer_for(plan_run(script_args, training_args, model_args))


def plan_run(script_args: ScriptArguments, training_args, model_args) -> RunPlan:
    """The start-up line on the dtype this CPU computes in (chosen in parse_config), then every check and the run's
    decisions, once (train/config/resolved.py): ConfigError/DatasetError before anything heavy loads."""
    dtype_line = getattr(model_args, "cpu_dtype_line", None)
    if dtype_line and training_args.process_index == 0:
        print(dtype_line)
    return resolve_run(script_args, training_args, model_args)


def trainer_for(plan: RunPlan):
    """``build_trainer`` for a resolved run: the data, the exploit pre-flight, the held-out eval, the rollout engine,
    the trainer and its guards, each stage reading the plan's decisions."""
    script_args, training_args, model_args = plan.script_args, plan.training_args, plan.model_args
    from train.data.rows import load_training_problems, to_dataset  # lazy: datasets, not for --help
    from train.guards.run_guards import add_guards, track_best  # lazy: transformers, Inspect, not for --help

    problems = load_training_problems(script_args, plan.domain)  # bad data fails here, before any model is loaded
    if not problems:
        raise ConfigError("the training dataset is empty: check dataset, dataset_path and dataset_size.")
    exploit_preflight(problems, plan)  # a reward that pays a scripted cheat stops here (exit 2)
    held_out = _held_out_eval(plan)  # the held-out problems load here too
    track_best(held_out, training_args)  # train/guards/run_guards.py
    train_dataset = to_dataset(problems, script_args.num_shots, tools=plan.tools, domain=plan.domain)
    engine = engine_factory(  # servers that do not answer, or cannot hold the longest prompt + completion, stop it here
        script_args,
        training_args,
        model_args,
        prompt_tokens=lambda: _longest_prompt(train_dataset, plan),
    )

    # start the verifier's symbolic workers now, while the model loads, not inside the first reward call;
    # a pool that cannot start stops the run below (with the worker's own error), before training
    warming = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verifier-warm-up")
    warmed = warming.submit(warm_up)

    from trl import get_peft_config, get_quantization_config

    from train.trainer import RecordingGRPOTrainer  # lazy: torch, not for --help

    model_path = _resolve_model(model_args, training_args)
    manifest, callbacks, recorder = _artifacts(plan)
    trainer = RecordingGRPOTrainer(
        model=model_path,
        engine_factory=engine,
        held_out_eval=held_out,
        reward_funcs=list(plan.reward_funcs),
        reward_names=list(plan.reward_names),
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


def _longest_prompt(dataset, plan: RunPlan) -> int:
    from train.engines.server import longest_prompt_tokens  # lazy: transformers, not for --help

    model_args, training_args = plan.model_args, plan.training_args
    if not plan.tools:
        return longest_prompt_tokens(dataset, model_args, training_args.trust_remote_code)
    tokenizer = tool_tokenizer(plan.script_args, model_args, training_args)
    return longest_prompt_tokens(
        dataset, model_args, tokenizer=tokenizer, tools=tool_schemas(tool_limits(plan.script_args))
    )


def _held_out_eval(plan: RunPlan):
    """The held-out Inspect eval the trainer evaluates with (None when ``eval_strategy`` is ``no``)."""
    training_args = plan.training_args
    if not plan.held_out:
        if training_args.eval_steps is not None and plan.main_process:
            print("[verigrpo] eval_steps is set but eval_strategy is no: no held-out evals (set eval_strategy: steps)")
        return None
    held_out = held_out_eval(plan.script_args, training_args)
    if plan.main_process:
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


def _artifacts(plan: RunPlan):
    """(manifest, callbacks, rollout recorder or None): run.json in every checkpoint, rollout logs if asked."""
    from train.artifacts.manifest import ManifestCallback, build_manifest, rollout_metadata  # lazy: transformers
    from train.artifacts.rollout_log import RolloutRecorder  # lazy: Inspect
    from train.trainer import RolloutFlushCallback  # lazy: torch

    script_args, training_args, model_args = plan.script_args, plan.training_args, plan.model_args
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
    plan = plan_run(script_args, training_args, model_args)
    trainer, recorder, manifest = trainer_for(plan)
    from train.artifacts.manifest import write_manifest  # lazy: transformers
    from train.guards.run_guards import best_lines, raise_if_a_guard_stopped  # lazy: transformers
    from train.trainer import RunSpanCallback  # lazy: torch

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
    try:
        script_args, training_args, model_args = parse_config(argv)  # --help exits here, before any model library
    except (ConfigError, DatasetError) as exc:
        return _error(exc, 2)
    from train.guards.reward_hacking import RewardHacking  # lazy: transformers, after --help

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
