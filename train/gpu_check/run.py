"""``scripts/check_gpu.py``: will this recipe run on this machine, how fast, in how much memory, on-policy?

One run, in this order: the environment (device, versions, whether vLLM has bitsandbytes); the
memory budget (the device's, or ``--memory-cap``, enforced on a GPU) and pre-flight's estimate for
it; ``--steps`` real GRPO steps of the config through the very trainer ``train/grpo.py`` builds
(``build_trainer``), timed, with the peak memory measured; the on-policy check on the trained
policy (``on_policy.py``, as ``scripts/check_on_policy.py``); and the engine's rollout speed
against transformers ``generate`` + peft on the same policy and prompts (``rollout_speed.py``, as
``scripts/bench_rollouts.py``). A check that fails stops the ones that need it; each row gets a
verdict and, when it fails, what to change. The table is printed and written as gpu-check.json and
gpu-check.md beside the run's log_history.json; the exit status is 1 when a check did not pass.

The steps run at learning rate 1e-3 unless ``--learning_rate`` is given: a recipe's 1e-5 moves the
policy by less than bf16 noise in one step, and the on-policy check needs a step it can see (the
stale adapter must differ from the policy); speed and memory do not depend on it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path

from train import grpo
from train.config import ConfigError, machine_checks, parse_config
from train.engines.choice import rollout_engine
from train.gpu_check import memory, on_policy, report, rollout_speed
from train.gpu_check.environment import probe
from train.gpu_check.verdicts import (
    FAIL,
    NO_KV_CACHE,
    NOT_FREE,
    ONE_SEQUENCE,
    MemoryInputs,
    Row,
    Wants,
    environment_row,
    memory_row,
    not_run,
    on_policy_row,
    speed_row,
    steps_row,
)
from train.vllm_seams import cache_config

CHECK_LEARNING_RATE = 1e-3
CHECKS = ("environment", "memory", "GRPO steps", "rollout speed", "on-policy")
# How a GPU reports running out of memory besides torch.OutOfMemoryError: torch's "CUDA error: out of memory"
# (cudaErrorMemoryAllocation, a RuntimeError), vLLM's sleep-mode allocator's "CUDA Error: out of memory at
# cumem_allocator.cpp:N" (its C extension raises PyExc_RuntimeError when cuMemCreate fails at wake-up), and the driver
# API's name for it. Anything else stays an error.
CUDA_OOM = re.compile(r"cuda error: out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation", re.IGNORECASE)
VLLM_POOL_REFUSALS = (NO_KV_CACHE, ONE_SEQUENCE, NOT_FREE)  # vLLM's ValueErrors about its pool (verdicts.py)


def cuda_out_of_memory(exc: BaseException) -> str | None:
    """The first line of ``exc`` when it is the GPU running out of memory (however it was raised), else None."""
    import torch

    text = str(exc)
    if isinstance(exc, torch.OutOfMemoryError) or (isinstance(exc, RuntimeError) and CUDA_OOM.search(text)):
        return (text.splitlines() or [type(exc).__name__])[0]
    return None


def vllm_pool_refusal(exc: BaseException) -> str | None:
    """vLLM's text when ``exc`` is vLLM refusing its pool while loading (a ValueError, not an out-of-memory), else
    None. In-process (the external launcher turns vLLM's engine-core process off) it reaches build_trainer as is."""
    text = str(exc)
    if isinstance(exc, ValueError) and any(refusal in text for refusal in VLLM_POOL_REFUSALS):
        return text
    return None


def turn_off_held_out_evals(script_args, training_args) -> str | None:
    """The check reports the GRPO steps and their memory: the config's held-out evals (transformers generation of
    ``eval_problems`` problems, at step 0 with ``eval_on_start`` and every ``eval_steps``) would run inside
    ``trainer.train()``, timed and measured by no row (the GPU recipes: 200 problems x 512 greedy tokens). Turned off,
    as train/replay.py does; returns what the config asked for (None: no evals)."""
    if training_args.eval_strategy == "no" and not training_args.eval_on_start:
        return None
    steps = training_args.eval_steps or training_args.logging_steps  # transformers' default for eval_steps
    when = {
        "no": [],
        "epoch": ["every epoch"],
        "steps": [f"every {steps:g} steps" if steps >= 1 else f"every {steps:g} of max_steps"],
    }[getattr(training_args.eval_strategy, "value", training_args.eval_strategy)]
    if training_args.eval_on_start:
        when.insert(0, "at step 0")
    training_args.eval_strategy = "no"
    training_args.eval_on_start = False
    training_args.eval_steps = None  # else train/grpo.py says "eval_steps is set but eval_strategy is no"
    return f"the config's {script_args.eval_problems} problems {' and '.join(when)}, not timed or measured here"


def log(message: str) -> None:
    print(f"[gpu-check] {message}", flush=True)


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="check_gpu.py",
        description="Will CONFIG fit this GPU (or a cap), how fast does it train, are its rollouts on-policy?",
        epilog="Any other --key value overrides the config, as for train/grpo.py (e.g. --max_completion_length 64).",
    )
    parser.add_argument("--config", required=True, help="a training config (configs/*-vllm.yaml)")
    parser.add_argument("--steps", type=int, default=2, help="real GRPO steps to run (default 2)")
    parser.add_argument(
        "--memory-cap",
        type=float,
        metavar="GiB",
        help="the memory budget, e.g. 14.5 for a 16 GB card; enforced on a GPU (torch's per-process fraction, "
        "vLLM's utilization scaled), the budget the verdict compares with on CPU",
    )
    parser.add_argument("--out", help="where the table and logs go (default runs/gpu-check/<config name>)")
    parser.add_argument(
        "--speed-rounds", type=int, default=1, help="interleaved rounds per side of the rollout-speed comparison"
    )
    opts, overrides = parser.parse_known_args(argv)
    if opts.steps < 1 or opts.speed_rounds < 1:
        parser.error("--steps and --speed-rounds must be at least 1")
    return opts, overrides


