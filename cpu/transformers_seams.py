"""The transformers names verigrpo touches that are not public API: the one place an upgrade breaks.

Written against transformers 5.20.2 (pinned in pyproject.toml). Everything else reaches these only through the
function below; tests/cpu/test_transformers_seams.py pins each name and fails first on an upgrade that moves it
(tests/test_seams.py checks that no other module names it). The Trainer's private ``_load_from_checkpoint`` is
TRL's seam's (``train/trl_seams.py``), since it is reached through ``GRPOTrainer``.

* ``transformers.integrations.sdpa_attention.use_gqa_in_sdpa(attention_mask, key, value) -> bool``: whether SDPA
  attention passes grouped key/value heads to torch (``enable_gqa``) or repeats them first. ``sdpa_attention_forward``
  looks the name up in its module on every call, so rebinding it changes the decision; ``gqa_decision`` does that
  for the length of a ``with`` block (``cpu/grouped_attention.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

TRANSFORMERS_VERSION = "5.20.2"  # the version every name here was read in


@contextmanager
def gqa_decision(decide: Callable):
    """Inside the block, SDPA attention asks ``decide(attention_mask, key, value, original)`` whether to pass grouped
    KV heads to torch; ``original`` is transformers' own rule (same first three arguments). Restored on exit."""
    from transformers.integrations import sdpa_attention

    original = sdpa_attention.use_gqa_in_sdpa

    def use_gqa_in_sdpa(attention_mask, key, value):
        return decide(attention_mask, key, value, original)

    sdpa_attention.use_gqa_in_sdpa = use_gqa_in_sdpa
    try:
        yield
    finally:
        sdpa_attention.use_gqa_in_sdpa = original
