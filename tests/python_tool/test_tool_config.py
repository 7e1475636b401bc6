"""A tool run's config: refused before any weights load where it cannot work (with the reason), the shipped ChatML
tool template renders and parses tool calls for the CPU model, and the prompt's worked example shows exactly what
the tool returns."""

import asyncio

import pytest

from problems.domains import domain_of_source
from python_tool.chat_template import tool_calling_problem
from python_tool.session import ToolLimits
from rewards.math.answer_format import TOOL_WORKED_EXAMPLE, build_messages
from tests.helpers import MODEL, REPO
from train.config import ConfigError, parse_config, resolve_run
from train.config.tool_checks import check_tools, tool_tokenizer

TOOLS_CONFIG = str(REPO / "configs" / "cpu-smollm2-tools.yaml")
needs_model = pytest.mark.skipif(not (MODEL / "config.json").is_file(), reason="the CPU model is not prepared")


def parse(*overrides: str):
    return parse_config(["--config", TOOLS_CONFIG, *overrides])


@needs_model
@pytest.mark.usefixtures("needs_sandbox")
def test_the_cpu_tools_config_validates():
    script_args, training_args, model_args = parse()
    assert script_args.tools == ["python"] and script_args.tool_chat_template == "chatml_tools"
    tools = resolve_run(script_args, training_args, model_args).tool_setup  # what the run's stages read, resolved once
    assert tool_calling_problem(tools.tokenizer) is None and tools.tokenizer.padding_side == "left"
    assert tools.limits == ToolLimits(
        timeout_s=script_args.tool_timeout_s,
        memory_mb=script_args.tool_memory_mb,
        output_chars=script_args.tool_output_chars,
        max_calls=script_args.tool_max_calls,
    )
    assert [schema["function"]["name"] for schema in tools.schemas] == ["python"]
    assert tools.environment_factory()._limits == tools.limits
    assert tools.rounds == script_args.tool_max_calls + 1  # max_tool_calling_iterations unset: the limit's round
    assert (
        tools.eval_config["tools"] == ["python"] and tools.eval_config["tool_max_calls"] == script_args.tool_max_calls
    )


@needs_model
def test_a_template_that_cannot_call_tools_is_refused_before_loading(needs_sandbox):
    script_args, training_args, model_args = parse()
    model_args.model_name_or_path = str(MODEL)  # the base model (the config's is the warm start, with a tool template)
    script_args.tool_chat_template = None  # SmolLM2's own template: no tool section
    with pytest.raises(ConfigError, match=r"cannot write a tool call.*tool_chat_template: chatml_tools"):
        check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["--tools", "shell"], r"unknown tool\(s\) \['shell'\]"),
        (["--tool_max_calls", "0"], r"tool_max_calls must be >= 1"),
        (["--tool_timeout_s", "0"], r"tool_timeout_s must be in \(0, 600\]"),
        (["--use_vllm", "true", "--use_peft", "false", "--load_in_4bit", "false"], r"needs use_peft: true"),
        (["--dataset", "code", "--reward_funcs", "code_tests", "--num_shots", "0"], r"\(code\) has no prompt"),
    ],
)
def test_tool_runs_that_cannot_work_are_refused_with_the_reason(overrides, message, needs_sandbox):
    script_args, training_args, model_args = parse(*overrides)
    with pytest.raises(ConfigError, match=message):
        check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


@needs_model
def test_a_tool_run_through_one_process_and_vllm_servers_validates(needs_sandbox):
    """TRL's tool loop runs against servers (the server engine's requests take token ids, a later turn's included);
    the servers' --max-model-len is checked when the servers answer (tests/train/engines/test_server_engine.py)."""
    script_args, training_args, model_args = parse("--use_vllm", "true", "--vllm_mode", "server")
    check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


def test_a_tool_run_through_vllm_servers_from_several_processes_is_refused(needs_sandbox, monkeypatch):
    """Server-mode generation gathers every process's prompts on the main one: a collective; the tool loop calls it
    only on processes with a pending call, so a multi-process tool run would wait until ddp_timeout."""
    script_args, training_args, model_args = parse("--use_vllm", "true", "--vllm_mode", "server")
    monkeypatch.setenv("WORLD_SIZE", "2")  # after parsing: transformers would start torch.distributed from it
    with pytest.raises(ConfigError, match=r"vllm_mode: server and 2 training processes would hang.*one process"):
        check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


@pytest.mark.parametrize(
    "launch",
    [{"ACCELERATE_USE_FSDP": "true"}, {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"}],
)
def test_a_tool_run_generating_with_sharded_weights_from_several_processes_is_refused(
    launch, needs_sandbox, monkeypatch
):
    """transformers generation under FSDP/ZeRO-3 gathers the weights on every generate call (a collective), which the
    tool loop makes only where a rollout called a tool."""
    script_args, training_args, model_args = parse()
    for name, value in {"WORLD_SIZE": "2", **launch}.items():  # after parsing (transformers would act on them)
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=r"transformers generation under (FSDP|DeepSpeed ZeRO-3) and 2 .* hang"):
        check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))
    monkeypatch.setenv("WORLD_SIZE", "1")  # one process: nothing to wait for
    check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


@needs_model
def test_a_tool_run_with_held_out_evals_validates(needs_sandbox):
    """The held-out evals use the tool (python_tool/turns.py): nothing to refuse."""
    script_args, training_args, model_args = parse("--eval_strategy", "steps", "--eval_steps", "5")
    check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


def test_a_template_without_tools_is_an_error():
    script_args, training_args, model_args = parse()
    script_args.tools = []
    with pytest.raises(ConfigError, match="tool_chat_template is set but `tools` is empty"):
        check_tools(script_args, training_args, model_args, domain_of_source(script_args.dataset))


@needs_model
def test_the_shipped_template_renders_and_parses_a_tool_call():
    from trl.chat_template_utils import parse_response

    from python_tool.trl_environment import PythonToolEnvironment

    script_args, training_args, model_args = parse()
    tokenizer = tool_tokenizer(script_args, model_args, training_args)
    tools = [PythonToolEnvironment.python]
    messages = build_messages("What is 3 + 4?", 1, tools=True)
    prompt = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False, add_generation_prompt=True)
    assert '"name": "python"' in prompt and "<tool_response>\n3\n\n</tool_response>" in prompt
    emitted = '<tool_call>\n{"name": "python", "arguments": {"code": "print(3 + 4)"}}\n</tool_call><|im_end|>'
    parsed = parse_response(tokenizer, tokenizer(emitted)["input_ids"], prefix=tokenizer(prompt)["input_ids"])
    assert parsed["tool_calls"] == [
        {"type": "function", "function": {"name": "python", "arguments": {"code": "print(3 + 4)"}}}
    ]


@pytest.mark.usefixtures("needs_sandbox")
def test_the_worked_example_shows_what_the_tool_really_returns():
    from python_tool.trl_environment import PythonToolEnvironment

    environment = PythonToolEnvironment(ToolLimits())
    environment.reset()
    assert asyncio.run(environment.python(code=TOOL_WORKED_EXAMPLE["code"])) == TOOL_WORKED_EXAMPLE["result"]
