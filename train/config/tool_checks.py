"""The ``tools``/``tool_*`` keys: what a run with the python tool needs, checked before any weights load, and the
tokenizer it trains with.

TRL's tool loop parses tool calls out of each completion with the tokenizer's response template, which TRL sets
only for chat templates it knows (compared by exact text); it also needs a template that renders tool calls and
results, and one that is prefix-preserving (or that TRL can swap for a training variant). A model whose template
cannot do that (SmolLM2's) trains with ``tool_chat_template``: a shipped template (``chatml_tools``,
``train/chat_templates/``) or a file; the shipped one comes with its parser. Everything here loads the tokenizer
only (no weights), so a template that cannot call tools is refused in a second, not after the model loads.
"""

from __future__ import annotations

import copy
from pathlib import Path

from problems.domains import domain_of_source
from problems.python_tool import TOOL_NAME, ToolLimits
from train.config.arguments import Bound, ConfigError, finite_number, out_of_range, refuse
from train.engines.choice import Engine, rollout_engine

TOOL_NAMES = (TOOL_NAME,)
TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "chat_templates"
SHIPPED_TEMPLATES = {"chatml_tools": TEMPLATE_DIR / "chatml_tools.jinja"}
# the CPU model after the tool-format warm start (scripts/prepare_tool_model.py, `make setup`): the CPU tool config's
TOOL_MODEL_NAME = "smollm2-135m-instruct-tools"

TOOL_BOUNDS = (
    Bound("tool_timeout_s", lambda v: finite_number(v) and 0 < v <= 600, "in (0, 600] (seconds per call)"),
    Bound("tool_memory_mb", lambda v: finite_number(v) and v >= 64, ">= 64 (MiB of address space per process)"),
    Bound("tool_output_chars", lambda v: finite_number(v) and v >= 1, ">= 1 (characters of output per call)"),
    Bound("tool_max_calls", lambda v: finite_number(v) and v >= 1, ">= 1 (calls per rollout)"),
)


def tool_limits(script_args) -> ToolLimits:
    return ToolLimits(
        timeout_s=float(script_args.tool_timeout_s),
        memory_mb=int(script_args.tool_memory_mb),
        output_chars=int(script_args.tool_output_chars),
        max_calls=int(script_args.tool_max_calls),
    )


def check_tools(script_args, training_args, model_args) -> None:
    """Refuse, before loading weights, a tool run that cannot work: unknown tool, a domain without a tool prompt,
    no sandbox, an engine or launch the tool loop has not run on or would hang on, a chat template that cannot call
    tools. Held-out evals run with the tool (train/artifacts/held_out.py), so they need nothing more."""
    if not script_args.tools:
        if script_args.tool_chat_template:
            raise ConfigError("tool_chat_template is set but `tools` is empty: add `tools: [python]` or remove it.")
        return
    unknown = sorted(set(script_args.tools) - set(TOOL_NAMES))
    if unknown:
        raise ConfigError(f"tools: unknown tool(s) {unknown}; the tools are {list(TOOL_NAMES)}.")
    refuse(out_of_range(script_args, TOOL_BOUNDS))
    domain = domain_of_source(script_args.dataset)
    if domain.tool_row is None:
        raise ConfigError(
            f"tools: dataset {script_args.dataset!r} ({domain.name}) has no prompt that offers a tool "
            "(problems/domains.py tool_row); tools work with the math datasets."
        )
    from rewards.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem:
        raise ConfigError(
            f"tools: the python tool runs in the bubblewrap sandbox, which is unavailable here: {problem}"
        )
    from train.config.distributed_checks import launch_from_env

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
    tool_tokenizer(script_args, model_args, training_args)  # a template that cannot call tools stops here


def template_text(name_or_path: str) -> str:
    """A shipped template by name (``chatml_tools``) or a Jinja file's text."""
    if name_or_path in SHIPPED_TEMPLATES:
        return SHIPPED_TEMPLATES[name_or_path].read_text(encoding="utf-8")
    path = Path(name_or_path)
    if not path.is_file():
        raise ConfigError(
            f"tool_chat_template: {name_or_path} is neither a shipped template ({sorted(SHIPPED_TEMPLATES)}) nor a file "
            f"(resolved: {path.resolve()})."
        )
    return path.read_text(encoding="utf-8")


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
    apply_tool_template(tokenizer, script_args.tool_chat_template)
    problem = tool_calling_problem(tokenizer)
    if problem:
        where = script_args.tool_chat_template or f"{model_args.model_name_or_path}'s own"
        raise ConfigError(
            f"tools: the chat template ({where}) {problem}. Set `tool_chat_template: chatml_tools` for a ChatML model "
            "(SmolLM2, Qwen2.5: train/chat_templates/README.md), or give a template file that can, with a model TRL "
            "has a tool-call parser for."
        )
    return tokenizer


def apply_tool_template(tokenizer, tool_chat_template: str | None) -> None:
    """Set ``tool_chat_template`` (a shipped name or a file) on ``tokenizer``, with its parser for a shipped one; no
    change when None. Training's tokenizer and the tool evals' (``evals/tool_turns.py``) are set here."""
    if not tool_chat_template:
        return
    tokenizer.chat_template = template_text(tool_chat_template)
    if tool_chat_template in SHIPPED_TEMPLATES:
        from trl.chat_template_utils import qwen3_template

        tokenizer.response_template = copy.deepcopy(qwen3_template)  # Qwen2.5's tool-call format (README there)


def tool_calling_problem(tokenizer) -> str | None:
    """Why TRL's tool loop cannot run with this tokenizer's chat template, or None."""
    from trl.chat_template_utils import (
        add_response_schema,
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        supports_tool_calling,
    )

    if not supports_tool_calling(tokenizer):
        return "cannot write a tool call and its result (TRL's supports_tool_calling is False)"
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:
            add_response_schema(copy.copy(tokenizer))
        except ValueError:
            return "has no tool-call parser in TRL (add_response_schema knows only some templates, by exact text)"
    if not is_chat_template_prefix_preserving(tokenizer):
        try:
            get_training_chat_template(tokenizer)
        except ValueError:
            return "is not prefix-preserving and TRL has no training variant of it"
    return None
