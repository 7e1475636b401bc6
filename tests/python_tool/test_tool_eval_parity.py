"""Eval parity for a tool-trained policy: the in-memory policy's Inspect provider (evals/providers/policy_model.py, the held-out
evals; evals/providers/checkpoint_model.py shares it) feeds the policy the very token ids TRL's tool loop feeds it in training,
reads its calls with TRL's parser, runs them in the bwrap sandbox through Inspect, and grades the final answer.

The policy is a stand-in that writes scripted text (a tool call in the chatml_tools format, then an answer) and
records every id sequence it is fed. The same script drives TRL's own ``GRPOTrainer._tool_call_loop`` (run unbound
on a stand-in trainer with the real python environment) and a real ``inspect_ai.eval`` of ``math_verified -T
tools=true``; the id sequences must be equal, turn by turn. Each eval takes a few seconds (tokenizer load, sandbox).
"""

import asyncio
import json
import types

import pytest
import torch

from python_tool.session import ToolLimits
from python_tool.trl_environment import PythonToolEnvironment, tool_config
from python_tool.turns import ToolSetting
from records.chat import chat_messages
from rewards.math.answer_format import build_messages
from tests.helpers import MODEL, REPO
from train.config import parse_config
from train.config.tool_checks import tool_tokenizer

pytestmark = [
    pytest.mark.skipif(not (MODEL / "config.json").is_file(), reason="the CPU model's tokenizer is not prepared"),
    pytest.mark.usefixtures("needs_sandbox"),
]

QUESTION, ANSWER = "What is 3 + 4?", "7"
LIMITS = ToolLimits(timeout_s=5.0, memory_mb=256, output_chars=200, max_calls=2)
MAX_TOKENS = 400


def call(name: str, arguments) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


@pytest.fixture(scope="module")
def tokenizer():
    script_args, training_args, model_args = parse_config(
        ["--config", str(REPO / "configs" / "cpu-smollm2-tools.yaml")]
    )
    return tool_tokenizer(script_args, model_args, training_args)


class Script:
    """The stand-in policy's text for its n-th turn of a conversation (the turn is counted from the ids it is fed:
    the number of tool responses after the prompt), with the ids it was fed."""

    def __init__(self, tokenizer, turns: list[str]) -> None:
        self.tokenizer, self.turns, self.fed = tokenizer, turns, []
        self.response = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def completion(self, ids: list[int]) -> list[int]:
        self.fed.append(list(ids))
        text = self.tokenizer.decode(ids)
        turn = text.count("<tool_response>") - 1  # the prompt's worked example has one
        return self.tokenizer(self.turns[turn], add_special_tokens=False)["input_ids"] + [self.response]


class StandInPolicy:
    """What evals/providers/policy_model.py calls on a transformers model: ``generate``, ``device``, ``generation_config``."""

    device = torch.device("cpu")

    def __init__(self, script: Script) -> None:
        self.script = script
        self.generation_config = types.SimpleNamespace(eos_token_id=script.response)
        self.config = types.SimpleNamespace(max_position_embeddings=8192)

    def generate(self, input_ids, attention_mask, do_sample, max_new_tokens):
        assert do_sample is False
        rows = []
        for ids, mask in zip(input_ids.tolist(), attention_mask.tolist()):
            fed = [token for token, m in zip(ids, mask) if m]
            rows.append(self.script.completion(fed)[:max_new_tokens])
        width = max(map(len, rows))
        pad = self.script.tokenizer.pad_token_id
        return torch.cat([input_ids, torch.tensor([row + [pad] * (width - len(row)) for row in rows])], dim=1)


