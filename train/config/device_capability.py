"""Pre-flight: what this GPU's compute capability cannot run, refused before any model loads.

vLLM refuses bfloat16 below compute capability 8.0 (``vllm/platforms/cuda.py`` ``check_if_supports_dtype``:
"Bfloat16 is only supported on GPUs with compute capability of at least 8.0"), and the colocated engine
runs a 4-bit base in bf16 whatever the config says: vLLM's bitsandbytes layers (vllm-bnb-plugin 0.0.3,
``quantization/linear.py``; vLLM <= 0.27 the same) cast activations to bf16 even when vLLM runs in fp16.
transformers meanwhile accepts ``bf16: true`` on such a card (``is_bf16_supported`` counts emulation), so
without this check a T4 (7.5) user would wait for the policy to load and then see vLLM fail.

Below that, the torch the project resolves (2.13, built for CUDA 13.0; vLLM 0.26-0.30 all pin a CUDA 13 torch) has
no kernels at all: CUDA 13 dropped Maxwell, Pascal and Volta, so its builds start at compute capability 7.5 (read
from ``torch.cuda.get_arch_list()``). torch still reports such a card (a V100, 7.0) as available and fails at the
first kernel ("no kernel image is available"); ``check_torch_runs_on_device`` refuses it first, with what runs there.
"""

from __future__ import annotations

import re

from train.config.arguments import ConfigError
from train.config.nvidia_driver import CAPABILITY_MINIMUM, RESOLVED_CUDA, cuda_major, torch_build
from train.engines.choice import Engine, rollout_engine

BF16_CAPABILITY = (8, 0)
OLD_CARD_ADVICE = (
    "What runs on this card: transformers generation without vLLM (use_vllm: false, dtype: float16, bf16: false, "
    "fp16: true; e.g. configs/qwen2.5-1.5b-qlora.yaml) under a torch built for CUDA 12.x whose "
    "torch.cuda.get_arch_list() includes sm_{major}{minor} (PyTorch's cu126 wheels: pip install torch "
    "--index-url https://download.pytorch.org/whl/cu126, within this project's torch>=2.6 pin), with no vLLM "
    "installed (every supported vLLM pins torch's CUDA 13 build); or a card of compute capability {floor} or newer"
)


class DeviceCapabilityError(ConfigError):
    """A setting this GPU's compute capability cannot run, with what works instead."""


def device_capability() -> tuple[int, int]:
    """(major, minor) of the current CUDA device (the one place that asks; tests replace it)."""
    import torch

    return tuple(torch.cuda.get_device_capability())


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name()


def torch_arch_list() -> list[str]:
    """The GPU architectures torch was compiled for (``sm_75``, ...; empty for a CPU build). Tests replace it."""
    import torch

    return list(torch.cuda.get_arch_list())


def capability_floor() -> tuple[int, int]:
    """The lowest compute capability torch has kernels for: its arch list's lowest ``sm_XY``, else what its CUDA
    major builds for (CUDA 13: 7.5), else the resolved stack's (CUDA 13.0)."""
    found = [re.fullmatch(r"sm_(\d+?)(\d)a?", arch) for arch in torch_arch_list()]
    sm = sorted((int(m.group(1)), int(m.group(2))) for m in found if m)
    if sm:
        return sm[0]
    _, cuda = torch_build()
    return CAPABILITY_MINIMUM.get(cuda_major(cuda) or 0) or CAPABILITY_MINIMUM[cuda_major(RESOLVED_CUDA)]


def check_torch_runs_on_device() -> None:
    """Refuse a card below what this torch build has kernels for (call with a GPU visible), with what runs there."""
    capability, floor = device_capability(), capability_floor()
    if capability >= floor:
        return
    version, cuda = torch_build()
    card = f"{device_name()} (compute capability {capability[0]}.{capability[1]})"
    raise DeviceCapabilityError(
        f"this GPU recipe on {card}: torch {version} (built for CUDA {cuda or RESOLVED_CUDA}) has kernels for compute "
        f"capability {floor[0]}.{floor[1]} and newer only (CUDA 13 dropped Maxwell, Pascal and Volta), so its first "
        "kernel would fail with 'no kernel image is available'. "
        + OLD_CARD_ADVICE.format(major=capability[0], minor=capability[1], floor=f"{floor[0]}.{floor[1]}")
        + "."
    )


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
