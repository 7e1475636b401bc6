"""What vLLM can serve of a LoRA policy, known before any weights load: the ranks it builds buffers for, the
adapter settings it serves as the trainer computes them, and the modules a config's targets resolve to.

The rank table is vLLM's ``vllm.config.lora.MaxLoRARanks`` (identical in 0.26-0.31;
tests/train/engines/test_vllm_lora.py pins it to the installed vLLM). TRL 1.16 keeps the same table and
rounding in ``trl.experimental.async_grpo`` (``VLLM_LORA_RANKS``, ``round_lora_rank``), but importing that
module loads its whole async trainer (vLLM included; ~60 s measured on a loaded 2-core machine) and
warns that the API is unstable, so the nine numbers live here. Importing this module needs only the
standard library: torch, transformers and peft load inside ``lora_model_on_meta`` and ``write_probe_adapter``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def max_lora_rank(adapter_rank: int) -> int:
    """The smallest ``max_lora_rank`` vLLM accepts that holds an adapter of rank ``adapter_rank``.

    ``max_lora_rank`` is the size of vLLM's LoRA buffers, not the served rank: a rank-12 adapter is padded
    into the rank-16 buffers and scaled with its own ``lora_alpha / r``.

    >>> [max_lora_rank(r) for r in (1, 4, 12, 16, 300, 512)]
    [1, 8, 16, 16, 320, 512]
    """
    for rank in VLLM_LORA_RANKS:
        if rank >= adapter_rank:
            return rank
    raise ValueError(f"LoRA rank {adapter_rank} is above {VLLM_LORA_RANKS[-1]}, the largest rank vLLM serves")


def unservable_settings(lora_config) -> list[str]:
    """What in a built peft ``LoraConfig`` a vLLM LoRA adapter cannot carry, one reason per setting.

    The same set TRL refuses before its adapter-only sync (``validate_lora_for_vllm_sync`` in
    ``trl/experimental/async_grpo/async_grpo_trainer.py``), plus peft's ``lora_bias``, which it does not check.
    Head and embedding targets need the model: ``lora_model_on_meta`` resolves them.
    """
    problems = []
    if getattr(lora_config, "target_parameters", None):
        problems.append(
            f"lora_target_parameters {list(lora_config.target_parameters)} puts LoRA on parameters (fused MoE "
            "experts), which vLLM loads into its stacked expert buffers only when told the adapter's layout; "
            "declared wrong, the weights land in the wrong place without an error. Remove "
            "lora_target_parameters and target modules with lora_target_modules"
        )
    if lora_config.modules_to_save:
        problems.append(
            f"lora_modules_to_save {list(lora_config.modules_to_save)} trains full copies of those modules, which "
            "a LoRA adapter cannot carry to vLLM (vLLM refuses it: 'vLLM only supports modules_to_save being "
            "None'), so the run would stop at its first sync. Remove lora_modules_to_save"
        )
    if lora_config.use_dora:
        problems.append(
            "use_dora: vLLM does not serve DoRA adapters (their magnitude vector has no place in vLLM's LoRA "
            "layers; it refuses them at the first sync). Set use_dora: false"
        )
    if lora_config.bias != "none" or getattr(lora_config, "lora_bias", False):
        what = f"bias={lora_config.bias!r}" if lora_config.bias != "none" else "lora_bias=True"
        problems.append(
            f"the LoRA config trains biases ({what}), which vLLM does not serve ('Adapter bias is not supported'). "
            "Build the LoraConfig with bias='none' and lora_bias=False"
        )
    return problems


@dataclass(frozen=True)
class ResolvedTargets:
    """The modules a LoRA config puts adapters on, on one model, found with peft's own matching."""

    modules: tuple[str, ...]  # every adapted module's path, e.g. model.layers.0.self_attn.q_proj
    embeddings: tuple[str, ...]  # those that are the model's input embeddings or its output layer (lm_head)


def lora_model_on_meta(model_path: str, lora_config, *, revision=None, trust_remote_code: bool = False):
    """peft's model for ``lora_config`` on the architecture in ``model_path``'s config.json, on the meta
    device: no weight is read or allocated (well under a second for a 7B shape once the libraries are
    imported). Raises what transformers or peft raise (a config that cannot be read, no matching module)."""
    import torch
    from peft import get_peft_model
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(model_path, revision=revision, trust_remote_code=trust_remote_code)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, trust_remote_code=trust_remote_code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. peft's note on targeting a tied head: the caller decides
        return get_peft_model(model, lora_config)


def resolved_targets(peft_model) -> ResolvedTargets:
    """The adapted modules of a peft model, and which of them are the embeddings or the output layer
    (by identity with the model's ``get_input_embeddings``/``get_output_embeddings``, not by name)."""
    from peft.tuners.lora import LoraLayer

    base = peft_model.get_base_model()
    ends = {id(m) for m in (base.get_input_embeddings(), base.get_output_embeddings()) if m is not None}
    prefix = "base_model.model."
    modules, embeddings = [], []
    for name, module in peft_model.named_modules():
        if isinstance(module, LoraLayer):
            modules.append(name.removeprefix(prefix))
            if id(module) in ends or id(module.get_base_layer()) in ends:  # peft's wrapper replaced it
                embeddings.append(name.removeprefix(prefix))
    return ResolvedTargets(tuple(modules), tuple(embeddings))


def write_probe_adapter(peft_model, directory: Path) -> Path:
    """A zero LoRA adapter in peft's format with the run's rank and target modules, weights for one module only.

    Loading it on a vLLM server checks, before the trainer loads anything, what the first real adapter
    needs: runtime loading on, ``--enable-lora``, ``--max-lora-rank`` >= the rank, the module layout, and that
    the server reads this directory. Zero deltas change nothing; one module keeps it small for any model.
    """
    import torch
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    state = get_peft_model_state_dict(peft_model)  # names and shapes only (meta tensors)
    first = min(key.rsplit(".lora_", 1)[0] for key in state)
    tensors = {key: torch.zeros(value.shape) for key, value in state.items() if key.startswith(first + ".lora_")}
    directory.mkdir(parents=True, exist_ok=True)
    save_file(tensors, str(directory / "adapter_model.safetensors"))
    peft_model.peft_config[peft_model.active_adapter].save_pretrained(str(directory))  # adapter_config.json
    return directory