def trl_fed_ids(tokenizer, turns: list[str], max_tokens: int = MAX_TOKENS) -> tuple[list[list[int]], list[dict]]:
    """The ids TRL's own tool loop feeds the policy for one rollout of the scripted turns, and its completion."""
    from trl.chat_template_utils import parse_response
    from trl.trainer.grpo_trainer import GRPOTrainer
    from trl.trainer.utils import shutdown_event_loop_in_daemon, start_event_loop_in_daemon

    script = Script(tokenizer, turns)
    environment = PythonToolEnvironment(LIMITS)
    environment.reset()
    tools = [environment.python]
    prompt = build_messages(QUESTION, 1, tools=True)
    thread, loop, ready = start_event_loop_in_daemon(name="test-trl-tool-loop")
    ready.wait()
    trainer = types.SimpleNamespace(
        processing_class=tokenizer,
        _tokenizer=tokenizer,
        _is_vlm=False,
        chat_template=None,
        chat_template_kwargs={},
        environment_factories={None: None},
        _batch_environments=[None],
        _env_tools={None: tools},
        tools=tools,
        _sync_tool_dicts=[{}],
        _async_tool_dicts=[{"python": environment.python}],
        async_loop=loop,
        max_tool_calling_iterations=LIMITS.max_calls + 1,
        max_completion_length=max_tokens,
        use_vllm=False,
        model=types.SimpleNamespace(config=types.SimpleNamespace(max_position_embeddings=8192)),
        _generate_single_turn=lambda ids, *args, **kwargs: ([script.completion(row) for row in ids], None),
    )
    trainer._get_tool_suffix_ids = types.MethodType(GRPOTrainer._get_tool_suffix_ids, trainer)
    try:
        (prompt_ids,), _, _ = GRPOTrainer._tokenize_prompts(trainer, [prompt])
        (completion_ids,), _ = trainer._generate_single_turn([prompt_ids])
        completions = [[parse_response(tokenizer, completion_ids, prefix=prompt_ids, tools=tools)]]
        _, completions, *_ = GRPOTrainer._tool_call_loop(
            trainer, [list(prompt)], [prompt_ids], [completion_ids], completions, None, None, {}
        )
    finally:
        shutdown_event_loop_in_daemon(thread, loop)
    return script.fed, completions[0]


def eval_with_tool(
    tokenizer, turns: list[str], tmp_path, max_tokens: int = MAX_TOKENS, trained_calls: int | None = None
):
    """A real Inspect eval of math_verified -T tools=true on the stand-in policy (the held-out eval's provider)."""
    from inspect_ai import eval as inspect_eval

    from evals.math_task import math_verified
    from evals.providers.policy_model import policy_model

    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps({"id": "p1", "question": QUESTION, "answer": ANSWER}) + "\n")
    task = math_verified(
        dataset="jsonl",
        path=str(problems),
        max_tokens=max_tokens,
        tools=True,
        tool_timeout_s=LIMITS.timeout_s,
        tool_memory_mb=LIMITS.memory_mb,
        tool_output_chars=LIMITS.output_chars,
        tool_max_calls=LIMITS.max_calls,
    )
    script = Script(tokenizer, turns)
    config = {
        "tools": ["python"],
        "tool_timeout_s": LIMITS.timeout_s,
        "tool_memory_mb": LIMITS.memory_mb,
        "tool_output_chars": LIMITS.output_chars,
        "tool_max_calls": trained_calls or LIMITS.max_calls,
    }
    model = policy_model(
        "stand-in", StandInPolicy(script), tokenizer, [s.input for s in task.dataset], 4, tool_config=config
    )
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    if trained_calls is not None:
        return log
    assert log.status == "success", log.error
    return script.fed, log.samples[0]


