"""Decode on CPU without copying the KV cache once per query head: the same attention, bit for bit.

transformers' SDPA attention (``integrations/sdpa_attention.py``) repeats each key/value head for its query
heads whenever an attention mask is given, because CUDA's fused kernels fall back to the math kernel for a
masked grouped-query call. Padded batches always carry a mask, so on CPU every layer copied its whole KV cache
on every decoding step: for SmolLM2-135M (3 KV heads for 9 query heads) greedy decoding spent more time in
that copy than in the matrix products. torch's CPU kernel takes the grouped heads directly (``enable_gqa``)
with a mask, and its logits are bit for bit those of the repeated heads (tests/cpu/test_grouped_attention.py;
64 problems decoded greedily: 37 -> 26 CPU-s, the same tokens).

``grouped_kv_attention`` switches that on for the length of a ``with`` block, for CPU tensors and only where no
gradient is taken (the backward of the grouped call sums the heads' gradients in another order). Hand-written
because transformers decides it in a private helper with no setting (reached through ``cpu/transformers_seams.py``).
"""

from __future__ import annotations

from contextlib import contextmanager

from cpu.transformers_seams import gqa_decision


@contextmanager
def grouped_kv_attention():
    """Inside the block, transformers' SDPA attention passes grouped KV heads to torch on CPU without gradients."""
    import torch

    def grouped_on_cpu(attention_mask, key, value, original):
        if key.device.type == "cpu" and not torch.is_grad_enabled():
            return key.shape[-1] == value.shape[-1] <= 256  # the head sizes torch's kernel takes
        return original(attention_mask, key, value)

    with gqa_decision(grouped_on_cpu):
        yield
