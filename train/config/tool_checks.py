"""The ``tools``/``tool_*`` keys of a training run: what a run with the python tool needs, checked before any weights
load, and the run's tool as ``ToolSetup``, resolved once: the tokenizer it trains with, the tool's limits and schema,
GRPOTrainer's environment factory and tool rounds, and the keys the held-out tool evals read.

The tool itself, its TRL environment and its chat templates are ``python_tool/``; what stays here is training's
side: the config's bounds, the engines and launches TRL's tool loop has run on, and ``ConfigError`` for what is
refused. Everything here loads the tokenizer only (no weights), so a template that cannot call tools is refused in
a second, not after the model loads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from problems.domains import Domain
from python_tool.chat_template import TemplateNotFound, apply_tool_template, tool_calling_problem
from python_tool.session import TOOL_NAME, ToolLimits
from python_tool.trl_environment import environment_factory, tool_config, tool_limits, tool_rounds, tool_schemas
from rewards.sandbox import sandbox_problem
from train.config.arguments import Bound, ConfigError, finite_number, out_of_range, refuse
from train.config.distributed_checks import launch_from_env
from train.engines.choice import Engine, rollout_engine

TOOL_NAMES = (TOOL_NAME,)
# the CPU model after the tool-format warm start (scripts/prepare_tool_model.py, `make setup`): the CPU tool config's
TOOL_MODEL_NAME = "smollm2-135m-instruct-tools"

TOOL_BOUNDS = (
    Bound("tool_timeout_s", lambda v: finite_number(v) and 0 < v <= 600, "in (0, 600] (seconds per call)"),
    Bound("tool_memory_mb", lambda v: finite_number(v) and v >= 64, ">= 64 (MiB of address space per process)"),
    Bound("tool_output_chars", lambda v: finite_number(v) and v >= 1, ">= 1 (characters of output per call)"),
    Bound("tool_max_calls", lambda v: finite_number(v) and v >= 1, ">= 1 (calls per rollout)"),
)


@dataclass(frozen=True)
class ToolSetup:
    """A tool run's tool, resolved once by ``check_tools``: what the trainer, the server length check and the
    held-out evals read."""

    tokenizer: object  # the tokenizer the run trains with (as TRL loads it), its chat template able to call tools
    limits: ToolLimits  # the config's tool_* limits
    schemas: list[dict]  # the tool's JSON schemas, as apply_chat_template renders them
    environment_factory: Callable  # GRPOTrainer's environment_factory
    rounds: int  # TRL's max_tool_calling_iterations (unset: tool_max_calls + 1, the last round shows the limit)
    eval_config: dict  # the config's tool keys (TOOL_CONFIG_KEYS): how the held-out evals run the tool


def check_tools(script_args, training_args, model_args, domain: Domain) -> ToolSetup | None:
    """Refuse, before loading weights, a tool run that cannot work: unknown tool, a domain without a tool prompt,
    no sandbox, an engine or launch the tool loop has not run on or would hang on, a chat template that cannot call
    tools; return the run's ``ToolSetup`` (None without tools). Held-out evals run with the tool
    (train/artifacts/held_out.py), so they need nothing more. ``domain``: the dataset's (``validate``'s)."""
    if not script_args.tools:
        if script_args.tool_chat_template:
            raise ConfigError("tool_chat_template is set but `tools` is empty: add `tools: [python]` or remove it.")
        return None
    unknown = sorted(set(script_args.tools) - set(TOOL_NAMES))
    if unknown:
        raise ConfigError(f"tools: unknown tool(s) {unknown}; the tools are {list(TOOL_NAMES)}.")
    refuse(out_of_range(script_args, TOOL_BOUNDS))
    if domain.tool_row is None:
        raise ConfigError(
            f"tools: dataset {script_args.dataset!r} ({domain.name}) has no prompt that offers a tool "
            "(problems/domains.py tool_row); tools work with the math datasets."
        )
    problem = sandbox_problem()
    if problem:
        raise ConfigError(
            f"tools: the python tool runs in the bubblewrap sandbox, which is unavailable here: {problem}"
        )
    launch = launch_from_env(training_args=training_args)
    processes = launch.world_size
    if processes > 1 and not training_args.use_vllm and launch.shards_parameters:
        raise ConfigError(
            f"tools with transformers generation under {launch.shards_parameters} and {processes} training processes "
            "would hang: each generate call gathers the sharded weights from every process (a collective), and "
            "TRL's tool loop generates again only on the processes whose rollouts called a tool, so the others wait "
            "until ddp_timeout. Roll out with the colocated adapter engine (`use_vllm: true`, LoRA), or train with "
            "DDP or ZeRO-2."
        )
    if processes > 1 and training_args.use_vllm and training_args.vllm_mode == "server":
        raise ConfigError(
            f"tools with vllm_mode: server and {processes} training processes would hang: TRL's tool loop asks "
            "the servers again only for the rollouts of this process that called a tool, and in server mode each "
            "request is a collective of all processes (gathered on the main one, sliced back by equal shares), "
            "so processes with different numbers of calls wait on each other until ddp_timeout. Train with one "
            "process, or use `vllm_mode: colocate`."
        )
    if rollout_engine(training_args, model_args) is Engine.NONE and training_args.use_vllm:
        raise ConfigError(
            "tools with use_vllm needs use_peft: true (the colocated adapter engine); TRL's own full-weight vLLM sync "
            "has not been run with the tool loop here. Use LoRA, or `use_vllm: false`."
        )
    if training_args.use_transformers_continuous_batching:
        raise ConfigError("tools with use_transformers_continuous_batching has not been run here: turn it off.")
    tokenizer = tool_tokenizer(script_args, model_args, training_args)  # a template that cannot call tools stops here
    limits = tool_limits(script_args)
    return ToolSetup(
        tokenizer=tokenizer,
        limits=limits,
        schemas=tool_schemas(limits),
        environment_factory=environment_factory(limits),
        rounds=tool_rounds(script_args.tool_max_calls, training_args.max_tool_calling_iterations),
        eval_config=tool_config({**vars(script_args), **training_args.to_dict()}),
    )


def tool_tokenizer(script_args, model_args, training_args):
    """The tokenizer a tool run trains with (as TRL would load it: left padding and truncation), its chat template
    replaced by ``tool_chat_template`` when set; ConfigError when it cannot call tools."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(
        model_args.model_name_or_path,
        revision=model_args.model_revision,
        truncation_side="left",
        padding_side="left",
        trust_remote_code=training_args.trust_remote_code,
    )
    try:
        apply_tool_template(tokenizer, script_args.tool_chat_template)
    except TemplateNotFound as exc:
        raise ConfigError(str(exc)) from None
    problem = tool_calling_problem(tokenizer)
    if problem:
        where = script_args.tool_chat_template or f"{model_args.model_name_or_path}'s own"
        raise ConfigError(
            f"tools: the chat template ({where}) {problem}. Set `tool_chat_template: chatml_tools` for a ChatML model "
            "(SmolLM2, Qwen2.5: python_tool/chat_templates/README.md), or give a template file that can, with a model TRL "
            "has a tool-call parser for."
        )
    return tokenizer
