"""cpu/capability.py: which dtypes a CPU computes natively, and what ``dtype: auto`` chooses on it, as a table over
fake CPU kinds (torch's capability, /proc/cpuinfo flags, a oneDNN ISA cap) and checkpoint dtypes."""

import pytest

from cpu.capability import CpuKind, _cpuinfo_flags, auto_dtype, detect

AVX2_EPYC = frozenset("fpu sse sse2 avx f16c fma avx2 bmi2 sha_ni vaes vpclmulqdq".split())  # this project's AVX2 VM
AVX512 = AVX2_EPYC | {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni"}  # Skylake/Cascade Lake: no bf16
AVX512_BF16 = AVX512 | {"avx512_bf16"}  # Zen 4, Cooper Lake: the other machine kind here
AMX = AVX512_BF16 | {"amx_bf16", "amx_tile", "amx_int8", "avx512_fp16"}  # Sapphire Rapids


@pytest.mark.parametrize(
    ("capability", "flags", "onednn", "checkpoint", "chosen"),
    [
        # AVX2 only (no AVX-512): bf16 would be emulated
        ("AVX2", AVX2_EPYC, None, "bfloat16", "float32"),
        ("AVX2", AVX2_EPYC, None, "float32", "float32"),
        ("AVX2", AVX2_EPYC, None, "float16", "float32"),
        ("AVX2", AVX2_EPYC, None, None, "float32"),  # a config.json without a dtype: transformers loads float32
        # AVX-512 without its bf16 extension
        ("AVX512", AVX512, None, "bfloat16", "float32"),
        # AVX512-BF16 and AMX: bf16 native, a bf16 checkpoint keeps bf16 (what dtype: bfloat16 did there)
        ("AVX512", AVX512_BF16, None, "bfloat16", "bfloat16"),
        ("AVX512", AVX512_BF16, None, "torch.bfloat16", "bfloat16"),
        ("AVX512", AVX512_BF16, None, "float32", "float32"),  # never narrower than the checkpoint
        ("AVX512", AVX512_BF16, None, "float16", "float32"),  # no AVX512-FP16
        ("AVX512", AMX, None, "bfloat16", "bfloat16"),
        ("AVX512", AMX, None, "float16", "float16"),
        # the same machines with torch or oneDNN held to AVX2 (how an AVX2 machine is approximated on a newer one)
        ("AVX2", AVX512_BF16, None, "bfloat16", "float32"),  # ATEN_CPU_CAPABILITY=avx2
        ("AVX512", AVX512_BF16, "AVX2", "bfloat16", "float32"),  # ONEDNN_MAX_CPU_ISA=AVX2
        ("AVX512", AVX512_BF16, "AVX512_CORE_VNNI", "bfloat16", "float32"),
        ("AVX512", AVX512_BF16, "avx512_core_bf16", "bfloat16", "bfloat16"),
        ("AVX512", AMX, "AVX512_CORE_AMX", "bfloat16", "bfloat16"),
        ("AVX512", AMX, "ALL", "bfloat16", "bfloat16"),
        # not x86: no flags this module knows
        ("DEFAULT", frozenset(), None, "bfloat16", "float32"),
        ("SVE256", frozenset({"fp", "asimd", "sve", "bf16"}), None, "bfloat16", "float32"),
    ],
)
def test_auto_chooses_native_dtypes(capability, flags, onednn, checkpoint, chosen):
    kind = CpuKind(capability, flags, onednn)
    choice = auto_dtype(kind, checkpoint)
    assert choice.dtype == chosen
    assert kind.native(choice.dtype)  # whatever auto chooses is computed in hardware
    assert capability in choice.reason


@pytest.mark.parametrize(
    ("kind", "phrase"),
    [
        (CpuKind("AVX2", AVX2_EPYC), "AVX2, no native bf16"),
        (CpuKind("AVX512", AVX512_BF16), "AVX512 with avx512_bf16"),
        (CpuKind("AVX512", AMX), "AVX512 with avx512_bf16 amx_bf16"),
        (CpuKind("AVX2", AVX512_BF16), "AVX2, no native bf16 (avx512_bf16 present, not used as torch dispatches now)"),
        (CpuKind("AVX512", AVX512_BF16, "AVX2"), "no native bf16 (avx512_bf16 present"),
    ],
)
def test_describe_names_the_kind_and_why(kind, phrase):
    assert phrase in kind.describe()


def test_float32_is_native_everywhere():
    assert CpuKind("DEFAULT", frozenset()).native("float32")
    assert CpuKind("AVX2", AVX2_EPYC).native(None)  # unset: float32


def test_flags_are_read_from_the_first_processor(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu avx2 avx512_bf16\n\nprocessor\t: 1\nflags\t\t: fpu\n"
    )
    assert _cpuinfo_flags(str(info)) == ["fpu", "avx2", "avx512_bf16"]
    assert _cpuinfo_flags(str(tmp_path / "missing")) == []


def test_detect_reads_this_machine(monkeypatch):
    import torch

    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    kind = detect()
    assert kind.capability == torch.backends.cpu.get_cpu_capability()
    assert kind.onednn_max_isa == "AVX2" and not kind.native_bf16


def test_the_step_profile_names_the_cpu_kind(monkeypatch):
    """scripts/bench_train.py --profile prints this line first: a step's split is only comparable within a kind."""
    import torch

    from scripts import bench_train

    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    line = bench_train.cpu_line()
    assert line.startswith(f"CPU: {torch.backends.cpu.get_cpu_capability()}, no native bf16")
    assert "ONEDNN_MAX_CPU_ISA=AVX2" in line and "load average" in line
