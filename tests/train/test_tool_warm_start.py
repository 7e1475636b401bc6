"""The tool-format warm start's data (python_tool/warm_start.py): each transcript is the tool config's own training
prompt, a call whose code computes the answer, the tool's real result and the model's own answer line; only training
problems are used, never the held-out ones the evals score; the loss covers what the assistant wrote and not the
tool's result; ``make setup`` builds the model after the base model, at the path the tool config trains from."""

import asyncio
import json
import re
import subprocess

import pytest

from problems.domains import domain_of_source
from problems.math_data import _split_of, procedural_arithmetic
from python_tool.chat_template import template_text
from python_tool.session import ToolLimits
from python_tool.trl_environment import PythonToolEnvironment, tool_limits
from python_tool.warm_start import (
    TRAINING_TEMPLATE,
    WarmStartSettings,
    build_transcript,
    tool_code,
    warm_start_config,
    warm_start_rows,
)
from rewards import grade
from rewards.math.answer_format import TOOL_WORKED_EXAMPLE, build_messages
from tests.helpers import MODEL, REPO
from train.config import parse_config
from train.config.tool_checks import TOOL_MODEL_NAME
from train.data.rows import load_training_problems

TOOLS_CONFIG = str(REPO / "configs" / "cpu-smollm2-tools.yaml")


def warm_start_problems(script_args, examples: int):
    """The problems scripts/prepare_tool_model.py fine-tunes on: the first of the config's training split."""
    config = warm_start_config(script_args, examples)
    return load_training_problems(config, domain_of_source(config.dataset))


needs_model = pytest.mark.skipif(not (MODEL / "config.json").is_file(), reason="the CPU model is not prepared")


@pytest.fixture(scope="module")
def config():
    return parse_config(["--config", TOOLS_CONFIG])


@pytest.fixture(scope="module")
def rows(config):
    from rewards.sandbox import sandbox_problem

    if sandbox_problem():
        pytest.skip(f"sandbox unavailable: {sandbox_problem()}")  # needs_sandbox is function-scoped
    return warm_start_rows(config[0], warm_start_problems(config[0], 6))


@pytest.mark.parametrize(
    ("operations", "steps", "code"),
    [
        (("add",), 1, r"print\(\d+ \+ \d+\)"),
        (("sub",), 1, r"print\(\d+ - \d+\)"),
        (("mul",), 1, r"print\(\d+ \* \d+\)"),
        (("div",), 1, r"print\(\d+ // \d+\)"),
        (("add", "mul"), 3, r"print\(\(\(\d+ [+*] \d+\) [+*] \d+\) [+*] \d+\)"),
    ],
)
def test_the_code_computes_the_answer_for_every_operation(operations, steps, code, needs_sandbox):
    """The program is the question's numbers in order; running it in the tool prints the reference answer
    (build_transcript raises otherwise)."""
    environment = PythonToolEnvironment(ToolLimits())
    for problem in procedural_arithmetic(6, seed=3, operations=operations, max_value=12, steps=steps):
        assert re.fullmatch(code, tool_code(problem)), tool_code(problem)
        call, result, reply = build_transcript(problem, environment)
        assert result["content"] == f"{problem.answer}\n"
        assert grade(reply["content"], problem.answer).correct


def test_a_problem_that_is_not_procedural_arithmetic_is_refused():
    from problems.math_data import MathProblem

    with pytest.raises(ValueError, match="needs procedural arithmetic"):
        tool_code(MathProblem("gsm-1", "Ann has 3 apples and eats 1. How many are left?", "2", {"source": "gsm8k"}))
    with pytest.raises(ValueError, match="expected 2 numbers"):
        tool_code(
            MathProblem(
                "a-1", "Ann has 3 apples and 4 pears; 1 goes.", "2", {"source": "arithmetic", "operations": ["sub"]}
            )
        )


def test_the_worked_example_states_its_answer_itself():
    assert TOOL_WORKED_EXAMPLE["reply"] == "The tool printed 3.\nANSWER: 3"


def test_each_transcript_is_the_training_prompt_then_call_result_answer(config, rows):
    """The prompt is GRPO's own row for the problem (the config's first training problems, its num_shots); the
    tool result is what a fresh training tool returns for the call's code."""
    from train.data.rows import load_training_problems, to_dataset

    script_args = config[0]
    problems = load_training_problems(script_args, domain_of_source(script_args.dataset))
    grpo_rows = to_dataset(problems[: len(rows)], script_args.num_shots, tools=True)
    fresh = PythonToolEnvironment(tool_limits(script_args))
    for row, grpo_row in zip(rows, grpo_rows, strict=True):
        assert row["prompt"] == without_nones(grpo_row["prompt"]) and row["id"] == grpo_row["id"]
        question = row["prompt"][-1]["content"]
        assert row["prompt"] == build_messages(question, script_args.num_shots, tools=True)
        call, result, reply = row["completion"]
        code = call["tool_calls"][0]["function"]["arguments"]["code"]
        assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] == "python"
        fresh.reset()
        assert result == {"role": "tool", "name": "python", "content": asyncio.run(fresh.python(code=code))}
        assert reply["role"] == "assistant" and grade(reply["content"], row["answer"]).correct


