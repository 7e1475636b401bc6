"""What `train/grpo.py --config X.yaml` accepts, and every check that can fail before a model loads.

TRL's ``TrlParser`` reads three dataclasses: ``ScriptArguments`` (here: data, rewards, prompt),
``GRPOConfig`` and ``ModelConfig`` (TRL's own). Unknown keys in the YAML or on the command line
are errors. ``validate`` turns each impossible or risky combination into one paragraph naming
the key and the fix.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from evals.domains import DOMAINS, all_sources, domain_of_source, reward_names_elsewhere
from evals.math_data import OPERATIONS as ARITHMETIC_OPERATIONS
from rewards import REWARD_FUNCS, THINK_MODES, WORKED_EXAMPLES
from rewards.registry import unknown_rewards
from train.config.machine_checks import MachineConfigError, check_machine

# one record per answer domain (evals/domains.py): its dataset sources and the rewards that score it
SOURCES = all_sources()  # as of import, for the --dataset help text
CODE_REWARDS = DOMAINS["code"].reward_names  # need dataset: code
MATH_REWARDS = DOMAINS["math"].reward_names  # need a math dataset


MAX_LINE_BYTES = 1 << 20  # one jsonl record (a problem): 1 MiB is ~250k tokens, past any model's context


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
    arithmetic_operations: list[str] = field(
        default_factory=lambda: ["add", "sub", "mul"],
        metadata={"help": f"arithmetic: operations to draw from ({', '.join(ARITHMETIC_OPERATIONS)})"},
    )
    arithmetic_min_value: int = field(default=1, metadata={"help": "arithmetic: smallest operand (>= 0)"})
    arithmetic_max_value: int = field(default=20, metadata={"help": "arithmetic: largest operand (>= min_value)"})
    arithmetic_steps: int = field(default=1, metadata={"help": "arithmetic: operations per problem (>= 1)"})
    num_shots: int = field(
        default=1,
        metadata={"help": f"worked examples in the prompt, 0 to {len(WORKED_EXAMPLES)} (rewards.WORKED_EXAMPLES)"},
    )
    reward_funcs: list[str] = field(
        default_factory=lambda: ["correctness", "format"], metadata={"help": f"names from {sorted(REWARD_FUNCS)}"}
    )
    think: str = field(
        default=THINK_MODES[0],
        metadata={
            "help": f"where the final answer is read ({' | '.join(THINK_MODES)}): after_last_close reads only "
            "text after the last </think>, for reasoning models; the eval scorer's -S think= takes the same value"
        },
    )
    log_rollouts: bool = field(
        default=True, metadata={"help": "write every rollout to <output_dir>/rollouts/*.eval (Inspect logs)"}
    )
    rollout_log_steps: int = field(
        default=10, metadata={"help": "steps per rollout log file (also written at each save)"}
    )
    vllm_server_urls: list[str] = field(
        default_factory=list,
        metadata={
            "help": "vllm_mode: server with a LoRA policy: the vLLM OpenAI servers to roll out on (http://host:port, "
            "prompts spread across them); each loads every new adapter at run time (train/engines/server.py)"
        },
    )
    vllm_adapter_dir: str | None = field(
        default=None,
        metadata={
            "help": "where each adapter version is written for the servers to load (default <output_dir>/vllm-adapters); "
            "servers on other nodes need it on shared storage, at the same path"
        },
    )
    vllm_server_request_timeout: float = field(
        default=600.0, metadata={"help": "seconds one request to a vLLM server may take before the run stops"}
    )
    vllm_server_retries: int = field(
        default=3, metadata={"help": "extra attempts when a vLLM server cannot be connected to (then the run stops)"}
    )


# ---- numeric ranges: every value that would otherwise fail late (or never) --------------------

SEED_MAX = 2**32 - 1  # numpy's seed range: transformers' set_seed seeds numpy too


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _at_least(low):
    return lambda v: _number(v) and v >= low


def _above(low):
    return lambda v: _number(v) and v > low


def _within(low, high, *, open_low=False, open_high=False):
    def ok(v):
        if not _number(v):
            return False
        return (v > low if open_low else v >= low) and (v < high if open_high else v <= high)

    return ok


@dataclass(frozen=True)
class Bound:
    """One numeric key: the test its value must pass and, in words, what that is."""

    key: str
    ok: object  # callable(value) -> bool
    need: str
    optional: bool = False  # None (unset) is allowed


# GRPOConfig keys whose bad values TRL or transformers find late (mid-training, after the model
# loaded) or never (silently training on nonsense); checked before TRL's own __post_init__, which
# divides by some of them (num_generations 0 was a ZeroDivisionError).
GRPO_BOUNDS = (
    Bound("learning_rate", _above(0), "> 0"),
    Bound("per_device_train_batch_size", _at_least(1), ">= 1"),
    Bound("gradient_accumulation_steps", _at_least(1), ">= 1"),
    Bound("num_generations", _at_least(2), ">= 2 (a group needs two completions to have an advantage)"),
    Bound("generation_batch_size", _at_least(1), ">= 1", optional=True),
    Bound("steps_per_generation", _at_least(1), ">= 1", optional=True),
    Bound("num_iterations", _at_least(1), ">= 1"),
    Bound("max_completion_length", _at_least(1), ">= 1 (tokens per completion)"),
    Bound("max_steps", lambda v: v == -1 or _at_least(1)(v), "-1 (train num_train_epochs) or >= 1"),
    Bound("num_train_epochs", _above(0), "> 0"),
    Bound("temperature", _above(0), "> 0 (TRL divides the logits by it)"),
    Bound("top_p", _within(0, 1, open_low=True), "in (0, 1]"),
    Bound("top_k", _at_least(0), ">= 0 (0: off)", optional=True),
    Bound("min_p", _within(0, 1), "in [0, 1]", optional=True),
    Bound("repetition_penalty", _above(0), "> 0 (1: off)"),
    Bound("epsilon", _above(0), "> 0 (the PPO clip range)"),
    Bound("epsilon_high", _above(0), "> 0", optional=True),
    Bound("delta", _above(1), "> 1 (an upper clip on the importance ratio below 1 clips on-policy samples)", True),
    Bound("beta", _at_least(0), ">= 0 (0: no KL term)"),
    Bound("max_grad_norm", _at_least(0), ">= 0 (0: no clipping)"),
    Bound("weight_decay", _at_least(0), ">= 0"),
    Bound("warmup_steps", _at_least(0), ">= 0"),
    Bound("adam_beta1", _within(0, 1, open_high=True), "in [0, 1)"),
    Bound("adam_beta2", _within(0, 1, open_high=True), "in [0, 1)"),
    Bound("adam_epsilon", _above(0), "> 0"),
    Bound("save_steps", _above(0), "> 0 (a fraction below 1 is a share of max_steps)"),
    Bound("logging_steps", _above(0), "> 0"),
    Bound("save_total_limit", _at_least(1), ">= 1", optional=True),
    Bound("seed", _within(0, SEED_MAX), f"in [0, {SEED_MAX}]"),
    Bound("data_seed", _within(0, SEED_MAX), f"in [0, {SEED_MAX}]", optional=True),
)

# every numeric key the project owns (ScriptArguments)
SCRIPT_BOUNDS = (
    Bound("dataset_size", _at_least(1), ">= 1 (leave it unset for the whole dataset)", optional=True),
    Bound("dataset_seed", _within(0, SEED_MAX), f"in [0, {SEED_MAX}]"),
    Bound("arithmetic_min_value", _at_least(0), ">= 0"),
    Bound("arithmetic_max_value", _at_least(0), ">= 0"),
    Bound("arithmetic_steps", _at_least(1), ">= 1"),
    Bound("num_shots", _within(0, len(WORKED_EXAMPLES)), f"0 to {len(WORKED_EXAMPLES)} (rewards.WORKED_EXAMPLES)"),
    Bound("rollout_log_steps", _at_least(1), ">= 1"),
    Bound("vllm_server_request_timeout", _above(0), "> 0 (seconds)"),
    Bound("vllm_server_retries", _within(0, 100), "in [0, 100]"),
)

# TRL's ModelConfig: the LoRA shape
MODEL_BOUNDS = (
    Bound("lora_r", _at_least(1), ">= 1"),
    Bound("lora_alpha", _above(0), "> 0"),
    Bound("lora_dropout", _within(0, 1, open_high=True), "in [0, 1)"),
)


def out_of_range(obj, bounds) -> list[str]:
    """``"key must be ..., got value"`` for every key of ``obj`` that fails its bound."""
    problems = []
    for bound in bounds:
        value = getattr(obj, bound.key, None)
        if value is None and (bound.optional or not hasattr(obj, bound.key)):
            continue
        if not bound.ok(value):
            problems.append(f"{bound.key} must be {bound.need}, got {value!r}")
    return problems


def _refuse(problems: list[str]) -> None:
    if problems:
        raise ConfigError("; ".join(problems) + ". Fix the value(s) in the config or on the command line.")


def _grpo_config_class():
    """GRPOConfig whose ranges are checked before TRL's own __post_init__ runs (and can crash on them).

    Built on first use so that importing this module (and ``--help``) does not import TRL; it is
    then a module attribute, so the trainer can pickle the arguments (training_args.bin).
    """
    cls = globals().get("CheckedGRPOConfig")
    if cls is None:
        from trl import GRPOConfig

        class CheckedGRPOConfig(GRPOConfig):
            def __post_init__(self):
                _refuse(out_of_range(self, GRPO_BOUNDS))
                super().__post_init__()

        CheckedGRPOConfig.__qualname__ = "CheckedGRPOConfig"
        cls = globals()["CheckedGRPOConfig"] = CheckedGRPOConfig
    return cls


def __getattr__(name: str):
    if name == "CheckedGRPOConfig":  # unpickling training_args.bin in a fresh process
        return _grpo_config_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- parsing ------------------------------------------------------------------------------------


def _config_path(argv: list[str]) -> str | None:
    for index, arg in enumerate(argv):
        if arg == "--config" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def parse_config(argv: list[str] | None = None):
    """(ScriptArguments, GRPOConfig, ModelConfig) from ``--config file.yaml`` plus CLI overrides.

    ``-h``/``--help`` prints the project's own options (train/config/cli_help.py) and exits;
    ``--help-all`` prints TRL's full list.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    config = _config_path(argv)
    if config is not None and not Path(config).is_file():
        raise ConfigError(
            f"--config: {config} does not exist (resolved: {Path(config).resolve()}). "
            "The bundled configs are in configs/ (the CPU default: configs/cpu-smollm2.yaml)."
        )
    if "-h" in argv or "--help" in argv:
        from train.config.cli_help import project_help

        print(project_help(config))
        raise SystemExit(0)
    from trl import ModelConfig, TrlParser

    parser = TrlParser((ScriptArguments, _grpo_config_class(), ModelConfig))
    if "--help-all" in argv:
        parser.parse_args_and_config(args=["--help"])  # argparse prints everything and exits 0
    try:
        return parser.parse_args_and_config(args=argv)
    except ConfigError:
        raise
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
    if "doesn't support bf16/gpu" in message:  # transformers' TrainingArguments, which says "assign use_cpu"
        from train.config.machine_checks import CPU_CONFIGS

        return (
            "this is a GPU recipe (bf16: true) and no CUDA GPU is visible. Run it on a GPU; on this machine use "
            f"{CPU_CONFIGS}, or add `--bf16 false --use_cpu true` to run this config on CPU (slow)."
        )
    return f"invalid configuration: {message}"


