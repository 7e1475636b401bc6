"""Pre-flight: what this GPU's compute capability cannot run, refused before any model loads.

vLLM refuses bfloat16 below compute capability 8.0 (``vllm/platforms/cuda.py`` ``check_if_supports_dtype``:
"Bfloat16 is only supported on GPUs with compute capability of at least 8.0"), and the colocated engine
runs a 4-bit base in bf16 whatever the config says: vLLM's bitsandbytes layers (vllm-bnb-plugin 0.0.3,
``quantization/linear.py``; vLLM <= 0.27 the same) cast activations to bf16 even when vLLM runs in fp16.
transformers meanwhile accepts ``bf16: true`` on such a card (``is_bf16_supported`` counts emulation), so
without this check a T4 (7.5) or V100 (7.0) user would wait for the policy to load and then see vLLM fail.
"""

from __future__ import annotations

from train.config.arguments import ConfigError
from train.engines.choice import Engine, rollout_engine

BF16_CAPABILITY = (8, 0)


class DeviceCapabilityError(ConfigError):
    """A setting this GPU's compute capability cannot run, with what works instead."""


def device_capability() -> tuple[int, int]:
    """(major, minor) of the current CUDA device (the one place that asks; tests replace it)."""
    import torch

    return tuple(torch.cuda.get_device_capability())


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name()


def check_device_capability(training_args, model_args) -> None:
    """Refuse a colocated vLLM engine that would compute in bf16 on a card below 8.0 (call with a GPU visible)."""
    if rollout_engine(training_args, model_args) is not Engine.COLOCATED:
        return  # transformers generation (no vLLM), or vLLM servers with their own GPUs
    capability = device_capability()
    if capability >= BF16_CAPABILITY:
        return
    card = f"{device_name()} (compute capability {capability[0]}.{capability[1]})"
    if model_args.load_in_4bit:
        raise DeviceCapabilityError(
            f"load_in_4bit with use_vllm on {card}: vLLM's bitsandbytes layers compute in bfloat16, which vLLM refuses "
            "below compute capability 8.0, so the engine would fail after the policy has loaded. What works here: "
            "transformers generation with the 4-bit policy in float16 (use_vllm: false, dtype: float16, bf16: false, "
            "fp16: true), or vLLM with a full-precision base (load_in_4bit: false, "
            "dtype: float16, bf16: false, fp16: true) where pre-flight's memory estimate says it fits."
        )
    if str(model_args.dtype) in ("bfloat16", "torch.bfloat16"):
        raise DeviceCapabilityError(
            f"dtype: bfloat16 with use_vllm on {card}: vLLM refuses bfloat16 below compute capability 8.0. "
            "Set dtype: float16 (and bf16: false, fp16: true), or use_vllm: false."
        )
