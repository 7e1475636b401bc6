"""A resolved run (train/config/resolved.py) built and trained: its training problems, the exploit pre-flight, the
held-out eval, the rollout engine, the trainer with its artefacts and guards, then the training loop and its summary.

``train/grpo.py`` is the command line and imports this module only once a config has parsed and passed every check:
everything here imports torch, transformers, TRL, datasets or Inspect, which ``python train/grpo.py --help`` must not.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from trl import get_peft_config, get_quantization_config

from cpu.bnb_cpu import keep_training_kernel
from problems.file_rows import skipped_rows
from records.inspect_seams import load_hooks_quietly
from records.rollout_format import train_score_name
from rewards.math.worker_pool import warm_up
from train.artifacts.held_out import held_out_eval
from train.artifacts.manifest import build_manifest, rollout_metadata, write_manifest
from train.artifacts.manifest_callback import ManifestCallback
from train.artifacts.rollout_log import RolloutRecorder
from train.config import ConfigError
from train.config.exploit_preflight import exploit_preflight
from train.config.output_dir import RunInterrupted, clear_previous_run, describe
from train.config.resolved import RunPlan
from train.data.rows import data_line, load_training_problems, to_dataset
from train.engines.factory import engine_factory
from train.engines.server import longest_prompt_tokens
from train.engines.vllm_server_api import ServerError
from train.guards.run_guards import add_guards, best_lines, guard_stop, track_best
from train.trainer import RecordingGRPOTrainer, RolloutFlushCallback, RunSpanCallback


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


def trainer_for(plan: RunPlan):
    """(trainer, rollout recorder or None, manifest) for a resolved run (``train/grpo.py`` ``build_trainer``): the
    data, the exploit pre-flight, the held-out eval, the rollout engine, the trainer and its guards, each stage reading
    the plan's decisions. Raises ConfigError/DatasetError (ServerError for servers that do not answer) before any
    model loads."""
    script_args, training_args, model_args = plan.script_args, plan.training_args, plan.model_args
    problems = load_training_problems(script_args, plan.domain)  # bad data fails here, before any model is loaded
    if not problems:
        raise ConfigError("the training dataset is empty: check dataset, dataset_path and dataset_size.")
    if plan.main_process and (line := data_line(script_args, problems)):
        print(f"[verigrpo] {line}")
    train_dataset = to_dataset(
        problems, script_args.num_shots, tools=plan.tools, domain=plan.domain, answer_format=script_args.answer_format
    )
    exploit_preflight(problems, plan)  # a reward that pays a scripted cheat stops here (exit 2)
    held_out = held_out_eval(plan)  # the held-out problems load here too (None without held-out evals)
    load_hooks_quietly()  # Inspect's banner, printed at the first eval or audit, would land inside the progress bar
    track_best(held_out, training_args)  # train/guards/run_guards.py
    tools = plan.tool_setup  # the python tool (train/config/tool_checks.py), None without tools
    engine = engine_factory(  # servers that do not answer, or cannot hold the longest prompt + completion, stop it here
        script_args,
        training_args,
        model_args,
        # the longest prompt as TRL renders it: a tool run's tokenizer and tool schemas
        prompt_tokens=lambda: longest_prompt_tokens(
            train_dataset,
            model_args,
            training_args.trust_remote_code,
            tokenizer=tools.tokenizer if tools else None,
            tools=tools.schemas if tools else None,
        ),
        engine=plan.engine,
    )

    # start the verifier's symbolic workers now, while the model loads, not inside the first reward call;
    # a pool that cannot start stops the run below (with the worker's own error), before training
    warming = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verifier-warm-up")
    warmed = warming.submit(warm_up)

    model_path = _resolve_model(model_args, training_args)
    manifest, callbacks, recorder = _artifacts(plan, skipped_rows(problems))
    tool_kwargs = {}
    if tools is not None:  # TRL's tool loop: the environments, the tokenizer that can call tools, the rounds
        training_args.max_tool_calling_iterations = tools.rounds
        tool_kwargs = {"environment_factory": tools.environment_factory, "processing_class": tools.tokenizer}
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
        **tool_kwargs,
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
    add_guards(trainer, plan)  # train/guards/run_guards.py
    return trainer, recorder, manifest


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


def _artifacts(plan: RunPlan, skipped: tuple = ()):
    """(manifest, callbacks, rollout recorder or None): run.json in every checkpoint, rollout logs if asked.
    ``skipped``: the data rows ``skip_bad_rows`` left out, listed in run.json."""
    script_args, training_args, model_args = plan.script_args, plan.training_args, plan.model_args
    manifest = build_manifest(script_args, training_args, model_args)  # records the think setting
    if plan.inspect_task is not None:  # the task, its scorers and the split by sample id (train/config/inspect_task.py)
        manifest["inspect_task"] = plan.inspect_task.record
    if script_args.skip_bad_rows:
        manifest["skipped_rows"] = [str(row) for row in skipped]
    metadata = rollout_metadata(manifest) if script_args.log_rollouts else None  # what each rollout log says of the run
    callbacks = [ManifestCallback(manifest)]
    recorder = None
    if script_args.log_rollouts:
        recorder = RolloutRecorder(
            Path(training_args.output_dir) / "rollouts",
            every_steps=script_args.rollout_log_steps,
            num_generations=training_args.num_generations,
            metadata=metadata,
        )
        callbacks.append(RolloutFlushCallback(recorder))
    return manifest, callbacks, recorder


REPOSITORY = Path(__file__).resolve().parents[1]


def _script(name: str) -> str:
    """scripts/<name> as the summary's commands can run it from the working directory (a run started elsewhere)."""
    here = Path("scripts") / name
    return str(here) if here.resolve() == REPOSITORY / "scripts" / name else str(REPOSITORY / "scripts" / name)