def _given(overrides: list[str], key: str) -> bool:
    return any(arg == key or arg.startswith(key + "=") for arg in overrides)


def check(opts: argparse.Namespace, overrides: list[str], out: Path) -> tuple[list[Row], dict]:
    """Run the checks; (rows in CHECKS order, everything else for the JSON). ConfigError on a bad config."""
    argv = ["--config", opts.config, *overrides, "--max_steps", str(opts.steps), "--output_dir", str(out / "run")]
    argv += ["--save_strategy", "no", "--log_rollouts", "false", "--logging_steps", "1"]
    cuda = machine_checks.cuda_available()
    (script_args, training_args, model_args), gpu_recipe = parse_on_this_machine(argv, cuda)
    config_lr = training_args.learning_rate
    if not _given(overrides, "--learning_rate"):
        training_args.learning_rate = CHECK_LEARNING_RATE
    evals_off = turn_off_held_out_evals(script_args, training_args)
    extra = {"config": opts.config, "overrides": overrides, "steps": opts.steps, "memory_cap_gib": opts.memory_cap}
    extra["held_out_evals_off"] = evals_off

    log("environment")
    env = probe(cuda)
    wants = Wants(gpu_recipe, bool(model_args.load_in_4bit), rollout_engine(training_args, model_args))
    rows = {"environment": environment_row(env, wants)}
    gpu = cuda and not training_args.use_cpu
    if rows["environment"].failed:
        return _fill(rows, not_run, "the environment check failed"), extra

    budget = memory.apply_cap(opts.memory_cap, training_args, gpu, env.memory_bytes)
    extra["budget"] = budget.as_dict()
    found = memory.estimate(training_args, model_args, gpu, env.memory_bytes, share_base=script_args.vllm_share_base)
    configured = budget.vllm_utilization[0] if budget.vllm_utilization else training_args.vllm_gpu_memory_utilization
    inputs = MemoryInputs(
        budget=budget.bytes,
        budget_source=budget.source,
        gpu=gpu,
        estimate=found.total if found else None,
        parts=dict(found.parts) if found else {},
        sleeps=bool(training_args.vllm_enable_sleep_mode),
        vllm_pool=found.parts.get("vLLM pool", 0.0) if found and gpu else 0.0,
        vllm_minimum=dict(found.vllm_minimum) if found and gpu else {},
        utilization=configured,
    )
    log(f"budget {budget.bytes / 2**30:.2f} GiB ({budget.source}); {budget.enforcement}")
    if found is not None and (found.total > budget.bytes or inputs.pool_too_small):
        rows["memory"] = memory_row(inputs)  # over the budget, or a vLLM pool vLLM would refuse while loading
        return _fill(rows, not_run, "pre-flight's estimate does not fit the budget"), extra

    rows.update(_train_and_measure(script_args, training_args, model_args, inputs, gpu, opts, extra, config_lr, budget))
    return _fill(rows, not_run, "another check failed"), extra