def _cross_field_problems(script_args: ScriptArguments, training_args) -> list[str]:
    problems = []
    if script_args.arithmetic_min_value > script_args.arithmetic_max_value:
        problems.append(
            f"arithmetic_min_value ({script_args.arithmetic_min_value}) must be <= arithmetic_max_value "
            f"({script_args.arithmetic_max_value})"
        )
    unknown_ops = sorted(set(script_args.arithmetic_operations) - set(ARITHMETIC_OPERATIONS))
    if unknown_ops or not script_args.arithmetic_operations:
        problems.append(
            f"arithmetic_operations must be a non-empty list from {list(ARITHMETIC_OPERATIONS)}, got {unknown_ops or '[]'}"
        )
    weights = training_args.reward_weights
    if weights is not None:
        bad = [w for w in weights if not _number(w) or w < 0]
        if bad:
            problems.append(
                f"reward_weights must be finite and >= 0 (a penalty belongs in the reward function, where the logs "
                f"record it), got {bad}"
            )
        elif not any(weights):
            problems.append("reward_weights are all 0: nothing would be learned; give at least one a positive weight")
    return problems


def check_line_lengths(path: str | Path, limit: int = MAX_LINE_BYTES) -> None:
    """Refuse a line-per-record file with a line over ``limit`` bytes, before anything reads it whole.

    One problem is a question and its answer (or a code prompt and its tests): a line of megabytes
    is a broken export, and would otherwise be loaded, tokenized into a prompt far past any model's
    context and fail (or exhaust memory) only in the first generation. Streams in 1 MiB chunks.
    """
    lineno, length = 1, 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            pieces = chunk.split(b"\n")
            for index, piece in enumerate(pieces):
                length += len(piece)
                if length > limit:
                    raise ConfigError(
                        f"{path}:{lineno}: this line is over {limit:,} bytes (the limit for one record); a problem "
                        "this long is a broken export and would exceed the model's context. Fix or remove the record."
                    )
                if index < len(pieces) - 1:
                    lineno, length = lineno + 1, 0