TRANSCRIPTS = {  # turns of the stand-in policy, how many times training feeds it, the completion budget
    "call-then-answer": (["Let me check.\n" + call("python", {"code": "print(3 + 4)"}), "It is 7.\nANSWER: 7"], 2, 400),
    "unknown-tool": ([call("calc", {"x": 1}), call("python", {"code": "print(3 + 4)"}), "ANSWER: 7"], 3, 400),
    "bad-arguments": ([call("python", {}), call("python", "print(7)"), "ANSWER: 7"], 3, 400),
    # 2 calls run, the 3rd reads the call limit, the 4th turn's call never runs (max_tool_calling_iterations = 3)
    "past-the-call-limit": ([call("python", {"code": "print(1)"})] * 4 + ["ANSWER: 7"], 4, 400),
    # the tool's output leaves the completion budget overdrawn: TRL drops it and the completion ends
    "results-over-the-budget": ([call("python", {"code": "print('x ' * 300)"}), "ANSWER: 7"], 1, 60),
    # the budget runs out inside the second turn: both cut it at the same token
    "budget-ends-a-turn": ([call("python", {"code": "print(3 + 4)"}), "The tool printed 7.\nANSWER: 7"], 2, 60),
}


@pytest.mark.parametrize(("turns", "feeds", "max_tokens"), TRANSCRIPTS.values(), ids=TRANSCRIPTS.keys())
def test_the_eval_feeds_the_policy_the_ids_training_feeds_it(tokenizer, turns, feeds, max_tokens, tmp_path):
    trl_fed, trl_completion = trl_fed_ids(tokenizer, turns, max_tokens)
    eval_fed, sample = eval_with_tool(tokenizer, turns, tmp_path, max_tokens)
    assert len(trl_fed) == feeds
    assert eval_fed == trl_fed
    # what Inspect logs after the prompt is TRL's completion: the same texts and calls; tool results where the tool
    # ran (where Inspect refused a call its message holds Inspect's error; the policy read TRL's, asserted above)
    logged = after_prompt(sample)
    policy_turns = [m for m in logged if m.role == "assistant" and (m.text or m.tool_calls or not_run(m))]
    assert [m.text for m in policy_turns] == [m["content"] for m in trl_completion if m["role"] == "assistant"]
    trl_calls = [
        c["function"]["name"] for m in trl_completion if m["role"] == "assistant" for c in m.get("tool_calls", [])
    ]
    eval_calls = [c.function for m in policy_turns for c in m.tool_calls or []]
    eval_calls += [c["function"]["name"] for m in policy_turns for c in not_run(m)]
    assert eval_calls == trl_calls
    eval_results = [m.text if m.error is None else "refused" for m in logged if m.role == "tool"]
    trl_results = [
        m["content"] if not m["content"].startswith("{'error'") else "refused"
        for m in trl_completion
        if m["role"] == "tool"
    ]
    assert eval_results[: len(trl_results)] == trl_results
    as_read = [text for event in sample.events if event.event == "model" for text in read_instead(event)]
    assert as_read == [
        m["content"] for m in trl_completion if m["role"] == "tool" and m["content"].startswith("{'error'")
    ]
    assert sample.scores["math_verifier"].value["correct"] == training_grade(trl_completion)
    if feeds == 1:  # the tool results overdrew the budget: TRL dropped them and the completion ended there
        assert sample.output.stop_reason == "max_tokens" and sample.output.completion == ""


def not_run(message) -> list:
    """The calls of a turn after the last round (kept in metadata, never run)."""
    return (message.metadata or {}).get("tool_calls_not_run", [])


def read_instead(event) -> list[str]:
    return ((event.output.metadata if event.output else None) or {}).get("tool_results_as_read", [])


def after_prompt(sample) -> list:
    last_user = max(i for i, m in enumerate(sample.messages) if m.role == "user")
    return sample.messages[last_user + 1 :]


def test_a_call_and_its_answer_are_graded_like_training(tokenizer, tmp_path):
    turns = ["Let me check.\n" + call("python", {"code": "print(3 + 4)"}), "The tool printed 7.\nANSWER: 7"]
    _, sample = eval_with_tool(tokenizer, turns, tmp_path)
    assert [m.text for m in after_prompt(sample) if m.role == "tool"] == ["7\n"]  # ran in the sandbox
    assert sample.output.stop_reason == "stop"
    assert sample.scores["math_verifier"].value["correct"] == "C"


