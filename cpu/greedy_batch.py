"""Greedy decoding of an eval batch whose prompts share a long prefix: the prefix computed once, done rows dropped.

Inspect's ``hf`` provider hands ``model.generate`` a left-padded batch of whole prompts. In the math task
every prompt starts with the same system message and worked example (~127 of the CPU demo's ~152 prompt
tokens), and a static batch keeps decoding every row until its longest row ends. ``greedy_generate``
runs the shared prefix once per group of rows (its KV cache repeated for each row), then the rows' own
tokens, then drops each row from the group (and its cache) when it emits EOS. The tokens are what greedy decoding picks
(argmax of the last position's logits, as ``model.generate(do_sample=False)`` without logits processors);
floating-point sums differ only in batch shapes, so a near-tie can rarely resolve differently.
Hand-written because transformers' ``generate`` has neither feature for a static batch, and its
continuous batching (``generate_batch``) sizes a paged cache from free memory, which a shared machine
cannot promise (on the project machine it was killed for memory).

``SharedPrefixGreedy`` puts it behind ``model.generate``'s call signature for Inspect's provider
(``evals/providers/checkpoint_model.py``); anything but a plain greedy request goes to the original ``generate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from cpu.grouped_attention import grouped_kv_attention

# generate() keywords a greedy request may carry: sampling knobs are ignored by greedy decoding (as
# generate() ignores them with do_sample=False); anything else (logits, hidden states, stop strings,
# penalties) goes to generate() itself
_IGNORED_WHEN_GREEDY = {"temperature", "top_p", "top_k", "return_dict_in_generate"}
# generation_config settings under which generate() changes greedy's argmax (penalties, forced or suppressed
# tokens, beams): a model whose own config sets any of them (Qwen2.5's repetition_penalty 1.05) keeps generate()
_NEUTRAL = {
    "num_beams": (None, 1),
    "num_return_sequences": (None, 1),
    "repetition_penalty": (None, 1.0),
    "encoder_repetition_penalty": (None, 1.0),
    "no_repeat_ngram_size": (None, 0),
    "bad_words_ids": (None,),
    "sequence_bias": (None,),
    "suppress_tokens": (None,),
    "begin_suppress_tokens": (None,),
    "forced_bos_token_id": (None,),
    "forced_eos_token_id": (None,),
    "min_length": (None, 0),
    "min_new_tokens": (None, 0),
    "exponential_decay_length_penalty": (None,),
    "guidance_scale": (None, 1.0),
}


def plain_greedy_config(generation_config) -> bool:
    """True when the model's own generation_config adds nothing to greedy decoding's argmax."""
    return all(getattr(generation_config, key, None) in allowed for key, allowed in _NEUTRAL.items())


def shared_prefix_length(rows: Sequence[torch.Tensor]) -> int:
    """Tokens every row starts with, keeping at least one token of each row after the prefix."""
    shortest = min(len(row) for row in rows)
    first = rows[0]
    length = 0
    while length < shortest - 1 and all(row[length] == first[length] for row in rows[1:]):
        length += 1
    return length


# Rows decoded together. Larger groups share the per-step cost of dequantizing 4-bit weights, but every step
# also copies each group's whole KV cache (transformers' attention expands grouped KV heads when a padding
# mask is given): on 2 CPU cores 200 problems took 254 CPU-s in groups of 25, 303 s in one group of 200.
GROUP_SIZE = 32


@torch.inference_mode()
def greedy_generate(
    model,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    eos_token_ids: Sequence[int],
    pad_token_id: int,
    group_size: int = GROUP_SIZE,
) -> torch.Tensor:
    """The greedy continuation of each row (``[batch, <= max_new_tokens]``), padded with ``pad_token_id``
    after a row's EOS (which is kept, as ``generate`` keeps it).

    ``input_ids``/``attention_mask`` as a tokenizer makes them (any padding side). Rows are decoded in
    groups of ``group_size`` in a canonical order (sorted by their tokens), so the result depends on the
    set of prompts, not on the order the requests arrived in.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    rows = [ids[mask.bool()] for ids, mask in zip(input_ids, attention_mask)]
    if any(len(row) == 0 for row in rows):
        raise ValueError("every prompt needs at least one token")
    eos = torch.tensor(list(eos_token_ids), device=input_ids.device)
    order = sorted(range(len(rows)), key=lambda i: rows[i].tolist())
    result = torch.full((len(rows), max_new_tokens), pad_token_id, dtype=input_ids.dtype, device=input_ids.device)
    steps = 0
    with grouped_kv_attention():  # the KV cache is not copied per query head (cpu/grouped_attention.py)
        for start in range(0, len(order), group_size):
            group = order[start : start + group_size]
            tokens = _decode_group(model, [rows[i] for i in group], max_new_tokens, eos, pad_token_id)
            result[torch.tensor(group, device=input_ids.device), : tokens.size(1)] = tokens
            steps = max(steps, tokens.size(1))
    return result[:, :steps]