def parse_on_this_machine(argv: list[str], cuda: bool):
    """(the config as train/grpo.py reads it, whether it is a GPU recipe).

    Without a GPU, transformers refuses a bf16 config as it parses it; the config is then read as its
    CPU variant (``--bf16 false --use_cpu true``), so that the environment row can say what this
    machine lacks, in the table, rather than the run ending on the parser's error.
    """
    try:
        parsed = parse_config(argv)
        return parsed, not parsed[1].use_cpu
    except ConfigError as refused:
        if cuda:
            raise
        first = refused
    try:
        return parse_config([*argv, "--bf16", "false", "--use_cpu", "true"]), True
    except ConfigError:  # not (only) the missing GPU: the error train/grpo.py would give
        raise first from None


def _fill(rows: dict[str, Row], not_run, reason: str) -> list[Row]:
    return [rows.get(name) or not_run(name, reason) for name in CHECKS]


def _train_and_measure(
    script_args, training_args, model_args, inputs, gpu, opts, extra, config_lr, budget=None
) -> dict[str, Row]:
    # lazy: timing imports transformers (~5 s; 44 s under load): scripts/check_gpu.py --help must not
    from train.gpu_check.timing import StepClock, StepTimes, time_rollouts

    rows: dict[str, Row] = {}
    meter = memory.PeakMeter(gpu, budget)
    meter.start()
    log("building the trainer (train/grpo.py build_trainer) and its vLLM engine")
    start = time.perf_counter()
    try:
        trainer, _, _ = grpo.build_trainer(script_args, training_args, model_args)
    except ConfigError as exc:  # train/grpo.py's own pre-flight refused it: its message says what to change
        meter.stop()
        rows["GRPO steps"] = Row("GRPO steps", "-", FAIL, "train/grpo.py refuses this config before loading", str(exc))
        return rows
    except (RuntimeError, ValueError) as exc:  # the policy or vLLM's pool did not fit while loading (else: not ours)
        first_line, refusal = cuda_out_of_memory(exc), vllm_pool_refusal(exc)
        measured = meter.stop()
        if refusal is not None:  # vLLM's own "No available memory for the cache blocks" and its kin
            rows["memory"] = memory_row(dataclasses.replace(inputs, peak=measured["peak"], vllm_refusal=refusal))
            return rows
        if first_line is None:
            raise
        oom = f"while loading: {first_line}"
        rows["memory"] = memory_row(dataclasses.replace(inputs, peak=measured["peak"], out_of_memory=oom))
        return rows
    extra["trainer_build_s"] = time.perf_counter() - start
    meter.start_sampling()  # only now: vLLM has captured its CUDA graphs (a sampling thread could break a capture)
    stop_watching = None
    try:
        engine = trainer.rollout_engine
        # each sleep and wake-up of vLLM ends a phase of the meter and re-sets the cap (what sleep unmapped)
        stop_watching = memory.watch_sleep(engine.llm, meter) if gpu else None
        times = StepTimes()
        trainer.add_callback(StepClock(times))
        stop_timing = time_rollouts(engine, times)
        log(f"training {opts.steps} steps")
        out_of_memory = None
        try:
            trainer.train()
        except RuntimeError as exc:  # torch.OutOfMemoryError, or vLLM's wake-up allocator's RuntimeError
            out_of_memory = cuda_out_of_memory(exc)
            if out_of_memory is None:
                raise
        finally:
            stop_timing()
            measured = meter.stop()
        extra["memory_measured"] = measured
        extra["vllm_pool"] = vllm_pool(engine)
        extra["log_history"] = trainer.state.log_history
        rows["memory"] = memory_row(
            dataclasses.replace(inputs, peak=measured["peak"], run=measured["run"], out_of_memory=out_of_memory)
        )
        if out_of_memory:
            return rows
        rows["GRPO steps"] = steps_row(
            times.summary(), (training_args.learning_rate, config_lr), extra.get("held_out_evals_off")
        )

        try:
            _after_training(rows, trainer, engine, training_args, model_args, gpu, opts)
        except RuntimeError as exc:  # waking vLLM for the on-policy check or the speed comparison can run out too
            oom = cuda_out_of_memory(exc)
            if oom is None:
                raise
            phase = "on-policy" if "on-policy" not in rows else "rollout speed"
            after = f"after the steps, in the {phase} check: {oom}"
            rows["memory"] = memory_row(
                dataclasses.replace(inputs, peak=measured["peak"], run=measured["run"], out_of_memory=after)
            )
    finally:
        if stop_watching is not None:
            stop_watching()
        trainer.close_rollout_engine()
    return rows