@pytest.mark.parametrize(
    ("text", "graded"),
    [
        ("<tool_call>\n{bad json\n</tool_call>", "I"),
        ('<tool_call>\n{"arguments": {"code": "print(7)"}}\n</tool_call>\nANSWER: 7', "C"),  # no name: not a call
    ],
)
def test_a_call_that_does_not_parse_is_the_answer_text_as_in_training(tokenizer, text, graded, tmp_path):
    """TRL's parse_response falls back to the decoded text: no tool runs and the rollout ends with that text."""
    trl_fed, trl_completion = trl_fed_ids(tokenizer, [text])
    eval_fed, sample = eval_with_tool(tokenizer, [text], tmp_path)
    assert eval_fed == trl_fed and len(eval_fed) == 1
    assert trl_completion == [{"role": "assistant", "content": text}]
    assert sample.output.completion == text and not sample.output.message.tool_calls
    assert sample.scores["math_verifier"].value["correct"] == graded == training_grade(trl_completion)


def training_grade(completion: list[dict]) -> str:
    """The training reward's verdict on TRL's completion (its turns joined, tool results left out)."""
    from rewards import grade
    from rewards.common import completion_text

    return "C" if grade(completion_text(completion), ANSWER).correct else "I"


def test_the_held_out_config_gives_the_eval_the_runs_tool(tokenizer):
    """A tool run's held-out eval: the task offers the tool with the run's limits; the provider gets its setting."""
    from train.artifacts.held_out import held_out_eval
    from train.config.resolved import resolve_run

    script_args, training_args, model_args = parse_config(
        [
            "--config",
            str(REPO / "configs" / "cpu-smollm2-tools.yaml"),
            "--eval_strategy",
            "steps",
            "--eval_steps",
            "1",
            "--tool_max_calls",
            "3",
            "--tool_output_chars",
            "500",
            "--eval_problems",
            "2",
        ]
    )
    held_out = held_out_eval(resolve_run(script_args, training_args, model_args))
    assert held_out.task_args["tools"] is True
    assert (held_out.task_args["tool_max_calls"], held_out.task_args["tool_output_chars"]) == (3, 500)
    setting = ToolSetting.from_config(held_out.tool_config)
    assert (
        setting.limits == ToolLimits(script_args.tool_timeout_s, script_args.tool_memory_mb, 500, 3)
        and setting.rounds == 4
    )
    assert setting.tool_chat_template == "chatml_tools"
    assert tool_config({"tools": []}) is None


def test_the_prompt_is_rendered_from_the_training_tool_not_inspects_tool_info(tokenizer):
    """The schema text in the prompt is transformers' get_json_schema of the environment's method (TRL's), which
    differs from what Inspect's hf provider writes from its ToolInfo."""
    from python_tool.turns import ToolTurns

    turns = ToolTurns(tokenizer, SETTING)
    text = tokenizer.decode(turns.first_prompt(chat_messages(build_messages(QUESTION, 1, tools=True))))
    assert '{"type": "function", "function": {"name": "python"' in text and '"return": {"type": "string"}' in text
    assert "additionalProperties" not in text
    assert asyncio.run(turns.prompt(chat_messages(build_messages(QUESTION, 1, tools=True)))).rounds == 0


def test_a_tool_with_other_limits_than_the_runs_is_refused(tokenizer, tmp_path):
    """A checkpoint eval takes the tool's limits from -T: other limits than run.json's stop the eval with the flags."""
    log = eval_with_tool(tokenizer, ["ANSWER: 7"], tmp_path, trained_calls=3)
    assert log.status == "error" and "-T tool_max_calls=3" in str(log.error)


