"""cpu/greedy_batch.py: the shared-prefix greedy batch picks the tokens transformers' greedy generate picks,
whatever order the requests come in, and steps aside for anything but a plain greedy request."""

import pytest

from cpu.greedy_batch import SharedPrefixGreedy, greedy_generate, plain_greedy_config, shared_prefix_length
from problems.math_data import procedural_arithmetic
from rewards import build_messages
from tests.helpers import MODEL


def test_shared_prefix_length_leaves_each_row_a_token():
    import torch

    rows = [torch.tensor([1, 2, 3, 4]), torch.tensor([1, 2, 3, 9, 9]), torch.tensor([1, 2, 3, 4, 5])]
    assert shared_prefix_length(rows) == 3
    assert shared_prefix_length([torch.tensor([1, 2, 3])] * 3) == 2  # identical rows: the last token stays
    assert shared_prefix_length([torch.tensor([7]), torch.tensor([7, 8])]) == 0
    assert shared_prefix_length([torch.tensor([1, 2]), torch.tensor([3, 2])]) == 0


@pytest.fixture(scope="module")
def small_model():
    if not (MODEL / "config.json").is_file():
        pytest.skip("run `make setup` (scripts/prepare_cpu_model.py) first")
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(MODEL, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(MODEL, dtype="float32").eval()
    return model, tokenizer


def _prompts(tokenizer, n: int):
    problems = procedural_arithmetic(n, split="test", operations=["add", "sub"], max_value=10)
    texts = [
        tokenizer.apply_chat_template(build_messages(p.question, 1), tokenize=False, add_generation_prompt=True)
        for p in problems
    ]
    return tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)


def _texts(tokenizer, tokens):
    return [tokenizer.decode(row, skip_special_tokens=True) for row in tokens]


@pytest.fixture(scope="module")
def demo_batch(small_model):
    """(batch, our greedy tokens): the one-shot math prompts of the demo, 24 tokens each, in two groups of up to 4;
    read by the comparison with generate() and by the order test (one decoding for both)."""
    model, tokenizer = small_model
    batch = _prompts(tokenizer, 6)
    ours = greedy_generate(
        model, batch["input_ids"], batch["attention_mask"], 24, [tokenizer.eos_token_id], tokenizer.pad_token_id, 4
    )
    return batch, ours


def test_same_tokens_as_greedy_generate(small_model, demo_batch):
    """The one-shot math prompts of the demo, in two groups: the completions equal model.generate(do_sample=False)'s."""
    import torch

    model, tokenizer = small_model
    batch, ours = demo_batch
    with torch.no_grad():
        reference = model.generate(**batch, do_sample=False, max_new_tokens=24, pad_token_id=tokenizer.pad_token_id)
    assert _texts(tokenizer, ours) == _texts(tokenizer, reference[:, batch["input_ids"].size(1) :])
    assert ours.size(1) <= 24


def test_result_does_not_depend_on_request_order(small_model, demo_batch):
    """The same six requests in reverse order: the groups of 4 they arrive in differ, the completions do not."""
    model, tokenizer = small_model
    batch, forward = demo_batch
    flip = list(range(5, -1, -1))
    args = (24, [tokenizer.eos_token_id], tokenizer.pad_token_id, 4)
    backward = greedy_generate(model, batch["input_ids"][flip], batch["attention_mask"][flip], *args)
    assert _texts(tokenizer, backward) == _texts(tokenizer, forward[flip])


def test_a_row_that_ends_stops_while_others_go_on(small_model):
    """EOS is kept and followed by padding, as generate() leaves it; one token of budget gives one token."""
    model, tokenizer = small_model
    batch = _prompts(tokenizer, 3)
    out = greedy_generate(
        model, batch["input_ids"], batch["attention_mask"], 48, [tokenizer.eos_token_id], tokenizer.pad_token_id
    )
    ended = [(row == tokenizer.eos_token_id).nonzero() for row in out]
    assert any(len(e) for e in ended)
    one = greedy_generate(model, batch["input_ids"], batch["attention_mask"], 1, [tokenizer.eos_token_id], 0)
    assert one.shape == (3, 1)
    with pytest.raises(ValueError, match="max_new_tokens"):
        greedy_generate(model, batch["input_ids"], batch["attention_mask"], 0, [tokenizer.eos_token_id], 0)


def test_only_plain_greedy_requests_are_taken(small_model):
    from transformers import GenerationConfig

    model, tokenizer = small_model
    calls = []
    wrapper = SharedPrefixGreedy(model, lambda **kw: calls.append(kw) or "generate()", [2], 2)
    assert wrapper.handles(
        {"do_sample": False, "max_new_tokens": 8, "temperature": 0.0, "return_dict_in_generate": True}
    )
    for request in (
        {"do_sample": True, "max_new_tokens": 8},  # sampling
        {"max_new_tokens": 8},  # the model's default decides
        {"do_sample": False},  # no budget given
        {"do_sample": False, "max_new_tokens": 8, "output_logits": True},  # logprobs asked for
        {"do_sample": False, "max_new_tokens": 8, "stopping_criteria": []},
    ):
        assert not wrapper.handles(request)
    batch = _prompts(tokenizer, 1)
    assert wrapper(**batch, do_sample=True, max_new_tokens=4) == "generate()" and calls
    assert plain_greedy_config(model.generation_config)
    assert not plain_greedy_config(GenerationConfig(repetition_penalty=1.05))  # Qwen2.5-Instruct's own setting
    assert not plain_greedy_config(GenerationConfig(num_beams=4))
