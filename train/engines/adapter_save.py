"""Save a LoRA adapter without asking the Hugging Face Hub: peft's ``save_embedding_layers`` decided here.

peft's ``save_pretrained`` defaults to ``save_embedding_layers="auto"``, and when the adapter does not target the
embeddings and the base is named by a Hub id (``Qwen/Qwen2.5-1.5B-Instruct``, every GPU recipe), "auto" asks the Hub
whether the base's ``config.json`` exists (``peft.utils.other.check_file_exists_on_hf_hub``) and then reads it, to see
whether the vocabulary was resized (peft 0.21 ``utils/save_and_load.py``). The adapter engines save at every optimizer
step, so a cluster without internet paid a request timeout and a warning per step. The same rule is decided here from
the adapter's config and the local copy of the base's config (its directory, or the Hugging Face cache, which is what
the policy was loaded from): embeddings are saved when the adapter targets them or the vocabulary differs from the
base's; a base config not found locally counts as unresized, as peft's "auto" decides when the Hub cannot answer.
"""

from __future__ import annotations

import functools
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

EMBEDDING_LAYER_NAMES = ("embed_tokens", "lm_head")  # peft.utils.constants.EMBEDDING_LAYER_NAMES (peft 0.21)
ALL_LINEAR = "all-linear"  # peft's shorthand; it never includes the embeddings


def _targets_embeddings(peft_model, config) -> bool:
    """peft's own test: an embedding layer among ``target_modules`` (a list, or a regex over module names)."""
    targets = getattr(config, "target_modules", None)
    if not targets:
        return False
    if isinstance(targets, str):
        if targets == ALL_LINEAR:
            return False
        base = peft_model.get_base_model() if hasattr(peft_model, "get_base_model") else peft_model
        names = [n for n, _ in base.named_modules() if any(re.match(rf"(.*\.)?{e}$", n) for e in EMBEDDING_LAYER_NAMES)]
        return any(re.fullmatch(targets, n) for n in names)
    return any(name in targets for name in EMBEDDING_LAYER_NAMES)


def local_base_vocab_size(base: str | None, revision: str | None = None) -> int | None:
    """``vocab_size`` of the base's config.json from its directory or the Hugging Face cache; None when neither has it.
    Never a network request (``try_to_load_from_cache`` reads the cache only)."""
    if not base:
        return None
    path: str | Path | None = Path(base) / "config.json"
    if not Path(path).is_file():
        from huggingface_hub import try_to_load_from_cache

        try:
            path = try_to_load_from_cache(base, "config.json", revision=revision)
        except ValueError:  # not a repo id either (a directory without config.json)
            return None
        if not isinstance(path, (str, os.PathLike)):  # None (not cached) or "cached as missing"
            return None
    try:
        config = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    vocab = config.get("vocab_size") or config.get("text_config", {}).get("vocab_size")
    return vocab if isinstance(vocab, int) else None


def save_embedding_layers(peft_model) -> bool:
    """What peft's "auto" would decide for the active adapter, without the Hub (see the module docstring)."""
    config = peft_model.peft_config[peft_model.active_adapter]
    trainable_tokens = getattr(config, "trainable_token_indices", None) is not None or (
        str(getattr(config, "peft_type", "")).endswith("TRAINABLE_TOKENS")
    )
    if _targets_embeddings(peft_model, config) and not trainable_tokens:
        return True
    vocab = getattr(getattr(peft_model, "config", None), "vocab_size", None)
    base_vocab = local_base_vocab_size(
        getattr(config, "base_model_name_or_path", None), getattr(config, "revision", None)
    )
    return bool(vocab and base_vocab and vocab != base_vocab)


def save_adapter(peft_model, directory: str | Path, **kwargs) -> None:
    """``peft_model.save_pretrained`` in safetensors with ``save_embedding_layers`` decided here (no Hub request)."""
    peft_model.save_pretrained(
        str(directory), safe_serialization=True, save_embedding_layers=save_embedding_layers(peft_model), **kwargs
    )


@contextmanager
def saves_without_the_hub(model):
    """While it lasts, ``model.save_pretrained`` (a peft model's) decides ``save_embedding_layers`` here, never by
    asking the Hub: transformers' ``Trainer._save`` calls it with peft's "auto" at every checkpoint save."""
    if not hasattr(model, "peft_config"):  # not a peft model: nothing asks the Hub
        yield
        return
    model.save_pretrained = functools.partial(model.save_pretrained, save_embedding_layers=save_embedding_layers(model))
    try:
        yield
    finally:
        del model.save_pretrained  # the class's method again