def test_a_tool_the_policy_was_not_trained_with_is_refused(tokenizer):
    import anyio
    from inspect_ai.model import GenerateConfig
    from inspect_ai.tool import ToolInfo

    from evals.providers.policy_model import PolicyAPI, PolicyModelError

    api = PolicyAPI("x", policy=StandInPolicy(Script(tokenizer, [])), tokenizer=tokenizer, tools=SETTING)
    prompt = chat_messages(build_messages(QUESTION, 1, tools=True))
    for tool, message in [
        (ToolInfo(name="python", description="run code"), "not the tool this policy was trained with"),
        (ToolInfo(name="bash", description="run a shell command"), "offers the tool 'bash'"),
    ]:
        with pytest.raises(PolicyModelError, match=message):
            anyio.run(api.generate, prompt, [tool], "auto", GenerateConfig(temperature=0.0))


SETTING = ToolSetting(LIMITS, rounds=LIMITS.max_calls + 1, tool_chat_template="chatml_tools")


@pytest.fixture(scope="module")
def tool_run(tmp_path_factory, tokenizer):
    """A tool run's directory as train/grpo.py leaves it: run.json of the CPU tool config, an (untrained) LoRA
    adapter, and the tokenizer TRL saves (the tool template on it)."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM
    from trl import get_peft_config

    from train.artifacts.manifest import build_manifest, write_manifest

    run = tmp_path_factory.mktemp("tool-run") / "run"
    script_args, training_args, model_args = parse_config(
        ["--config", str(REPO / "configs" / "cpu-smollm2-tools.yaml"), "--output_dir", str(run)]
    )
    model_args.model_name_or_path = str(MODEL)
    model_args.load_in_4bit = (
        False  # unquantized: loads in seconds (quantized loading: tests/evals/test_checkpoint_model.py)
    )
    base = AutoModelForCausalLM.from_pretrained(MODEL, dtype="float32")
    get_peft_model(base, get_peft_config(model_args)).save_pretrained(run)
    tokenizer.save_pretrained(run)
    write_manifest(build_manifest(script_args, training_args, model_args), run, 2)
    return run, script_args


def test_a_runs_tool_setting_is_read_from_run_json(tmp_path, tokenizer):
    """evals/providers/checkpoint_model.py's tool provider for a run: run.json's tool keys, the tool turns of the held-out evals;
    none for a run without tools."""
    from evals.providers.checkpoint_model import _tool_api
    from train.artifacts.manifest import build_manifest, write_manifest

    for config, expected in [("cpu-smollm2-tools.yaml", SETTING_OF_THE_CPU_TOOL_CONFIG), ("cpu-smollm2.yaml", None)]:
        run = tmp_path / config
        run.mkdir()
        (run / "adapter_config.json").write_text("{}")
        write_manifest(build_manifest(*parse_config(["--config", str(REPO / "configs" / config)])), run, 2)
        api = _tool_api(run, StandInPolicy(Script(tokenizer, [])), tokenizer, "run")
        assert (api and api.tool_turns.setting) == expected


SETTING_OF_THE_CPU_TOOL_CONFIG = ToolSetting(
    ToolLimits(10.0, 512, 2000, 4), rounds=5, tool_chat_template="chatml_tools"
)


@pytest.mark.slow
def test_a_tool_trained_checkpoint_is_evaluated_with_the_training_tool_turns(tool_run, tmp_path):
    """``inspect eval ... -T tools=true --model verigrpo/<run>``: the provider reads the tool setting from run.json and
    answers through the held-out evals' tool turns (the ids asserted above), with the real model, greedy."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from evals.math_task import math_verified

    run, script_args = tool_run
    model = get_model(f"verigrpo/{run}", memoize=False, do_sample=False, device="cpu")
    tool_api = model.api.tool_api
    assert tool_api.tool_turns.setting == SETTING_OF_THE_CPU_TOOL_CONFIG
    task = math_verified(
        limit=1,
        max_tokens=8,
        operations="add",
        max_value=5,
        tools=True,  # the task's default tool limits: the CPU tool config trains with them
    )
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert tool_api.generate_calls >= 1  # the tool turns' provider generated, not Inspect's hf provider
    model.api.do_sample = True  # as without -M do_sample=false
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "sampling"), display="none")
    assert log.status == "error" and "-M do_sample=false" in str(log.error)