def _auditable(plan: RunPlan) -> bool:
    """Whether scripts/audit_rollouts.py can re-judge this run's rollout logs: they hold a reward its domain audits
    (correctness, code_tests) or a ``grade`` domain's own reward (evals/log_stats/rollout_audit.py judged_scores)."""
    domain = plan.domain
    judged = set(domain.audited) | ({train_score_name(domain.grade_reward)} if domain.grade is not None else set())
    return any(train_score_name(name) in judged for name in plan.reward_names)


def _close_progress_bar(trainer) -> None:
    """transformers' progress bar closes on_train_end, which an interrupted run never reaches."""
    for callback in trainer.callback_handler.callbacks:
        bar = getattr(callback, "training_bar", None)
        if bar is not None:
            bar.close()
            callback.training_bar = None


def train(plan: RunPlan) -> dict:
    """Build the run's trainer and train it; return output_dir, global_step, log_history, rollout_logs."""
    trainer, recorder, _ = trainer_for(plan)
    training_args = plan.training_args
    output_dir = Path(training_args.output_dir)
    span = RunSpanCallback()
    trainer.add_callback(span)
    if plan.script_args.overwrite_output_dir and trainer.is_world_process_zero():
        removed = clear_previous_run(output_dir)  # every check has passed and the model is loaded: start over
        if removed:
            print(f"[verigrpo] overwrite_output_dir: removed the previous run's {describe(removed)} from {output_dir}")
    trainer.accelerator.wait_for_everyone()
    start = time.perf_counter()
    try:
        trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    except KeyboardInterrupt:  # Ctrl-C: train/grpo.py says which checkpoint was saved last and how to resume
        _close_progress_bar(trainer)  # its last line ends before the message, not inside it
        step = trainer.state.global_step
        raise RunInterrupted(str(output_dir), step, training_args.save_steps, trainer.is_world_process_zero()) from None
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
    stopped = guard_stop(trainer)  # raised last: the run is saved and summarised first, the exit code says it stopped
    trainer.save_model(str(output_dir))
    history = trainer.state.log_history
    if trainer.is_world_process_zero():
        write_manifest(trainer.manifest_callback.current(), output_dir, trainer.state.global_step)
        (output_dir / "log_history.json").write_text(json.dumps(history, indent=1))
        print(f"[verigrpo] {_summary(history, seconds, span.first_step or 0)}")
        print(f"[verigrpo] checkpoint: {output_dir} (adapter + tokenizer + run.json)")
        print(f"[verigrpo] curve: python {_script('plot_run.py')} {output_dir}")
        if recorder is not None:
            held = len(list((output_dir / "rollouts").glob("*.eval")))  # the run's, not only this process's
            audit = f"; audit: python {_script('audit_rollouts.py')} {output_dir}" if _auditable(plan) else ""
            print(
                f"[verigrpo] rollouts: {held} Inspect logs in {output_dir / 'rollouts'} ({len(recorder.written)} new) "
                f"(inspect view --log-dir {output_dir / 'rollouts'}{audit})"
            )
        for line in best_lines(trainer, plan, output_dir):
            print(f"[verigrpo] {line}")
    if stopped is not None:
        raise stopped
    return {
        "output_dir": str(output_dir),
        "global_step": trainer.state.global_step,
        "log_history": history,
        "rollout_logs": [str(p) for p in recorder.written] if recorder else [],
    }