def without_nones(value):
    """A dataset row as it was written: Arrow gives every message every key of any message, set to None."""
    if isinstance(value, dict):
        return {key: without_nones(item) for key, item in value.items() if item is not None}
    return [without_nones(item) for item in value] if isinstance(value, list) else value


@needs_model
def test_the_rows_render_as_grpo_renders_its_prompt(config, rows):
    """The ``tools`` column is the schema TRL renders from the environment's method, and the training template
    (with its generation marks) renders the conversation exactly as chatml_tools.jinja does."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    environment = PythonToolEnvironment(tool_limits(config[0]))
    for row in rows[:2]:
        conversation = row["prompt"] + row["completion"]
        rendered = {
            template: tokenizer.apply_chat_template(conversation, tools=tools, chat_template=text, tokenize=False)
            for template, text, tools in (
                ("grpo", template_text("chatml_tools"), [environment.python]),
                ("sft", TRAINING_TEMPLATE.read_text(), json.loads(row["tools"])),
            )
        }
        assert rendered["grpo"] == rendered["sft"]


@needs_model
def test_the_loss_covers_what_the_assistant_wrote_and_not_the_tool_result(rows):
    """The tokens SFTTrainer trains on (its completion mask and assistant mask, both applied): the call and the answer
    turn, each ending with <|im_end|>; not the prompt's worked example, not the tool's result."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import is_chat_template_stop_token_trained

    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    tokenizer.chat_template = TRAINING_TEMPLATE.read_text()
    assert is_chat_template_stop_token_trained(tokenizer)
    row = rows[0]
    tools = json.loads(row["tools"])
    prompt = tokenizer.apply_chat_template(
        row["prompt"], tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
    )["input_ids"]
    full = tokenizer.apply_chat_template(
        row["prompt"] + row["completion"],
        tools=tools,
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids = full["input_ids"]
    assert ids[: len(prompt)] == prompt
    trained = [i for i, bit in enumerate(full["assistant_masks"]) if bit and i >= len(prompt)]
    spans, start = [], trained[0]
    for previous, index in zip(trained, trained[1:] + [None]):
        if index != previous + 1:
            spans.append(tokenizer.decode(ids[start : previous + 1]))
            start = index
    code = row["completion"][0]["tool_calls"][0]["function"]["arguments"]["code"]
    answer = row["answer"]
    assert spans == [
        f'<tool_call>\n{{"name": "python", "arguments": {{"code": "{code}"}}}}\n</tool_call><|im_end|>\n',
        f"\nThe tool printed {answer}.\nANSWER: {answer}<|im_end|>\n",
    ]


def test_the_problems_are_training_problems_never_the_eval_ones(config):
    """Every warm-start problem is in arithmetic's training split (content hash), also when the config names
    another split, and none is among the problems the held-out eval and `inspect eval evals/math_task.py` score."""
    from evals.math_task import math_verified
    from train.artifacts.held_out import held_out_task_args

    script_args = config[0]
    problems = warm_start_problems(script_args, WarmStartSettings().examples)
    assert len(problems) == WarmStartSettings().examples
    assert all(_split_of(p.question) == "train" for p in problems)
    script_args.dataset_split = "test"
    try:
        assert warm_start_problems(script_args, 4) == problems[:4]
    finally:
        script_args.dataset_split = "train"
    held_out = math_verified(**held_out_task_args(script_args, 500, 64, domain_of_source(script_args.dataset)))
    standalone = math_verified(limit=500)
    questions = {p.question for p in problems}
    for task in (held_out, standalone):
        eval_questions = {sample.input[-1].text for sample in task.dataset}
        assert len(eval_questions) > 100 and not questions & eval_questions


def test_make_setup_builds_the_tool_model_after_the_base_model(config):
    """`make setup` (dry run, every target forced) runs prepare_tool_model.py after prepare_cpu_model.py, from the base
    model into the directory the tool config trains from."""
    commands = subprocess.run(
        ["make", "-n", "-B", "setup"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    base = next(i for i, line in enumerate(commands) if "scripts/prepare_cpu_model.py" in line)
    (tool,) = [i for i, line in enumerate(commands) if "scripts/prepare_tool_model.py" in line]
    assert base < tool
    model_args = config[2]
    assert model_args.model_name_or_path == f"models/{TOOL_MODEL_NAME}"
    assert commands[tool].endswith(f"--base {MODEL.relative_to(REPO)} --out {model_args.model_name_or_path}")


@pytest.mark.parametrize("name", [TOOL_MODEL_NAME, "smollm2-135m-instruct"])
def test_a_missing_model_says_how_to_make_it(tmp_path, name):
    """Before any weights load: the tool model's absence names `make setup` and prepare_tool_model.py; the base
    model's names prepare_cpu_model.py, as before."""
    from train.config import ConfigError
    from train.config.validation import check_model_and_resume

    script_args, training_args, model_args = parse_config(["--config", TOOLS_CONFIG])
    model_args.model_name_or_path = str(tmp_path / "models" / name)
    script = "prepare_tool_model.py" if name == TOOL_MODEL_NAME else "prepare_cpu_model.py"
    with pytest.raises(ConfigError, match=r"is not a checkpoint directory \(no config.json\)") as error:
        check_model_and_resume(training_args, model_args)
    assert script in str(error.value) and "make setup" in str(error.value)