TOOL_MODEL = REPO / "models" / "smollm2-135m-instruct-tools"  # the CPU model warm-started on the tool format


class GreedyModel:
    """A real model as the script: greedy completions of each fed id sequence alone, recorded like ``Script``'s."""

    def __init__(self, model, tokenizer, max_tokens: int) -> None:
        self.model, self.tokenizer, self.max_tokens, self.fed = model, tokenizer, max_tokens, []
        self.eos = {tokenizer.eos_token_id, model.generation_config.eos_token_id} - {None}

    def completion(self, ids: list[int]) -> list[int]:
        self.fed.append(list(ids))
        with torch.inference_mode():
            out = self.model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=self.max_tokens)
        row = out[0, len(ids) :].tolist()
        end = next((i + 1 for i, token in enumerate(row) if token in self.eos), len(row))
        return row[:end]


@pytest.mark.slow
@pytest.mark.skipif(not (TOOL_MODEL / "config.json").is_file(), reason=f"{TOOL_MODEL} is not prepared (toolstart)")
def test_a_model_that_calls_the_tool_is_fed_the_same_ids_in_training_and_eval(tokenizer, tmp_path, monkeypatch):
    """The same comparison as above with a real policy that writes its own calls (greedy, one sequence at a time on
    both sides, so batching cannot change a token)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(TOOL_MODEL, dtype="float32").eval()
    max_tokens = 160
    trained = GreedyModel(model, tokenizer, max_tokens)
    monkeypatch.setattr(f"{__name__}.Script", lambda tokenizer, turns: trained)
    trl_fed, trl_completion = trl_fed_ids(tokenizer, [], max_tokens)
    evaluated = GreedyModel(model, tokenizer, max_tokens)
    recorded = []
    generate = model.generate

    def recording_generate(input_ids, attention_mask, **kwargs):
        recorded.extend(
            [t for t, m in zip(row, mask) if m] for row, mask in zip(input_ids.tolist(), attention_mask.tolist())
        )
        return generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)

    monkeypatch.setattr(model, "generate", recording_generate)
    monkeypatch.setattr(f"{__name__}.StandInPolicy", lambda script: model)
    monkeypatch.setattr(f"{__name__}.Script", lambda tokenizer, turns: evaluated)
    _, sample = eval_with_tool(tokenizer, [], tmp_path, max_tokens)
    assert recorded == trl_fed
    print(f"{len(trl_fed)} turns; the policy's calls: {[m.get('tool_calls') for m in trl_completion]}")
    assert sample.scores["math_verifier"].value["correct"] == training_grade(trl_completion)


def test_inspect_does_not_cut_a_long_result_the_tool_already_limited(tmp_path):
    """Inspect cuts tool output over 16 KiB with its own wrapper text; the tool's own cut (``tool_output_chars``
    characters, up to 4 bytes each) must be the only one, as in training."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.solver import generate, use_tools

    from python_tool.inspect_tool import python_tool

    limits = ToolLimits(timeout_s=5.0, memory_mb=256, output_chars=6000, max_calls=1)
    code = "print('\\U0001f600' * 7000)"  # 28 KB of 4-byte characters
    environment = PythonToolEnvironment(limits)
    environment.reset()
    trained = asyncio.run(environment.python(code=code))
    outputs = [ModelOutput.for_tool_call("mockllm/model", "python", {"code": code}), ModelOutput.from_content("m", "7")]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    task = Task(
        dataset=[Sample(input="x", target="7")], solver=[use_tools(python_tool(limits)), generate()], sandbox="bwrap"
    )
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (result,) = [m.text for m in log.samples[0].messages if m.role == "tool"]
    assert len(trained.encode()) > 16 * 1024 and result == trained
