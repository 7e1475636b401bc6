"""The keys a run's config holds: ``ScriptArguments`` (data, rewards, prompt, vLLM servers), the range each
numeric key must lie in (``Bound`` tables for ours, TRL's GRPOConfig and ModelConfig), and
``CheckedGRPOConfig``, TRL's GRPOConfig with those ranges checked before TRL's own ``__post_init__``, and
``CheckedModelConfig``, TRL's ModelConfig keeping a one-item ``lora_target_modules`` list a list.

TRL's ``TrlParser`` reads three dataclasses: ``ScriptArguments``, ``GRPOConfig`` and ``ModelConfig``
(``train/config/parsing.py``); ``train/config/validation.py`` checks the combinations.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from problems.domains import all_sources, reward_choices
from problems.math_data import ARITHMETIC_DEFAULTS
from problems.math_data import OPERATIONS as ARITHMETIC_OPERATIONS
from rewards import ANSWER_FORMATS, DEFAULT_ANSWER_FORMAT, THINK_MODES, WORKED_EXAMPLES

SOURCES = all_sources()  # as of import, for the --dataset help text (problems/domains.py: one record per domain)


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
    skip_bad_rows: bool = field(
        default=False,
        metadata={
            "help": "train without the rows of the dataset that cannot be read (counted at start-up, listed in "
            "run.json); false: refuse the file, listing every bad row"
        },
    )
    arithmetic_operations: list[str] = field(
        default_factory=lambda: list(ARITHMETIC_DEFAULTS.operations),
        metadata={"help": f"arithmetic: operations to draw from ({', '.join(ARITHMETIC_OPERATIONS)})"},
    )
    arithmetic_min_value: int = field(
        default=ARITHMETIC_DEFAULTS.min_value, metadata={"help": "arithmetic: smallest operand (>= 0)"}
    )
    arithmetic_max_value: int = field(
        default=ARITHMETIC_DEFAULTS.max_value, metadata={"help": "arithmetic: largest operand (>= min_value)"}
    )
    arithmetic_steps: int = field(
        default=ARITHMETIC_DEFAULTS.steps, metadata={"help": "arithmetic: operations per problem (>= 1)"}
    )
    num_shots: int = field(
        default=1,
        metadata={"help": f"worked examples in the prompt, 0 to {len(WORKED_EXAMPLES)} (rewards.WORKED_EXAMPLES)"},
    )
    reward_funcs: list[str] = field(
        default_factory=lambda: ["correctness", "format"], metadata={"help": f"names from {reward_choices()}"}
    )
    think: str = field(
        default=THINK_MODES[0],
        metadata={
            "help": f"where the final answer is read ({' | '.join(THINK_MODES)}): after_last_close reads only "
            "text after the last </think>, for reasoning models; the eval scorer's -S think= takes the same value"
        },
    )
    answer_format: str = field(
        default=DEFAULT_ANSWER_FORMAT,
        metadata={
            "help": f"the final-answer line the prompt teaches and the rewards read ({' | '.join(ANSWER_FORMATS)}): "
            "answer_line is ANSWER: <value>, minerva is Final Answer: The final answer is $<value>$. I hope it is "
            "correct., gsm8k is #### <value>; the eval task's -T answer_format= takes the same value"
        },
    )
    log_rollouts: bool = field(
        default=True, metadata={"help": "write every rollout to <output_dir>/rollouts/*.eval (Inspect logs)"}
    )
    rollout_log_steps: int = field(
        default=10, metadata={"help": "steps per rollout log file (also written at each save)"}
    )
    eval_problems: int | None = field(
        default=None,
        metadata={
            "help": "held-out problems per eval (with eval_strategy: steps, every eval_steps): the eval task's "
            "limit; unset: the task's default (arithmetic: 50; otherwise the whole held-out split)"
        },
    )
    eval_max_tokens: int | None = field(
        default=None, metadata={"help": "tokens per held-out completion (unset: twice max_completion_length)"}
    )
    eval_dataset_path: str | None = field(
        default=None,
        metadata={
            "help": "held-out problems in the training source's format; needed where the source has no "
            "held-out split (jsonl, json, math500, code; arithmetic and gsm8k use their test split)"
        },
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
    adapter_root: str | None = field(
        default=None,
        metadata={
            "help": "colocated vLLM with a LoRA policy: the directory each adapter version is written to (default: a "
            "temporary directory in /dev/shm when it holds two versions, else on disk; train/engines/adapter_storage.py)"
        },
    )
    vllm_share_base: bool = field(
        default=False,
        metadata={
            "help": "colocated vLLM with a 4-bit LoRA policy: the trainer's 4-bit layers (and embeddings / head) "
            "view vLLM's copy of the base instead of holding their own (train/engines/share_base_views.py); one process, "
            "no sleep mode, no tensor parallelism"
        },
    )
    # ---- run guards (train/guards/, docs/training.md "Watching a run") ----
    on_policy_check_steps: int | None = field(
        default=None,
        metadata={
            "help": "vLLM adapter engines: every this many steps (and at step 0, which calibrates the band) score "
            "fixed probe tokens through the engine and the policy, log on_policy/probe_logp_gap and stop the run "
            "when the gap leaves its band (train/guards/on_policy.py); unset: 10 with an adapter engine; 0: off"
        },
    )
    reward_hacking_window: int = field(
        default=2,
        metadata={
            "help": "with held-out evals: compare each eval with the one this many evals back; the reward-hacking "
            "alarm fires when the training reward rose in between while held-out accuracy did not "
            "(train/guards/reward_hacking.py)"
        },
    )
    log_replay_batches: bool = field(
        default=True,
        metadata={
            "help": "write each step's loss batch to <output_dir>/replay/ so python -m train.replay RUN --step N "
            "recomputes its loss and grad norm from the nearest checkpoint before it, re-running the recorded steps between "
            "(train/replay.py); about 16 bytes per completion token a step"
        },
    )
    stop_on_reward_hacking: bool = field(
        default=False,
        metadata={"help": "stop the run (exit code 4, last step saved) when the reward-hacking alarm fires"},
    )
    exploit_probe: bool = field(
        default=True,
        metadata={
            "help": "before the model loads, play scripted cheats that need no work (the question's numbers side by "
            "side, hedged, listed, the computation restated; problems/exploit_probe.py) on a sample of the training "
            "problems through the run's judging rewards, and stop (exit code 2) when one pays or raises; false: train "
            "anyway (train/config/exploit_preflight.py)"
        },
    )
    overwrite_output_dir: bool = field(
        default=False,
        metadata={
            "help": "start over in an output_dir that holds a previous run: its checkpoints, logs and saved files are "
            "removed before the first step (without it such a directory is refused; train/config/output_dir.py)"
        },
    )
    # ---- tool use (docs/tool-use.md; checked in train/config/tool_checks.py) ----
    tools: list[str] = field(
        default_factory=list,
        metadata={
            "help": "tools the policy may call while it answers: [python] (python_tool/session.py, bwrap sandbox)"
        },
    )
    tool_timeout_s: float = field(default=10.0, metadata={"help": "tools: wall-clock seconds per call (then killed)"})
    tool_memory_mb: int = field(default=512, metadata={"help": "tools: address space per process, MiB"})
    tool_output_chars: int = field(
        default=2000, metadata={"help": "tools: characters of a call's output the policy reads (the rest is cut)"}
    )
    tool_max_calls: int = field(default=4, metadata={"help": "tools: calls per rollout; later calls run nothing"})
    tool_chat_template: str | None = field(
        default=None,
        metadata={
            "help": "tools: a chat template that can call tools, for models whose own cannot: chatml_tools "
            "(python_tool/chat_templates/, with its parser) or a Jinja file"
        },
    )
    # ---- an Inspect task as the data and the reward (docs/inspect-tasks.md; train/config/inspect_task.py) ----
    inspect_task: str | None = field(
        default=None,
        metadata={
            "help": "train on an Inspect task instead of dataset/reward_funcs: FILE.py@NAME, a registry name "
            "(inspect_evals/gsm8k) or package.module:function; prompts from its solver chain, rewards its scorers"
        },
    )
    inspect_task_args: list[str] = field(
        default_factory=list, metadata={"help": "inspect_task's arguments, key=value each (as inspect eval -T)"}
    )
    inspect_held_out: float = field(
        default=0.0,
        metadata={
            "help": "inspect_task: samples held out of training by id (seeded by dataset_seed), a share in (0, 1) "
            "or a count; the held-out evals run the task on them; run.json lists both id sets"
        },
    )
    inspect_sandbox: str | None = field(
        default=None,
        metadata={"help": "inspect_task: run the task's docker/local sandbox in bwrap (its files and setup)"},
    )
    inspect_grader_model: str | None = field(
        default=None,
        metadata={"help": "inspect_task: the grader model a model-graded scorer calls (one call per completion)"},
    )
    inspect_audit_scorer: str | None = field(
        default=None,
        metadata={
            "help": "inspect_task: the reward-hacking alarm's independent judge (e.g. verigrpo/math_verifier): at every "
            "save it re-judges the rollout logs' first reward and warns when paid-but-rejected completions grow "
            "(train/guards/reward_hacking.py)"
        },
    )


# ---- numeric ranges: every value that would otherwise fail late (or never) --------------------

SEED_MAX = 2**32 - 1  # numpy's seed range: transformers' set_seed seeds numpy too


def finite_number(value) -> bool:
    """A real, finite int or float (bool is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _at_least(low):
    return lambda v: finite_number(v) and v >= low


def _above(low):
    return lambda v: finite_number(v) and v > low


def _within(low, high, *, open_low=False, open_high=False):
    def ok(v):
        if not finite_number(v):
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
    # -1 (TRL: train num_train_epochs) passes here and is refused by the parser, with its own reason (parsing.py)
    Bound("max_steps", lambda v: v == -1 or _at_least(1)(v), ">= 1"),
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
    Bound("eval_steps", _above(0), "> 0 (a fraction below 1 is a share of max_steps)", optional=True),
    Bound("eval_delay", _at_least(0), ">= 0"),
    Bound("per_device_eval_batch_size", _at_least(1), ">= 1 (prompts per greedy generate call)"),
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
    Bound("eval_problems", _at_least(1), ">= 1 (leave it unset for the eval task's default)", optional=True),
    Bound("eval_max_tokens", _at_least(1), ">= 1 (tokens per held-out completion)", optional=True),
    Bound("vllm_server_request_timeout", _above(0), "> 0 (seconds)"),
    Bound("vllm_server_retries", _within(0, 100), "in [0, 100]"),
    Bound("on_policy_check_steps", _at_least(0), ">= 0 (0: off)", optional=True),
    Bound("reward_hacking_window", _at_least(1), ">= 1 (held-out evals back)"),
    Bound("inspect_held_out", _at_least(0), ">= 0 (a share in (0, 1) or a count of samples)"),
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


def refuse(problems: list[str]) -> None:
    """One ConfigError naming every problem found, or nothing when there is none."""
    if problems:
        raise ConfigError("; ".join(problems) + ". Fix the value(s) in the config or on the command line.")


def grpo_config_class():
    """GRPOConfig whose ranges are checked before TRL's own __post_init__ runs (and can crash on them).

    Built on first use so that importing this module (and ``--help``) does not import TRL; it is
    then a module attribute, so the trainer can pickle the arguments (training_args.bin).
    """
    cls = globals().get("CheckedGRPOConfig")
    if cls is None:
        from trl import GRPOConfig

        class CheckedGRPOConfig(GRPOConfig):
            def __post_init__(self):
                refuse(out_of_range(self, GRPO_BOUNDS))
                if self.eval_strategy != "no" and self.num_generations_eval is None:
                    # the trainer's evaluation is the held-out Inspect eval (train/artifacts/held_out.py): one
                    # greedy completion per problem, so TRL's eval group size is 1, and per_device_eval_batch_size
                    # (prompts per generate call) need not be a multiple of num_generations
                    self.num_generations_eval = 1
                super().__post_init__()

        CheckedGRPOConfig.__qualname__ = "CheckedGRPOConfig"
        cls = globals()["CheckedGRPOConfig"] = CheckedGRPOConfig
    return cls


# a module name or dotted path as peft matches list items (``q_proj``, ``self_attn.q_proj``): never a regex
MODULE_NAME = re.compile(r"[A-Za-z_]\w*(\.\w+)*")


def model_config_class():
    """TRL's ModelConfig, except that a one-item ``lora_target_modules`` list of a module name stays a list.

    TRL's ``__post_init__`` turns any one-item list into its string (so that ``--lora_target_modules
    all-linear`` reaches peft as the string it knows), and peft reads a string as a regular expression that
    must match a module's *whole* path: ``[q_proj]`` became ``'q_proj'``, matched no module, and the run
    failed after loading the model (peft's NoMatchingPeftModuleError). A list of names means "modules with
    this name" to peft, which is what the config says. ``all-linear`` and regexes keep TRL's conversion.
    """
    cls = globals().get("CheckedModelConfig")
    if cls is None:
        from trl import ModelConfig

        class CheckedModelConfig(ModelConfig):
            def __post_init__(self):
                targets = self.lora_target_modules
                single = isinstance(targets, (list, tuple)) and len(targets) == 1
                keep = list(targets) if single and MODULE_NAME.fullmatch(str(targets[0])) else None
                super().__post_init__()
                if keep is not None:
                    self.lora_target_modules = keep

        CheckedModelConfig.__qualname__ = "CheckedModelConfig"
        cls = globals()["CheckedModelConfig"] = CheckedModelConfig
    return cls


def __getattr__(name: str):
    if name == "CheckedGRPOConfig":  # unpickling training_args.bin in a fresh process
        return grpo_config_class()
    if name == "CheckedModelConfig":
        return model_config_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
