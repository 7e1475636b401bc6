"""Harness overhead, reward cost and rollout-logging cost, in one run.

    python scripts/bench_train.py [--steps 4] [--rounds 1]
    python scripts/bench_train.py --burners 2 [--steps 3]     # a busy machine: step time loaded / quiet
    python scripts/bench_train.py --profile [--steps 4] [-- --cache_implementation static ...]  # a step's split
    python scripts/bench_train.py --profile-eval 50            # where an eval's time goes

Trains the CPU default (SmolLM2-135M, 4-bit + LoRA) three ways on the same problems with the same
GRPOConfig, alternating within each round so machine noise hits all three: train/grpo.py with
rollout logging on, a minimal direct GRPOTrainer script, and train/grpo.py with rollout logging off.
Prints seconds per step (TRL's own step_time, first step excluded as warm-up), the ratio
direct/harness (target >= 0.95), the share of step time spent in the reward functions (target
<= 1 %), the time spent recording and writing rollout logs as a share of step time (target <= 2 %;
measured directly, since 2 % is far below the step-to-step noise of a shared CPU), and the size of
the rollout logs per 1,000 rollouts.

``--profile`` prints the CPU kind first (torch's capability, native bf16 or not: ``cpu/capability.py``), then splits
each GRPO step of the CPU default into generation, the logprob forward, backward,
optimizer, rewards, rollout logging, trainer logging and the rest (TRL's own profiling hooks plus timers
on backward, the optimizer and the recorder), and then times plain transformers on the trainer's own
model and batch (``generate`` with the trainer's generation config; one forward + backward over the same
sequences): tokens/s of each phase, TRL against plain, in the same run. ``--profile-eval N`` does the
same for an eval: N held-out problems through Inspect (``verigrpo/``, with and without the shared-prefix
greedy batch of cpu/greedy_batch.py) against plain ``model.generate`` on the same prompts.

``--burners N`` answers a different question: how much slower is a GRPO step when N other
processes want a whole CPU each? For each thread setting in THREAD_SETTINGS it runs a short training
(a fresh process, so the OpenMP settings apply before torch loads) quiet and then with N busy-loop
processes, and prints the ratio loaded/quiet next to the ratio a fair scheduler predicts from the
CPU share the run keeps. Thread oversubscription (OpenMP threads spinning at a barrier while their
partner is descheduled) shows as a ratio far above the fair one.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from tempfile import TemporaryDirectory

from cpu.bnb_cpu import dequantize_once
from cpu.capability import detect
from evals.providers.checkpoint_eval import checkpoint_model_args, run_eval
from problems.domains import DOMAINS
from problems.math_data import procedural_arithmetic
from rewards import build_messages, correctness, format_reward
from train.config import parse_config

# train/grpo.py sets GOMP_SPINCOUNT when imported, so it is imported in the functions that train, after --burners'
# child has imported torch with the environment under test; the trainer, TRL's seams, the rollout log and the
# checkpoint provider load TRL, transformers or Inspect (tens of seconds: --help loads none of them).

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "configs" / "cpu-smollm2.yaml"

SECONDS = {"rewards": 0.0, "rollout_logging": 0.0}


def timed_into(bucket: str, func):
    @functools.wraps(func)  # keeps __name__, so TRL logs the same reward keys
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            SECONDS[bucket] += time.perf_counter() - start

    return wrapper


def config(output_dir: str, steps: int, *extra: str):
    return parse_config(
        ["--config", str(CONFIG), "--output_dir", output_dir, "--max_steps", str(steps)]
        + ["--save_strategy", "no", "--logging_steps", "1", *extra]
    )


def step_times(log_history: list[dict]) -> list[float]:
    return [float(e["step_time"]) for e in log_history if "step_time" in e][1:]


def run_harness(steps: int, log_rollouts: bool) -> dict:
    """train/grpo.py main(), with the reward functions and the rollout recorder timed."""
    from inspect_ai.log import read_eval_log

    # lazy: Inspect, TRL; train/grpo.py sets GOMP_SPINCOUNT
    from train.artifacts.rollout_log import RolloutRecorder
    from train.grpo import main
    from train.trainer import RecordingGRPOTrainer

    tables = [domain.rewards for domain in DOMAINS.values()]  # the rows' reward tables, timed in place
    originals = [dict(table) for table in tables]
    patched = {
        (RecordingGRPOTrainer, "_record"): RecordingGRPOTrainer._record,
        (RolloutRecorder, "flush"): RolloutRecorder.flush,
    }
    for table, original in zip(tables, originals):
        table.update({name: timed_into("rewards", func) for name, func in original.items()})
    for (cls, attr), method in patched.items():
        setattr(cls, attr, timed_into("rollout_logging", method))
    SECONDS.update(rewards=0.0, rollout_logging=0.0)
    try:
        with TemporaryDirectory() as out:
            flags = ("--log_rollouts", str(log_rollouts).lower(), "--rollout_log_steps", "2")
            result = main(*config(out, steps, *flags))
            files = list(Path(out, "rollouts").glob("*.eval"))
            logged = sum(len(read_eval_log(str(f)).samples) for f in files)
            size = sum(f.stat().st_size for f in files)
    finally:
        for table, original in zip(tables, originals):
            table.update(original)
        for (cls, attr), method in patched.items():
            setattr(cls, attr, method)
    return {"steps": step_times(result["log_history"]), **SECONDS, "logged": logged, "bytes": size}


def run_direct(steps: int) -> list[float]:
    """What a user would write with TRL alone: same model, data, prompt, rewards and settings."""
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import BitsAndBytesConfig
    from trl import GRPOTrainer

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


def describe(label: str, times: list[float]) -> str:
    return f"{label:34s} {statistics.mean(times):6.2f} s/step (n={len(times)}, median {statistics.median(times):.2f})"


# ---- a busy machine ---------------------------------------------------------------------------

# environment for the training process; applied before torch (and its OpenMP runtime) loads
THREAD_SETTINGS = {
    "GOMP_SPINCOUNT=10000 (train/grpo.py)": {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": "10000"},
    "OMP_WAIT_POLICY=PASSIVE": {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": None},
    "PASSIVE, 1 intra-op thread": {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": None, "OMP_NUM_THREADS": "1"},
    "torch default (OpenMP spin-waits)": {"OMP_WAIT_POLICY": None, "GOMP_SPINCOUNT": None},
}
# a short step: the ratio matters here, not the default config's absolute time
SMALL_STEP = ["--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "24"]


def _burn() -> None:
    while True:
        pass


def child_step_times(steps: int) -> None:
    """Run in a fresh process: train ``steps`` small steps and print their times as JSON."""
    import torch  # noqa: F401 - loads OpenMP with this process's environment, before train/grpo.py can set it

    from train.grpo import main as train_main  # lazy: it sets GOMP_SPINCOUNT, after torch loaded under test

    with TemporaryDirectory() as out:
        result = train_main(*config(out, steps, "--log_rollouts", "false", *SMALL_STEP))
    print("STEP_TIMES " + json.dumps(step_times(result["log_history"])), flush=True)


def timed_child(steps: int, env_changes: dict, burners: int, timeout: float) -> float | None:
    """Median seconds per step (first step excluded) of a fresh training process; None past ``timeout``."""
    env = dict(os.environ)
    for key, value in env_changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    procs = [multiprocessing.Process(target=_burn, daemon=True) for _ in range(burners)]
    for proc in procs:
        proc.start()
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--child", "--steps", str(steps)],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    finally:
        for proc in procs:
            proc.terminate()
            proc.join()
    lines = [line for line in out.stdout.splitlines() if line.startswith("STEP_TIMES ")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"benchmark child failed (rc {out.returncode}):\n{out.stderr[-3000:]}")
    return statistics.median(json.loads(lines[-1].removeprefix("STEP_TIMES ")))


def _seconds(value: float | None, timeout: float) -> str:
    return f"{value:.2f}" if value is not None else f"> {timeout:.0f} total"


def busy_machine(steps: int, burners: int, timeout: float, only: str | None = None) -> None:
    cores = len(os.sched_getaffinity(0))
    # the run's threads (torch's intra-op pool, one per core) and the burners share the cores fairly
    fair = max(1.0, (burners + cores) / cores)
    print(f"{cores} cores, {burners} burners, load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'thread setting':44s} {'quiet s/step':>12s} {'loaded s/step':>13s} {'ratio':>6s} {'fair':>5s}")
    for label, env_changes in THREAD_SETTINGS.items():
        if only and only not in label:
            continue
        quiet = timed_child(steps, env_changes, 0, timeout)
        loaded = timed_child(steps, env_changes, burners, timeout)
        ratio = f"{loaded / quiet:6.2f}" if quiet and loaded else "     -"
        print(
            f"{label:44s} {_seconds(quiet, timeout):>12s} {_seconds(loaded, timeout):>13s} {ratio} {fair:5.2f}"
            f"   (load average now {os.getloadavg()[0]:.1f})",
            flush=True,
        )


# ---- where a step's time goes ------------------------------------------------------------------

# TRL's profiling names (profiling_context / profiling_decorator) -> phase
TRL_PHASES = {
    "transformers.generate": "generation",
    "_get_per_token_logps_and_entropies": "logprob forward",
    "_calculate_rewards": "rewards",
}
PHASES = (
    "generation",
    "logprob forward",
    "backward",
    "optimizer",
    "rewards",
    "rollout logging",
    "trainer logging",
)


def profile_training(steps: int, overrides: list[str]) -> tuple[list[dict], object]:
    """Train ``steps`` steps of the CPU default (plus ``overrides``, config keys as train/grpo.py takes them)
    through train/grpo.py's own trainer with each phase timed.

    Returns one dict per step (phase -> seconds, plus ``step`` for the whole step and the step's token
    counts) and the trainer (its model is then timed in plain transformers)."""
    from transformers import TrainerCallback

    # lazy: TRL; train/grpo.py sets GOMP_SPINCOUNT
    from train.grpo import build_trainer
    from train.trl_seams import profiled_phases

    current: dict = defaultdict(float)

    def record(name: str, duration: float) -> None:
        phase = TRL_PHASES.get(name.split(".", 1)[-1])
        if phase:
            current[phase] += duration

    def timed(phase: str, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                current[phase] += time.perf_counter() - start

        return wrapper

    per_step: list[dict] = []

    class StepTimer(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):
            current.clear()
            self.start = time.perf_counter()

        def on_pre_optimizer_step(self, args, state, control, **kwargs):
            self.optimizer = time.perf_counter()

        def on_optimizer_step(self, args, state, control, **kwargs):
            current["optimizer"] += time.perf_counter() - self.optimizer

        def on_step_end(self, args, state, control, **kwargs):
            per_step.append({**current, "step": time.perf_counter() - self.start})

    with profiled_phases(record), TemporaryDirectory() as out:
        trainer, recorder, _ = build_trainer(*config(out, steps, *overrides))
        trainer.accelerator.backward = timed("backward", trainer.accelerator.backward)
        trainer.log = timed("trainer logging", trainer.log)
        if recorder is not None:
            trainer._record = timed("rollout logging", trainer._record)
            recorder.flush = timed("rollout logging", recorder.flush)
        trainer.add_callback(StepTimer())
        trainer.train()
    batch = trainer.args.per_device_train_batch_size
    logged = [e for e in trainer.state.log_history if "completions/mean_length" in e]
    previous = 0
    for entry, step in zip(logged, per_step):
        step["completion tokens"] = entry["completions/mean_length"] * batch
        step["all tokens"] = entry["num_tokens"] - previous  # prompts (padded) + completions
        previous = entry["num_tokens"]
    return per_step, trainer


def plain_transformers(trainer) -> dict:
    """The trainer's model, prompts and generation config in plain transformers: one ``generate`` of a step's
    batch, then one forward (completion log-probs, as the GRPO loss needs) and backward over the result."""
    import torch

    model, tokenizer = trainer.model, trainer.processing_class
    rows = [
        trainer.train_dataset[i] for i in range(trainer.args.per_device_train_batch_size // trainer.num_generations)
    ]
    prompts = [
        tokenizer.apply_chat_template(row["prompt"], tokenize=False, add_generation_prompt=True)
        for row in rows
        for _ in range(trainer.num_generations)
    ]
    tokenizer.padding_side = "left"
    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    model.eval()
    start = time.perf_counter()
    with torch.no_grad():
        sequences = model.generate(**batch, generation_config=trainer.generation_config)
    generate_s = time.perf_counter() - start
    completions = sequences[:, batch["input_ids"].size(1) :]
    pad = tokenizer.pad_token_id
    completion_mask = (completions != pad).long()
    model.train()
    mask = torch.cat([batch["attention_mask"], completion_mask], dim=1)
    start = time.perf_counter()
    out = model(input_ids=sequences, attention_mask=mask, logits_to_keep=completions.size(1) + 1)
    logps = torch.log_softmax(out.logits[:, :-1].float(), dim=-1).gather(-1, completions[..., None]).squeeze(-1)
    loss = -(logps * completion_mask).sum() / completion_mask.sum()
    forward_s = time.perf_counter() - start
    start = time.perf_counter()
    loss.backward()
    backward_s = time.perf_counter() - start
    model.zero_grad(set_to_none=True)
    return {
        "generate_s": generate_s,
        "forward_s": forward_s,
        "backward_s": backward_s,
        "completion tokens": int(completion_mask.sum()),
        "all tokens": int(mask.sum()),
    }


def cpu_line() -> str:
    """The CPU kind a profile ran on (a step's split differs by kind: docs/benchmarks.md), its threads and load."""
    import torch

    kind = detect()
    return (
        f"CPU: {kind.describe()} (torch capability {kind.capability}); {torch.get_num_threads()} threads on "
        f"{len(os.sched_getaffinity(0))} cores; load average {os.getloadavg()[0]:.1f}"
    )


def print_profile(per_step: list[dict], plain: dict) -> None:
    steps = per_step[1:] or per_step  # the first step warms up
    n = len(steps)

    def mean(key: str) -> float:
        return sum(s.get(key, 0.0) for s in steps) / n

    total = mean("step")
    print(f"\nGRPO step split (mean of {n} steps after the first; {total:.2f} s/step):")
    accounted = 0.0
    for phase in PHASES:
        seconds = mean(phase)
        accounted += seconds
        print(f"  {phase:18s} {seconds:7.2f} s  {100 * seconds / total:5.1f} %")
    print(f"  {'other':18s} {total - accounted:7.2f} s  {100 * (total - accounted) / total:5.1f} %")
    completion, everything = mean("completion tokens"), mean("all tokens")
    rows = (
        ("generation", completion, mean("generation"), plain["completion tokens"], plain["generate_s"]),
        ("logprob forward", everything, mean("logprob forward"), plain["all tokens"], plain["forward_s"]),
        ("backward", everything, mean("backward"), plain["all tokens"], plain["backward_s"]),
        (
            "forward + backward",
            everything,
            mean("logprob forward") + mean("backward"),
            plain["all tokens"],
            plain["forward_s"] + plain["backward_s"],
        ),
    )
    print("\ntokens/s, this run (generation counts completion tokens; forward/backward prompt + completion):")
    print(f"  {'phase':18s} {'GRPO step':>10s} {'plain transformers':>19s} {'ratio':>6s}")
    for phase, tokens, seconds, plain_tokens, plain_seconds in rows:
        ours, theirs = tokens / seconds, plain_tokens / plain_seconds
        print(f"  {phase:18s} {ours:10.1f} {theirs:19.1f} {ours / theirs:6.2f}")


def profile_eval(problems: int, config_path: str, max_tokens: int) -> None:
    """One eval of the policy before training (4-bit, as the demo runs it) three ways, alternating nothing:
    Inspect + shared-prefix greedy batch, Inspect + transformers' generate, and plain ``model.generate``."""
    import torch

    sys.path.insert(0, str(REPO / "scripts"))
    import demo

    from evals.providers.checkpoint_model import loading_args  # lazy: torch, TRL, Inspect

    with TemporaryDirectory() as tmp:
        initial = demo.write_initial_policy(config_path, Path(tmp) / "initial")
        task_args = demo.eval_task_args(config_path, problems, max_tokens)
        task = demo.eval_task(task_args)
        results = {}
        for label, extra in (
            ("Inspect, shared-prefix greedy", {}),
            ("Inspect, transformers generate", {"shared_prefix": False}),
        ):
            start = time.perf_counter()
            log = run_eval(task, f"verigrpo/{initial}", {**checkpoint_model_args(True), **extra}, Path(tmp) / "logs")
            seconds = time.perf_counter() - start
            results[label] = (seconds, [s.output.completion for s in log.samples])
        from peft import PeftModel
        from transformers import AutoModelForCausalLM, AutoTokenizer

        args = loading_args(initial, "trained")
        base = AutoModelForCausalLM.from_pretrained(
            json.loads((initial / "adapter_config.json").read_text())["base_model_name_or_path"], **args
        )
        model = PeftModel.from_pretrained(base, initial).eval()
        dequantize_once(model)  # as the verigrpo/ provider computes the 4-bit policy (cpu/bnb_cpu.py)
        tokenizer = AutoTokenizer.from_pretrained(initial, padding_side="left")
        prompts = [
            tokenizer.apply_chat_template(
                [{"role": m.role, "content": m.text} for m in s.input], tokenize=False, add_generation_prompt=True
            )
            for s in task.dataset
        ]
        batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(
                **batch, do_sample=False, max_new_tokens=max_tokens, pad_token_id=tokenizer.pad_token_id
            )
        seconds = time.perf_counter() - start
        texts = tokenizer.batch_decode(out[:, batch["input_ids"].size(1) :], skip_special_tokens=True)
        results["plain transformers generate (one batch)"] = (seconds, texts)
    print(f"\neval of {problems} problems (4-bit policy before training, greedy, max {max_tokens} tokens):")
    print(f"  {'':42s} {'seconds':>8s} {'tokens/s':>9s}")
    for label, (seconds, texts) in results.items():
        tokens = sum(len(tokenizer(t, add_special_tokens=False).input_ids) + 1 for t in texts)
        print(f"  {label:42s} {seconds:8.1f} {tokens / seconds:9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--burners", type=int, default=None, help="busy-machine mode: N CPU burner processes")
    parser.add_argument("--timeout", type=float, default=900, help="busy-machine mode: seconds per training run")
    parser.add_argument("--only", default=None, help="busy-machine mode: thread settings whose label contains this")
    parser.add_argument("--profile", action="store_true", help="split a GRPO step into its phases")
    parser.add_argument("--profile-eval", type=int, default=None, metavar="N", help="time an eval of N problems")
    parser.add_argument("--eval-max-tokens", type=int, default=None)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args, overrides = parser.parse_known_args()
    if overrides and not args.profile:
        parser.error(f"unrecognized arguments: {' '.join(overrides)}")
    overrides = [o for o in overrides if o != "--"]
    if args.profile:
        print(cpu_line(), flush=True)
        per_step, trainer = profile_training(args.steps, overrides)
        print_profile(per_step, plain_transformers(trainer))
        return
    if args.profile_eval is not None:
        profile_eval(args.profile_eval, str(CONFIG), args.eval_max_tokens)
        return
    if args.child:
        child_step_times(args.steps)
        return
    if args.burners is not None:
        busy_machine(args.steps, args.burners, args.timeout, args.only)
        return
    logging_on, direct, logging_off = [], [], []
    totals = {"rewards": 0.0, "rollout_logging": 0.0, "logged": 0, "bytes": 0}
    for round_index in range(args.rounds):
        run = run_harness(args.steps, log_rollouts=True)
        logging_on += run["steps"]
        for key in totals:
            totals[key] += run[key]
        direct += run_direct(args.steps)
        logging_off += run_harness(args.steps, log_rollouts=False)["steps"]
        print(f"round {round_index + 1} done", flush=True)

    on, off, d = (statistics.mean(x) for x in (logging_on, logging_off, direct))
    step_seconds = on * args.steps * args.rounds  # all steps of the logging-on runs, warm-up included
    print()
    print(describe("train/grpo.py, rollout logs on", logging_on))
    print(describe("train/grpo.py, rollout logs off", logging_off))
    print(describe("direct GRPOTrainer script", direct))
    print(f"ratio direct/harness: {d / off:.3f} (logs off), {d / on:.3f} (logs on); target >= 0.95")
    print(
        f"reward functions: {totals['rewards']:.2f} s = {100 * totals['rewards'] / step_seconds:.2f} % of step time; target <= 1 %"
    )
    per_thousand = totals["bytes"] / max(totals["logged"], 1) * 1000 / 1024
    print(
        f"rollout logging: {totals['rollout_logging']:.2f} s = {100 * totals['rollout_logging'] / step_seconds:.2f} % "
        f"of step time (target <= 2 %); {totals['logged']} rollouts, {per_thousand:.0f} KiB per 1,000 rollouts"
    )


if __name__ == "__main__":
    main()