def _after_training(rows, trainer, engine, training_args, model_args, gpu, opts) -> None:
    """The on-policy row, then the rollout-speed row, on the trained policy (each added to ``rows`` as it is made)."""
    log("on-policy check (scores one completion with the policy, the stale adapter and the synced one)")
    grad_norm = next((float(e["grad_norm"]) for e in reversed(trainer.state.log_history) if "grad_norm" in e), None)
    rows["on-policy"] = on_policy_row(on_policy.measure(trainer, engine, model_args), grad_norm)

    log("rollout speed: the engine against transformers generate + peft")
    per_batch = max(1, training_args.per_device_train_batch_size // training_args.num_generations)
    dataset = trainer.train_dataset
    prompts = rollout_speed.chat_prompt_ids(
        trainer.processing_class, [dataset[i]["prompt"] for i in range(min(per_batch, len(dataset)))]
    )
    sampling = rollout_speed.Sampling(
        max_tokens=training_args.max_completion_length,
        temperature=training_args.temperature,
        top_p=training_args.top_p,
        top_k=training_args.top_k or 0,
    )
    speed = rollout_speed.compare(
        trainer.model, trainer.processing_class, engine, prompts, training_args.num_generations, sampling,
        opts.speed_rounds,
    )  # fmt: skip
    rows["rollout speed"] = speed_row(speed, gpu)


def vllm_pool(engine) -> dict:
    """What vLLM reports about its pool: the utilization it ran with and its KV cache (blocks x block size)."""
    try:
        cache = cache_config(engine.llm)
    except AttributeError as exc:  # not a colocated vLLM engine, or vLLM moved its config
        return {"unavailable": str(exc)}
    blocks = cache.num_gpu_blocks
    return {
        "gpu_memory_utilization": cache.gpu_memory_utilization,
        "kv_cache_blocks": blocks,
        "block_size": cache.block_size,
        "kv_cache_tokens": blocks * cache.block_size if blocks else None,
    }


def cli(argv: list[str] | None = None) -> int:
    opts, overrides = parse_args(argv)
    out = Path(opts.out or Path("runs") / "gpu-check" / Path(opts.config).stem)
    cap = f", cap {opts.memory_cap:g} GiB" if opts.memory_cap is not None else ""
    title = f"GPU check: {opts.config}, {opts.steps} step{'s' if opts.steps > 1 else ''}{cap}"
    try:
        rows, extra = check(opts, overrides, out)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    history = extra.pop("log_history", None)
    print()
    print(report.text(rows, title))
    as_json, as_markdown = report.write(rows, title, out, extra)
    if history is not None:
        (out / "log_history.json").write_text(json.dumps(history, indent=1))
    print(f"\nwritten: {as_json}, {as_markdown}")
    return report.exit_code(rows)
