"""cpu/grouped_attention.py: on CPU, grouped KV heads give bit for bit the logits and greedy tokens of the
repeated heads transformers passes by default, only where no gradient is taken, and only inside the block.
The real SmolLM2-135M (3 KV heads for 9 query heads) on padded batches of the math task's prompts."""

import pytest
import torch
from transformers.integrations import sdpa_attention

from cpu.greedy_batch import greedy_generate
from cpu.grouped_attention import grouped_kv_attention
from rewards import build_messages

# the longest and the shortest question, each with 0 and 1 shots: 4 rows of 91, 149, 78 and 136 tokens, so the batch
# holds an unpadded row and rows padded by 13 to 71 tokens (every kind of row the attention mask has)
QUESTIONS = ["Ava has 12 cards. Ava gets 9 more. How many cards are there now?", "What is 17 - 8?"]


@pytest.fixture(scope="module")
def model_and_batch(cpu_model):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(cpu_model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(cpu_model, dtype=torch.float32).eval()
    assert model.config.num_key_value_heads < model.config.num_attention_heads  # grouped: the case at hand
    prompts = [
        tokenizer.apply_chat_template(build_messages(q, num_shots=s), tokenize=False, add_generation_prompt=True)
        for q in QUESTIONS
        for s in (0, 1)
    ]
    return model, tokenizer, tokenizer(prompts, return_tensors="pt", padding=True)


def test_padded_logits_are_bit_for_bit_the_same(model_and_batch):
    model, _, batch = model_and_batch
    assert not batch.attention_mask.all()  # padded: the masked case transformers copies the heads for
    with torch.no_grad():
        repeated = model(**batch).logits
        with grouped_kv_attention():
            grouped = model(**batch).logits
    assert torch.equal(grouped, repeated)


def test_greedy_decoding_gives_the_same_tokens(model_and_batch, monkeypatch):
    model, tokenizer, batch = model_and_batch
    args = (model, batch.input_ids, batch.attention_mask, 12, [tokenizer.eos_token_id], tokenizer.pad_token_id)
    grouped = greedy_generate(*args)  # greedy_generate decodes inside grouped_kv_attention
    monkeypatch.setattr("cpu.greedy_batch.grouped_kv_attention", lambda: torch.no_grad())  # the heads repeated
    assert torch.equal(greedy_generate(*args), grouped)


def test_only_without_gradients_and_only_inside_the_block():
    original = sdpa_attention.use_gqa_in_sdpa
    key = value = torch.zeros(1, 3, 5, 64)
    mask = torch.ones(1, 1, 5, 5, dtype=torch.bool)
    with grouped_kv_attention():
        with torch.no_grad():
            assert sdpa_attention.use_gqa_in_sdpa(mask, key, value) is True
        assert sdpa_attention.use_gqa_in_sdpa(mask, key, value) == original(mask, key, value)  # grad: as before
    assert sdpa_attention.use_gqa_in_sdpa is original
