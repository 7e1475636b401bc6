"""cpu/transformers_seams.py: the private transformers name it rebinds is where transformers 5.20 had it, and SDPA
attention still asks it on every call. On a transformers upgrade this fails first (docs/testing.md)."""

import inspect

import torch
from transformers.integrations import sdpa_attention

from cpu.transformers_seams import TRANSFORMERS_VERSION, gqa_decision

MOVED = (
    "transformers no longer decides grouped-query SDPA in sdpa_attention.use_gqa_in_sdpa(attention_mask, key, value) "
    f"as transformers {TRANSFORMERS_VERSION} did: cpu/transformers_seams.py's gqa_decision needs updating "
    "(tests/cpu/test_grouped_attention.py then shows whether the CPU speed-up still holds)"
)


def test_sdpa_attention_asks_the_module_level_rule():
    rule = getattr(sdpa_attention, "use_gqa_in_sdpa", None)
    assert callable(rule), MOVED
    assert list(inspect.signature(rule).parameters) == ["attention_mask", "key", "value"], MOVED
    assert "use_gqa_in_sdpa(" in inspect.getsource(sdpa_attention.sdpa_attention_forward), MOVED


def test_sdpa_attention_asks_the_decision_inside_the_block_only():
    """A real grouped, masked SDPA call: inside the block it asks ``decide`` (with transformers' own rule), after the
    block transformers' rule again; the output is the same either way (a masked CPU call, grouped or repeated)."""
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(1, 4, 3, 8, generator=generator)  # 4 query heads
    key, value = (torch.randn(1, 2, 3, 8, generator=generator) for _ in range(2))  # 2 KV heads
    mask = torch.tril(torch.ones(3, 3, dtype=torch.bool)).view(1, 1, 3, 3)
    module = torch.nn.Module()
    module.num_key_value_groups, module.is_causal = 2, True
    original = sdpa_attention.use_gqa_in_sdpa
    asked = []

    def decide(attention_mask, k, v, rule):
        asked.append(rule is original and attention_mask is mask)
        return True

    def attend():
        return sdpa_attention.sdpa_attention_forward(module, query, key, value, mask)[0]

    repeated = attend()
    with gqa_decision(decide):
        grouped = attend()
    assert asked == [True], MOVED
    assert sdpa_attention.use_gqa_in_sdpa is original
    attend()
    assert asked == [True]  # not asked after the block
    torch.testing.assert_close(grouped, repeated)