def _check_servers(script_args: ScriptArguments, training_args, model_args) -> None:
    """vllm_server_urls: well-formed, and only where the server engine uses them (not yet whether they answer)."""
    urls = script_args.vllm_server_urls
    if not urls:
        return
    if not (training_args.use_vllm and training_args.vllm_mode == "server" and model_args.use_peft):
        raise ConfigError(
            "vllm_server_urls is set but this run does not roll out on vLLM servers: they are used with "
            "`use_vllm: true`, `vllm_mode: server` and `use_peft: true`. Set those, or remove vllm_server_urls."
        )
    from train.engines.vllm_server_api import normalize_url

    problems, seen = [], set()
    for url in urls:
        try:
            normal = normalize_url(url)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if normal in seen:
            problems.append(f"vllm_server_urls: {url!r} is listed twice")
        seen.add(normal)
    _refuse(problems)


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def validate(script_args: ScriptArguments, training_args, model_args) -> None:
    """Every check that does not need the model: run before anything heavy is loaded."""
    _refuse(
        out_of_range(script_args, SCRIPT_BOUNDS)
        + out_of_range(training_args, GRPO_BOUNDS)
        + out_of_range(model_args, MODEL_BOUNDS)
        + _cross_field_problems(script_args, training_args)
    )
    unknown = unknown_rewards(script_args.reward_funcs)
    if unknown:
        raise ConfigError(
            f"reward_funcs: unknown reward function(s) {unknown}. Valid names are {sorted(REWARD_FUNCS)}, "
            "e.g. `reward_funcs: [correctness, format]`."
        )
    if script_args.think not in THINK_MODES:
        raise ConfigError(
            f"think: {script_args.think!r} is not an answer-extraction setting. Valid values are "
            f"{' | '.join(THINK_MODES)} (after_last_close for models that reason inside <think>...</think>)."
        )
    weights = training_args.reward_weights
    if weights is not None and len(weights) != len(script_args.reward_funcs):
        raise ConfigError(
            f"reward_weights has {len(weights)} entries but reward_funcs has {len(script_args.reward_funcs)}: "
            "give one weight per reward function (e.g. `reward_weights: [1.0, 0.0]` to log format without training on it)."
        )
    if script_args.dataset not in all_sources():
        raise ConfigError(f"dataset: {script_args.dataset!r} is not one of {list(all_sources())}.")
    domain = domain_of_source(script_args.dataset)
    is_code = domain.name == "code"
    mismatched = [n for n in script_args.reward_funcs if n in reward_names_elsewhere(domain)]
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
        from rewards.sandbox import sandbox_problem

        problem = sandbox_problem()
        if problem:
            raise ConfigError(f"dataset: code runs unit tests in a sandbox, which is unavailable here: {problem}")
    if script_args.dataset in ("jsonl", "json") and not script_args.dataset_path:
        raise ConfigError(f"dataset: {script_args.dataset!r} needs dataset_path pointing at the file.")
    if script_args.dataset_path and not Path(script_args.dataset_path).is_file():
        raise ConfigError(
            f"dataset_path: {script_args.dataset_path} does not exist (resolved: {Path(script_args.dataset_path).resolve()})."
        )
    if script_args.dataset_path and Path(script_args.dataset_path).suffix != ".json":  # .json: one array, any layout
        check_line_lengths(script_args.dataset_path)
    resume = training_args.resume_from_checkpoint
    if resume and not Path(resume, "trainer_state.json").is_file():
        raise ConfigError(
            f"resume_from_checkpoint: {resume} is not a checkpoint (no trainer_state.json; resolved: "
            f"{Path(resume).resolve()}). Give a <output_dir>/checkpoint-N directory of the run to continue."
        )
    if not model_args.model_name_or_path:
        raise ConfigError("model_name_or_path is required (a local checkpoint directory or a Hub model id).")
    path = model_args.model_name_or_path
    if (path.startswith((".", "/", "models/")) or Path(path).exists()) and not Path(path, "config.json").is_file():
        raise ConfigError(
            f"model_name_or_path: {path} is not a checkpoint directory (no config.json). For the CPU default run "
            "`python scripts/prepare_cpu_model.py` (or `make setup`) first."
        )
    _check_servers(script_args, training_args, model_args)
    try:
        check_machine(
            script_args, training_args, model_args
        )  # device, vLLM build, GPU memory: train/config/machine_checks.py
    except MachineConfigError as exc:
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
