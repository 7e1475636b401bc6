"""What this CPU computes natively, and the compute dtype that follows from it.

The project's machines are not one CPU kind. Where the CPU has AVX512-BF16 or AMX, torch and oneDNN compute a bf16
matrix product in hardware; on an AVX2-only CPU (most laptops, many desktops and cloud VMs) they convert to fp32 and
back, so a bf16 trainer pays the conversions in every forward and backward: the CPU vLLM recipe's step took 340-370 s
there against 50-70 s on an AVX512-BF16 machine, and 105-122 s with the trainer in fp32 beside the same engine.
fp32 is native everywhere.

``detect()`` reads one ``CpuKind`` (torch's CPU capability, /proc/cpuinfo's flags, a oneDNN ISA cap);
``native_bf16`` says whether bf16 is computed in hardware *as torch dispatches it now*: ``ATEN_CPU_CAPABILITY=avx2``
or ``ONEDNN_MAX_CPU_ISA=AVX2`` on a newer machine (the way to approximate an AVX2 machine there) count as AVX2.
``auto_dtype`` is what ``dtype: auto`` means on CPU (``train/config/cpu_dtype.py``): the checkpoint's dtype, as in
transformers, except that a 16-bit checkpoint computes in float32 where the CPU would emulate 16-bit arithmetic.
torch only; nothing of train/ or evals/.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# /proc/cpuinfo names of 16-bit arithmetic done in hardware (x86), per dtype
NATIVE_FLAGS = {"bfloat16": ("avx512_bf16", "amx_bf16"), "float16": ("avx512_fp16", "amx_fp16")}
# oneDNN's ISA caps (ONEDNN_MAX_CPU_ISA) that still allow its instructions for that dtype; any other cap (AVX2,
# AVX512_CORE, AVX512_CORE_VNNI, ...) keeps oneDNN below them, whatever the CPU has
NATIVE_ISA_CAPS = {"bfloat16": ("BF16", "AMX", "FP16", "AVX10", "ALL"), "float16": ("FP16", "AMX", "AVX10", "ALL")}


@dataclass(frozen=True)
class CpuKind:
    """The CPU as torch computes on it."""

    capability: str  # torch.backends.cpu.get_cpu_capability(): "AVX2", "AVX512", "DEFAULT", ...
    flags: frozenset[str]  # the first processor's /proc/cpuinfo flags (empty where there is none)
    onednn_max_isa: str | None = None  # ONEDNN_MAX_CPU_ISA when set

    def native(self, dtype: str) -> bool:
        """Whether this CPU computes ``dtype``'s matrix products in hardware: always for float32; for bfloat16 and
        float16 only with the instructions (AVX512-BF16/AMX-BF16, AVX512-FP16/AMX-FP16), torch dispatching to
        AVX-512 and oneDNN not capped below them."""
        name = _name(dtype) or "float32"
        if name not in NATIVE_FLAGS:
            return True
        if self.capability != "AVX512" or not any(flag in self.flags for flag in NATIVE_FLAGS[name]):
            return False
        cap = (self.onednn_max_isa or "").strip().upper()
        return not cap or any(word in cap for word in NATIVE_ISA_CAPS[name])

    @property
    def native_bf16(self) -> bool:
        return self.native("bfloat16")

    def describe(self) -> str:
        """One phrase for a log line: ``AVX2, no native bf16`` or ``AVX512 with avx512_bf16 amx_bf16``."""
        capped = f", ONEDNN_MAX_CPU_ISA={self.onednn_max_isa}" if self.onednn_max_isa else ""
        present = [flag for flag in NATIVE_FLAGS["bfloat16"] if flag in self.flags]
        if self.native_bf16:
            return f"{self.capability} with {' '.join(present)}{capped}"
        unused = f" ({' '.join(present)} present, not used as torch dispatches now)" if present else ""
        return f"{self.capability}, no native bf16{unused}{capped}"


@dataclass(frozen=True)
class DtypeChoice:
    """A compute dtype and why it was chosen."""

    dtype: str  # "float32", "bfloat16", ...
    reason: str


def detect() -> CpuKind:
    """This machine's ``CpuKind``."""
    import torch

    return CpuKind(
        capability=torch.backends.cpu.get_cpu_capability(),
        flags=frozenset(_cpuinfo_flags()),
        onednn_max_isa=os.environ.get("ONEDNN_MAX_CPU_ISA") or None,
    )


def auto_dtype(kind: CpuKind, checkpoint_dtype: str | None) -> DtypeChoice:
    """``dtype: auto`` on CPU: the checkpoint's dtype (float32 when it names none), as transformers reads ``auto``,
    except float32 where this CPU would emulate the checkpoint's 16-bit dtype."""
    checkpoint = _name(checkpoint_dtype) or "float32"
    if kind.native(checkpoint):
        return DtypeChoice(checkpoint, f"the checkpoint's dtype, native on this CPU ({kind.describe()})")
    return DtypeChoice(
        "float32",
        f"the checkpoint is {checkpoint}, which this CPU would emulate ({kind.describe()}); float32 is native",
    )


def _name(dtype) -> str | None:
    """A dtype (``torch.bfloat16``, ``"torch.bfloat16"``, ``"bfloat16"``) as its short name; None for None/auto."""
    if dtype is None:
        return None
    name = str(dtype).removeprefix("torch.")
    return None if name == "auto" else {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}.get(name, name)


def _cpuinfo_flags(path: str = "/proc/cpuinfo") -> list[str]:
    try:
        with open(path) as info:
            for line in info:
                if line.split(":", 1)[0].strip() == "flags":
                    return line.split(":", 1)[1].split()
    except OSError:
        pass
    return []
