"""evals/providers/policy_model.py: an Inspect eval of a model object in memory, greedy, in batches fixed before it starts.

Real Inspect evals of the task training's held-out evals run (``math_verified``), on the real small CPU model
(unquantized, loaded in the test). The trainer's use of it: tests/integration/test_held_out_eval.py.
"""

import pytest

from evals.math_task import math_verified
from evals.providers.policy_model import PolicyAPI, PolicyModelError, policy_model

PROBLEMS, MAX_TOKENS = 5, 16


@pytest.fixture(scope="module")
def model_and_tokenizer(cpu_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(cpu_model, dtype="float32")
    model.eval()
    return model, AutoTokenizer.from_pretrained(cpu_model)


def task(**kwargs):
    return math_verified(limit=PROBLEMS, max_tokens=MAX_TOKENS, operations="add,sub", max_value=10, **kwargs)


def evaluate(model_and_tokenizer, the_task, batch_size, tmp_path, plan=None, **eval_args):
    """An eval of ``the_task``, its batches planned from ``plan`` (default: the task itself)."""
    from inspect_ai import eval as inspect_eval

    policy, tokenizer = model_and_tokenizer
    prompts = [s.input for s in (plan or the_task).dataset]
    model = policy_model("test-run@step-1", policy, tokenizer, prompts, batch_size)
    (log,) = inspect_eval(the_task, model=model, log_dir=str(tmp_path), display="none", **eval_args)
    assert log.status == "success", log.error
    return log, model.api


def completions(log):
    return {sample.id: sample.output.completion for sample in log.samples}


def test_the_same_weights_give_the_same_completions_whatever_order_inspect_asks_in(model_and_tokenizer, tmp_path):
    first, api = evaluate(model_and_tokenizer, task(), 2, tmp_path / "a", max_connections=PROBLEMS)
    assert api.generate_calls == 3  # 5 prompts in fixed batches of 2: one generate call per batch
    assert str(first.eval.model) == "verigrpo-policy/test-run@step-1"
    # one request at a time, in reverse order: each request still generates its planned batch, so the same padding
    from inspect_ai.dataset import MemoryDataset

    reordered = task()
    reordered.dataset = MemoryDataset(list(reversed(list(reordered.dataset))))
    second, api = evaluate(
        model_and_tokenizer, reordered, 2, tmp_path / "b", plan=task(), max_connections=1, max_samples=1
    )
    assert api.generate_calls == 3
    assert completions(first) == completions(second)
    sample = first.samples[0]
    assert sample.output.usage.input_tokens > 0 and 0 < sample.output.usage.output_tokens <= MAX_TOKENS
    assert sample.output.stop_reason in ("stop", "max_tokens") and sample.scores["math_verifier"].value["format"] in (
        0.0,
        1.0,
    )


def test_completions_are_the_hf_providers_for_the_same_batch(model_and_tokenizer, tmp_path):
    """With every prompt in one batch (all requests arrive within its 2 s window), Inspect's hf provider, which
    `inspect eval --model hf/...` and `verigrpo/<run dir>` use, writes the same completions: same template,
    tokenization, greedy decoding and decoding of the output."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    ours, _ = evaluate(model_and_tokenizer, task(), PROBLEMS, tmp_path / "ours", max_connections=PROBLEMS)
    policy, tokenizer = model_and_tokenizer
    hf = get_model(f"hf/{policy.name_or_path}", memoize=False, do_sample=False, device="cpu", dtype="float32")
    (theirs,) = inspect_eval(task(), model=hf, log_dir=str(tmp_path / "hf"), display="none", max_connections=PROBLEMS)
    assert theirs.status == "success", theirs.error
    assert completions(ours) == completions(theirs)


def test_sampling_and_tools_are_refused_not_answered_greedily(model_and_tokenizer):
    import anyio
    from inspect_ai.model import ChatMessageUser, GenerateConfig
    from inspect_ai.tool import ToolInfo

    policy, tokenizer = model_and_tokenizer
    api = PolicyAPI("x", policy=policy, tokenizer=tokenizer)
    prompt = [ChatMessageUser(content="What is 2 + 3?")]
    with pytest.raises(PolicyModelError, match="generates greedily; the task asks for sampling"):
        anyio.run(api.generate, prompt, [], "auto", GenerateConfig(temperature=0.7))
    tool = ToolInfo(name="python", description="run code")
    with pytest.raises(PolicyModelError, match="answers plain chat prompts"):
        anyio.run(api.generate, prompt, [tool], "auto", GenerateConfig(temperature=0.0))


def test_named_on_the_command_line_it_says_what_to_use_instead():
    from inspect_ai.model import get_model

    with pytest.raises(PolicyModelError, match=r"existed only while it was being trained.*--model none/none"):
        get_model("verigrpo-policy/runs/x@step-50", memoize=False)


def test_one_eval_builds_the_provider_once(model_and_tokenizer, tmp_path, monkeypatch):
    """On each model event Inspect asks ``get_model_info`` about the model (its ACP usage update); a name it does not
    know it resolved by building the provider again, which for this one fails (no model object) and is swallowed
    (evals/providers/model_info.py)."""
    from inspect_ai import eval as inspect_eval

    init, built = PolicyAPI.__init__, []

    def counted(self, model_name, *args, **kwargs):
        built.append(model_name)
        init(self, model_name, *args, **kwargs)

    monkeypatch.setattr(PolicyAPI, "__init__", counted)
    policy, tokenizer = model_and_tokenizer
    the_task = math_verified(limit=1, max_tokens=2)
    name = f"{tmp_path.name}@step-1"  # a model name no earlier eval in this process asked Inspect about
    model = policy_model(name, policy, tokenizer, [s.input for s in the_task.dataset], 1)
    (log,) = inspect_eval(the_task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert built == [name]
