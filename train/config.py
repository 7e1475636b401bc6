"""What `train/grpo.py --config X.yaml` accepts, and every check that can fail before a model loads.

TRL's ``TrlParser`` reads three dataclasses: ``ScriptArguments`` (here: data, rewards, prompt),
``GRPOConfig`` and ``ModelConfig`` (TRL's own). Unknown keys in the YAML or on the command line
are errors. ``validate`` turns each impossible or risky combination into one paragraph naming
the key and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evals.math_data import SOURCES as MATH_SOURCES
from rewards import REWARD_FUNCS
from train.vllm_checks import VLLMConfigError, check_vllm

# "code": the bundled code problems (or dataset_path in that format), rewarded by code_tests.
SOURCES = (*MATH_SOURCES, "code")
CODE_REWARDS = frozenset({"code_tests"})  # need dataset: code
MATH_REWARDS = frozenset({"correctness", "format"})  # need a math dataset


class ConfigError(ValueError):
    """A configuration the trainer refuses, with the key and the fix in the message."""


@dataclass
class ScriptArguments:
    """Data, reward and prompt options (model and optimizer options live in ModelConfig / GRPOConfig)."""

    dataset: str = field(default="arithmetic", metadata={"help": f"one of {', '.join(SOURCES)}"})
    dataset_path: str | None = field(
        default=None,
        metadata={"help": "local file for jsonl/json/code (or gsm8k/math500); code defaults to the bundled set"},
    )
    dataset_split: str = field(default="train", metadata={"help": "split to train on (arithmetic: train or test)"})
    dataset_size: int | None = field(default=None, metadata={"help": "arithmetic: problems generated; else limit"})
    dataset_seed: int = field(default=0, metadata={"help": "seed for generation and shuffling"})
    arithmetic_operations: list[str] = field(default_factory=lambda: ["add", "sub", "mul"])
    arithmetic_min_value: int = 1
    arithmetic_max_value: int = 20
    arithmetic_steps: int = 1
    num_shots: int = field(default=1, metadata={"help": "worked examples in the prompt (rewards.WORKED_EXAMPLES)"})
    reward_funcs: list[str] = field(
        default_factory=lambda: ["correctness", "format"], metadata={"help": f"names from {sorted(REWARD_FUNCS)}"}
    )
    log_rollouts: bool = field(
        default=True, metadata={"help": "write every rollout to <output_dir>/rollouts/*.eval (Inspect logs)"}
    )
    rollout_log_steps: int = field(
        default=10, metadata={"help": "steps per rollout log file (also written at each save)"}
    )


def parse_config(argv: list[str] | None = None):
    """(ScriptArguments, GRPOConfig, ModelConfig) from ``--config file.yaml`` plus CLI overrides."""
    from trl import GRPOConfig, ModelConfig, TrlParser

    parser = TrlParser((ScriptArguments, GRPOConfig, ModelConfig))
    try:
        return parser.parse_args_and_config(args=argv)
    except ValueError as exc:
        raise ConfigError(_explain(str(exc))) from None


def _explain(message: str) -> str:
    if "Unknown arguments from config file" in message:
        return f"{message.split('. Please')[0]}. Remove or rename them; `python train/grpo.py --help` lists every key."
    if "not used by the HfArgumentParser" in message:
        unknown = message.split(": ", 1)[1]
        return f"unknown command-line option(s) {unknown}. `python train/grpo.py --help` lists every key."
    if "must be divisible by num_generations" in message:
        return (
            f"{message} Each optimizer step needs whole groups of completions: make per_device_train_batch_size "
            "x gradient_accumulation_steps (or generation_batch_size) a multiple of num_generations."
        )
    return f"invalid configuration: {message}"


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def validate(script_args: ScriptArguments, training_args, model_args) -> None:
    """Every check that does not need the model: run before anything heavy is loaded."""
    unknown = [name for name in script_args.reward_funcs if name not in REWARD_FUNCS]
    if unknown:
        raise ConfigError(
            f"reward_funcs: unknown reward function(s) {unknown}. Valid names are {sorted(REWARD_FUNCS)}, "
            "e.g. `reward_funcs: [correctness, format]`."
        )
    weights = training_args.reward_weights
    if weights is not None and len(weights) != len(script_args.reward_funcs):
        raise ConfigError(
            f"reward_weights has {len(weights)} entries but reward_funcs has {len(script_args.reward_funcs)}: "
            "give one weight per reward function (e.g. `reward_weights: [1.0, 0.0]` to log format without training on it)."
        )
    if script_args.dataset not in SOURCES:
        raise ConfigError(f"dataset: {script_args.dataset!r} is not one of {list(SOURCES)}.")
    is_code = script_args.dataset == "code"
    mismatched = [n for n in script_args.reward_funcs if n in (MATH_REWARDS if is_code else CODE_REWARDS)]
    if mismatched:
        kind = "a code dataset (dataset: code)" if not is_code else "a math dataset"
        raise ConfigError(
            f"reward_funcs {mismatched} cannot score dataset {script_args.dataset!r}: they need {kind}. "
            + (
                "Use `reward_funcs: [code_tests]` for code."
                if is_code
                else "Use `reward_funcs: [correctness, format]` for math."
            )
        )
    if is_code and script_args.num_shots:
        raise ConfigError("num_shots: worked examples are math-only; set `num_shots: 0` with dataset: code.")
    if is_code:
        from rewards.sandbox import _probe

        problem = _probe()
        if problem:
            raise ConfigError(f"dataset: code runs unit tests in a sandbox, which is unavailable here: {problem}")
    if script_args.dataset in ("jsonl", "json") and not script_args.dataset_path:
        raise ConfigError(f"dataset: {script_args.dataset!r} needs dataset_path pointing at the file.")
    if script_args.dataset_path and not Path(script_args.dataset_path).is_file():
        raise ConfigError(
            f"dataset_path: {script_args.dataset_path} does not exist (resolved: {Path(script_args.dataset_path).resolve()})."
        )
    if not model_args.model_name_or_path:
        raise ConfigError("model_name_or_path is required (a local checkpoint directory or a Hub model id).")
    path = model_args.model_name_or_path
    if (path.startswith((".", "/", "models/")) or Path(path).exists()) and not Path(path, "config.json").is_file():
        raise ConfigError(
            f"model_name_or_path: {path} is not a checkpoint directory (no config.json). For the CPU default run "
            "`python scripts/prepare_cpu_model.py` (or `make setup`) first."
        )
    try:
        check_vllm(script_args, training_args, model_args)  # the rollout engine's checks: train/vllm_checks.py
    except VLLMConfigError as exc:
        raise ConfigError(str(exc)) from None
    if training_args.fp16 and not _cuda_available():
        raise ConfigError("fp16: mixed precision fp16 needs a GPU. Set fp16: false (or bf16: true) on CPU.")
    if model_args.load_in_4bit and model_args.load_in_8bit:
        raise ConfigError("load_in_4bit and load_in_8bit are both set: choose one.")
    if (model_args.load_in_4bit or model_args.load_in_8bit) and not model_args.use_peft:
        raise ConfigError(
            "load_in_4bit/load_in_8bit needs use_peft: true: quantized weights cannot be trained directly, only a "
            "LoRA adapter on top of them."
        )
    if script_args.rollout_log_steps < 1:
        raise ConfigError(f"rollout_log_steps must be >= 1, got {script_args.rollout_log_steps}.")