def _decode_group(model, rows: list[torch.Tensor], max_new_tokens: int, eos: torch.Tensor, pad_token_id: int):
    from transformers import DynamicCache

    batch, device = len(rows), rows[0].device
    prefix = shared_prefix_length(rows)
    cache = DynamicCache(config=model.config)
    if prefix:
        model(input_ids=rows[0][:prefix][None], past_key_values=cache, use_cache=True, logits_to_keep=1)
        cache.batch_repeat_interleave(batch)
    # each row's own tokens, left-padded after the prefix: [prefix | pads | row]; the mask hides the pads
    # and the position ids continue from the prefix, so each row sees what it would see unpadded
    rests = [row[prefix:] for row in rows]
    width = max(len(rest) for rest in rests)
    rest_ids = torch.full((batch, width), pad_token_id, dtype=rows[0].dtype, device=device)
    rest_mask = torch.zeros((batch, width), dtype=torch.long, device=device)
    for i, rest in enumerate(rests):
        rest_ids[i, width - len(rest) :] = rest
        rest_mask[i, width - len(rest) :] = 1
    positions = (prefix + rest_mask.cumsum(-1) - 1).masked_fill(rest_mask == 0, 1)
    mask = torch.cat([torch.ones((batch, prefix), dtype=rest_mask.dtype, device=device), rest_mask], dim=1)
    out = model(
        input_ids=rest_ids,
        attention_mask=mask,
        position_ids=positions,
        past_key_values=cache,
        use_cache=True,
        logits_to_keep=1,
    )
    next_position = positions[:, -1] + 1

    generated = torch.full((batch, max_new_tokens), pad_token_id, dtype=rows[0].dtype, device=device)
    alive = torch.arange(batch, device=device)  # the group's row of each row still in the batch (and cache)
    steps = 0
    for step in range(max_new_tokens):
        token = out.logits[:, -1].argmax(-1)
        generated[alive, step] = token
        steps = step + 1
        done = torch.isin(token, eos)
        if step == max_new_tokens - 1 or bool(done.all()):
            break
        if bool(done.any()):
            keep = (~done).nonzero().squeeze(1)
            cache.batch_select_indices(keep)
            alive, token, mask, next_position = alive[keep], token[keep], mask[keep], next_position[keep]
        mask = torch.cat([mask, mask.new_ones((mask.size(0), 1))], dim=1)
        out = model(
            input_ids=token[:, None],
            attention_mask=mask,
            position_ids=next_position[:, None],
            past_key_values=cache,
            use_cache=True,
        )
        next_position = next_position + 1
    return generated[:, :steps]


class SharedPrefixGreedy:
    """Stands in for ``model.generate`` where Inspect's ``hf`` provider calls it: a plain greedy request
    (``do_sample=False`` and ``max_new_tokens``, nothing else that changes decoding) goes through
    ``greedy_generate``; any other request goes to the model's own ``generate``."""

    def __init__(self, model, generate: Callable[..., Any], eos_token_ids: Sequence[int], pad_token_id: int):
        self.model = model
        self.generate = generate
        self.eos_token_ids = list(eos_token_ids)
        self.pad_token_id = pad_token_id

    def handles(self, kwargs: dict) -> bool:
        return (
            plain_greedy_config(self.model.generation_config)
            and kwargs.get("do_sample") is False
            and isinstance(kwargs.get("max_new_tokens"), int)
            and set(kwargs) <= {"do_sample", "max_new_tokens"} | _IGNORED_WHEN_GREEDY
        )

    def __call__(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **kwargs: Any):
        if not self.handles(kwargs):
            return self.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        from transformers.generation.utils import GenerateDecoderOnlyOutput

        new = greedy_generate(
            self.model, input_ids, attention_mask, kwargs["max_new_tokens"], self.eos_token_ids, self.pad_token_id
        )
        return GenerateDecoderOnlyOutput(sequences=torch.cat([input_ids, new], dim=1))


def install(model, tokenizer) -> SharedPrefixGreedy:
    """Route ``model.generate``'s plain greedy requests through ``greedy_generate`` (on this instance only)."""
    eos = model.generation_config.eos_token_id
    eos_ids = [eos] if isinstance(eos, int) else list(eos or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in eos_ids:
        eos_ids.append(tokenizer.eos_token_id)
    if not eos_ids:
        raise ValueError("the model has no EOS token: greedy decoding would never stop early")
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
    wrapper = SharedPrefixGreedy(model, model.generate, eos_ids, pad)
    model.generate = wrapper
    return wrapper
