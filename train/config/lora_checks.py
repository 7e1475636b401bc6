"""LoRA settings checked before any model loads.

Every LoRA policy: its targets must match modules of the configured model (peft would otherwise stop
the run after loading it). With vLLM rollouts (``use_vllm`` and ``use_peft``: an adapter engine), also
what vLLM cannot serve as the trainer computes it, which would otherwise fail at the first sync or,
worse, train off-policy without an error: a rank above 512, LoRA on the output layer or the input
embeddings (vLLM's prompt logprobs drop the head's delta, vLLM issue #51594; TRL refuses the same before its
adapter-only sync), parameter targets, ``modules_to_save``, DoRA and trained biases.

The targets are resolved the way the trainer will: TRL's ``get_peft_config`` builds the LoraConfig and
peft applies it to the configured architecture, built from config.json on the meta device (no weights
read; ``train/engines/vllm_lora.py``). ``all-linear`` therefore means what peft makes of it on this model
(never the output layer), and a regex that reaches the head by another name is still caught. When the
architecture cannot be built here (a Hub model that is not cached, offline) the target names are checked
instead, as TRL does.
"""

from __future__ import annotations

import copy
import logging

from train.config.arguments import ConfigError
from train.engines.adapter_storage import adapter_bytes, choose_root
from train.engines.choice import Engine, rollout_engine
from train.engines.vllm_lora import (
    VLLM_LORA_RANKS,
    lora_model_on_meta,
    resolved_targets,
    unservable_settings,
)

logger = logging.getLogger(__name__)

DECODER_TARGETS = "[q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]"
HEAD_NAMES = ("lm_head", "embed_tokens")


def check_lora(training_args, model_args, adapter_root: str | None = None) -> None:
    """Raise ConfigError for a LoRA setting the run cannot train with (see the module docstring); for the colocated
    engine also when neither /dev/shm nor the disk (or the config's ``adapter_root``) holds two adapter versions."""
    if not model_args.use_peft:
        return
    vllm = rollout_engine(training_args, model_args) is not Engine.NONE
    if vllm and model_args.lora_r > VLLM_LORA_RANKS[-1]:
        raise ConfigError(
            f"lora_r: {model_args.lora_r} is above {VLLM_LORA_RANKS[-1]}, the largest LoRA rank vLLM serves (its "
            f"max_lora_rank is one of {', '.join(map(str, VLLM_LORA_RANKS))}). Lower lora_r to "
            f"{VLLM_LORA_RANKS[-1]} or less, or set use_vllm: false to generate with transformers."
        )
    from trl import get_peft_config

    lora_config = get_peft_config(model_args)  # the LoraConfig the trainer will build
    if vllm:
        problems = unservable_settings(lora_config)
        if problems:
            raise ConfigError(_vllm_refusal("; ".join(problems)))
    model = _on_meta(model_args, lora_config, training_args.trust_remote_code)
    if model is None:
        if vllm:
            _check_target_names(model_args.lora_target_modules)
        return
    if rollout_engine(training_args, model_args) is Engine.COLOCATED:
        _check_adapter_room(model, model_args, adapter_root)
    heads = resolved_targets(model).embeddings
    if vllm and heads:
        raise ConfigError(
            _vllm_refusal(
                f"lora_target_modules {model_args.lora_target_modules!r} puts LoRA on {', '.join(heads)} of "
                f"{model_args.model_name_or_path}: vLLM serves LoRA on the output layer and the input embeddings "
                "differently from peft (its prompt logprobs drop the head's delta, vLLM issue #51594), so the "
                "rollouts and the trained policy would disagree without an error. Target the decoder's linear "
                f"layers, e.g. `lora_target_modules: {DECODER_TARGETS}` (or all-linear, which leaves the head out)"
            )
        )


def _check_adapter_room(meta_model, model_args, adapter_root: str | None) -> None:
    """The adapter's size from the meta model (TRL keeps a 4-bit policy's adapter in bf16, peft others in fp32)
    against the free space where the engine will write it (train/engines/adapter_storage.py)."""

    try:
        choose_root(adapter_bytes(meta_model, 2 if model_args.load_in_4bit else 4), adapter_root)
    except OSError as exc:
        raise ConfigError(f"use_vllm with a LoRA policy: {exc}") from None


def _vllm_refusal(problem: str) -> str:
    """One paragraph: what vLLM cannot serve and its fix, then the way to keep the setting."""
    return f"use_vllm with a LoRA policy: {problem}; or set use_vllm: false (transformers generation serves it)."


def _on_meta(model_args, lora_config, trust_remote_code: bool):
    """The peft model of this config on the meta device, or None when the architecture cannot be built here.

    A config whose targets match no module is refused here with peft's reason. DoRA and parameter targets
    do not change which modules are adapted, so they are left out of the copy that is resolved.
    """
    from peft import NoMatchingPeftModuleError

    probe = copy.deepcopy(lora_config)
    probe.use_dora = False
    probe.target_parameters = None
    path, revision = model_args.model_name_or_path, model_args.model_revision
    try:
        return lora_model_on_meta(path, probe, revision=revision, trust_remote_code=trust_remote_code)
    except NoMatchingPeftModuleError as exc:
        raise ConfigError(_no_match(model_args, exc)) from None
    except Exception as exc:  # a pre-check only: loading the model reports its own errors
        logger.warning("could not resolve the LoRA targets before loading (%s); checking their names only", exc)
        return None


def _no_match(model_args, exc) -> str:
    targets = model_args.lora_target_modules
    if isinstance(targets, str):
        return (
            f"lora_target_modules: {targets!r} matches no module of {model_args.model_name_or_path}. A string is a "
            "regular expression that must match a module's whole path (e.g. model.layers.0.self_attn.q_proj); "
            f"write a list of names to match modules by name (`lora_target_modules: [{targets}]`), or a regex such "
            f"as '.*\\.{targets}' ({exc})"
        )
    return f"lora_target_modules: {targets!r} matches no module of {model_args.model_name_or_path} ({exc})"


def _check_target_names(targets) -> None:
    """Without the model: the names of the head and the embeddings in the targets (what TRL checks)."""
    names = [targets] if isinstance(targets, str) else list(targets or [])
    hits = [name for name in names if any(head in name for head in HEAD_NAMES)]
    if hits:
        raise ConfigError(
            _vllm_refusal(
                f"lora_target_modules {hits} name the output layer or the input embeddings: vLLM serves LoRA "
                "there differently from peft (its prompt logprobs drop the head's delta, vLLM issue #51594), so "
                "the rollouts and the trained policy would disagree without an error. Target the decoder's linear "
                f"layers, e.g. `lora_target_modules: {DECODER_TARGETS}`"
            )
        )
