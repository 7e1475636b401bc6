"""The NVIDIA driver and cards this machine has, read without torch, and why torch may still see no GPU.

``pip install -e '.[train,vllm]'`` resolves torch 2.13 built for CUDA 13.0 (vLLM 0.29-0.30 pin it; 0.26-0.27 pin CUDA
13 builds too). NVIDIA's CUDA compatibility table: CUDA 13.x needs driver >= 580, 12.x >= 525, 11.x >= 450; and CUDA
13 dropped Maxwell, Pascal and Volta, so its builds run on compute capability >= 7.5 only. On an older driver torch
simply reports no GPU (``torch.cuda.is_available()`` is False), which pre-flight used to read as "no CUDA GPU": here
the driver is read from NVML (nvidia-ml-py, or the copy vLLM ships), else ``/proc/driver/nvidia/version``, else
``nvidia-smi``, so the refusal can name the driver seen, the minimum, and what to install.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from train.vllm_seams import nvml

# NVIDIA's minor-version compatibility table (docs.nvidia.com/deploy/cuda-compatibility): CUDA major -> driver branch
DRIVER_MINIMUM = {13: 580, 12: 525, 11: 450}
# the lowest compute capability each CUDA major's toolkit still builds for (CUDA 13: Turing; 12: Maxwell)
CAPABILITY_MINIMUM = {13: (7, 5), 12: (5, 0), 11: (3, 5)}
RESOLVED_CUDA = "13.0"  # the CUDA of the torch pip resolves for '.[train,vllm]' (torch 2.13, cuda-toolkit 13.0.x)
INSTALL_DRIVER = (
    "install NVIDIA driver {minimum} or newer (the {minimum} branch or later: e.g. Ubuntu's nvidia-driver-{minimum} "
    "package, or NVIDIA's CUDA 13 repository), reboot, and check that nvidia-smi shows it"
)


@dataclass(frozen=True)
class Card:
    name: str
    capability: tuple[int, int] | None  # None: not readable where the driver was read


@dataclass(frozen=True)
class DriverSeen:
    version: str  # "535.183.01"
    cards: tuple[Card, ...]
    source: str  # where it was read: NVML, /proc/driver/nvidia/version, nvidia-smi

    @property
    def major(self) -> int | None:
        found = re.match(r"(\d+)", self.version)
        return int(found.group(1)) if found else None

    def describe(self) -> str:
        cards = ", ".join(
            card.name + (f" (compute capability {card.capability[0]}.{card.capability[1]})" if card.capability else "")
            for card in self.cards
        )
        return f"NVIDIA driver {self.version}" + (f" with {cards}" if cards else "")


def nvml_module():
    """The ``pynvml`` binding: nvidia-ml-py's when installed, else the copy vLLM ships (ImportError without both)."""
    try:
        import pynvml
    except ImportError:
        return nvml()
    return pynvml


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_library_present() -> bool:
    """Whether the driver's NVML library loads: checked first, since the binding vLLM ships costs an import of vLLM
    (seconds) that a machine without a driver should not pay at every refusal."""
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def from_nvml() -> DriverSeen | None:
    if not nvml_library_present():
        return None
    try:
        nvml = nvml_module()
    except (ImportError, RuntimeError, OSError):  # no binding, or a vLLM that fails to import: /proc and nvidia-smi
        return None
    try:
        nvml.nvmlInit()
    except nvml.NVMLError:  # no libnvidia-ml.so: no driver (or none this process may load)
        return None
    try:
        version = _text(nvml.nvmlSystemGetDriverVersion())
        cards = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            try:
                capability = tuple(nvml.nvmlDeviceGetCudaComputeCapability(handle))
            except nvml.NVMLError:
                capability = None
            cards.append(Card(_text(nvml.nvmlDeviceGetName(handle)), capability))
        return DriverSeen(version, tuple(cards), "NVML")
    except nvml.NVMLError:
        return None
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass


def from_proc(path: str = "/proc/driver/nvidia/version") -> DriverSeen | None:
    """The kernel module's version line ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  ...")."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return None
    found = re.search(r"Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)", text)
    return DriverSeen(found.group(1), (), path) if found else None


def from_nvidia_smi() -> DriverSeen | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--query-gpu=driver_version,name,compute_cap", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [[part.strip() for part in line.split(",")] for line in out.splitlines() if line.strip()]
    if not rows:
        return None
    cards = []
    for row in rows:
        capability = None
        if len(row) > 2 and re.fullmatch(r"\d+\.\d+", row[2]):
            capability = tuple(int(x) for x in row[2].split("."))
        cards.append(Card(row[1] if len(row) > 1 else "?", capability))
    return DriverSeen(rows[0][0], tuple(cards), "nvidia-smi")


def driver_seen() -> DriverSeen | None:
    """The NVIDIA driver on this machine, read without torch (None: no driver found at all)."""
    for read in (from_nvml, from_proc, from_nvidia_smi):
        found = read()
        if found is not None:
            return found
    return None


def torch_build() -> tuple[str, str | None]:
    """(torch's version, the CUDA it was built for: None for a CPU build). Tests replace it."""
    import torch

    return torch.__version__, torch.version.cuda


def cuda_major(cuda: str | None) -> int | None:
    found = re.match(r"(\d+)", cuda or "")
    return int(found.group(1)) if found else None


def why_torch_sees_no_gpu(seen: DriverSeen | None = None, build: tuple[str, str | None] | None = None):
    """(what is wrong, what to do) when this machine has an NVIDIA driver that torch cannot use; None when no
    driver is seen (no GPU at all: the plain "no CUDA GPU is visible" refusal stands)."""
    seen = seen if seen is not None else driver_seen()
    if seen is None:
        return None
    version, cuda = build or torch_build()
    major = cuda_major(cuda)
    if major is None:
        minimum = DRIVER_MINIMUM[cuda_major(RESOLVED_CUDA)]
        return (
            f"torch sees no GPU: torch {version} is a CPU-only build, and this machine has {seen.describe()}",
            f"install torch's CUDA build (pip install -e '.[train,vllm]' resolves torch 2.13 for CUDA {RESOLVED_CUDA}, "
            f"which needs driver >= {minimum}; this one is {seen.version})",
        )
    minimum = DRIVER_MINIMUM.get(major)
    if minimum is not None and seen.major is not None and seen.major < minimum:
        return (
            f"torch sees no GPU: {seen.describe()} is older than torch {version} (built for CUDA {cuda}) needs: "
            f"driver >= {minimum} for CUDA {major}.x (read from {seen.source})",
            INSTALL_DRIVER.format(minimum=minimum)
            + "; vLLM 0.26-0.30 all pin a CUDA 13 torch, so an older driver can train only without vLLM "
            "(use_vllm: false) under a torch built for the CUDA its driver runs",
        )
    floor = CAPABILITY_MINIMUM.get(major)
    known = [card for card in seen.cards if card.capability is not None]
    if floor and known and all(card.capability < floor for card in known):
        return (
            f"torch sees no usable GPU: {seen.describe()}, below compute capability {floor[0]}.{floor[1]}, the "
            f"lowest torch {version} (built for CUDA {cuda}) runs (CUDA {major} dropped older architectures)",
            "run on a card of compute capability >= 7.5 (T4, A10G, L4, A100, H100, ...); see docs/gpu-16gb.md "
            "for what an older card can run",
        )
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    hidden = f" (CUDA_VISIBLE_DEVICES={visible!r})" if visible is not None else ""
    return (
        f"torch {version} (CUDA {cuda}) sees no GPU although this machine has {seen.describe()}{hidden}",
        "check CUDA_VISIBLE_DEVICES, the container's GPU flags (--gpus all) and that nvidia-smi works in this "
        "environment",
    )
