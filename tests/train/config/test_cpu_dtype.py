"""train/config/cpu_dtype.py: ``dtype: auto`` becomes the dtype this CPU computes natively, an explicit dtype wins,
off CPU nothing changes, and the start-up line says which dtype and why."""

from types import SimpleNamespace

import pytest

from cpu.capability import CpuKind
from tests.helpers import MODEL
from train.config.cpu_dtype import checkpoint_dtype, resolve_cpu_dtype

AVX2 = CpuKind("AVX2", frozenset({"avx2", "fma"}))
AVX512_BF16 = CpuKind("AVX512", frozenset({"avx2", "avx512f", "avx512_bf16"}))


def args(dtype, four_bit=True, use_vllm=False, use_cpu=True):
    model = SimpleNamespace(
        dtype=dtype, load_in_4bit=four_bit, model_name_or_path="m", model_revision="main", trust_remote_code=False
    )
    return model, SimpleNamespace(use_cpu=use_cpu, use_vllm=use_vllm)


@pytest.mark.parametrize(
    ("configured", "kind", "checkpoint", "trained", "said"),
    [
        ("auto", AVX2, "bfloat16", "float32", "dtype: auto: the checkpoint is bfloat16, which this CPU would emulate"),
        ("auto", AVX512_BF16, "bfloat16", "bfloat16", "dtype: auto: the checkpoint's dtype, native on this CPU"),
        (None, AVX2, "bfloat16", "float32", "dtype: auto"),
        ("auto", AVX512_BF16, None, "float32", "the checkpoint's dtype"),
        # an explicit dtype is what the run uses, on any CPU
        ("float32", AVX512_BF16, "bfloat16", "float32", "as configured; AVX512 with avx512_bf16"),
        ("bfloat16", AVX512_BF16, "bfloat16", "bfloat16", "as configured"),
        ("bfloat16", AVX2, "bfloat16", "bfloat16", "as configured, which this CPU emulates (AVX2, no native bf16)"),
    ],
)
def test_the_choice_and_the_line(configured, kind, checkpoint, trained, said):
    model_args, training_args = args(configured)
    line = resolve_cpu_dtype(model_args, training_args, kind=kind, read_checkpoint=lambda _: checkpoint)
    assert model_args.dtype == trained
    assert line.startswith(f"[verigrpo] compute dtype {trained} ") and said in line


def test_off_cpu_nothing_changes(monkeypatch):
    import torch

    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)
    model_args, training_args = args("auto", use_cpu=False)
    assert resolve_cpu_dtype(model_args, training_args, kind=AVX2, read_checkpoint=lambda _: "bfloat16") is None
    assert model_args.dtype == "auto"


@pytest.mark.parametrize(
    ("kind", "rounding"),
    [(AVX2, True), (AVX512_BF16, False)],
)
def test_the_line_names_vllms_bf16_beside_a_float32_trainer(kind, rounding):
    model_args, training_args = args("auto", use_vllm=True)
    line = resolve_cpu_dtype(model_args, training_args, kind=kind, read_checkpoint=lambda _: "bfloat16")
    assert "vLLM's 4-bit rollouts compute in bfloat16" in line
    assert ("beside the trainer's float32" in line) is rounding


@pytest.mark.skipif(not MODEL.is_dir(), reason="models/smollm2-135m-instruct not prepared (make setup)")
def test_the_cpu_model_is_a_bf16_checkpoint():
    model_args, _ = args("auto")
    model_args.model_name_or_path = str(MODEL)
    assert checkpoint_dtype(model_args) == "bfloat16"
    model_args.model_name_or_path = str(MODEL / "missing")
    assert checkpoint_dtype(model_args) is None


def test_the_4bit_compute_dtype_and_loading_dtype_follow_the_choice():
    """What TRL builds from the resolved ModelConfig: the bnb compute dtype is the chosen one (``auto`` itself would
    fail there: transformers reads it as ``torch.auto``)."""
    from trl import ModelConfig, get_quantization_config

    for kind, expected in ((AVX2, "float32"), (AVX512_BF16, "bfloat16")):
        model_args = ModelConfig(model_name_or_path=str(MODEL), dtype="auto", load_in_4bit=True)
        resolve_cpu_dtype(model_args, SimpleNamespace(use_cpu=True), kind=kind, read_checkpoint=lambda _: "bfloat16")
        assert str(get_quantization_config(model_args).bnb_4bit_compute_dtype) == f"torch.{expected}"


def test_parse_config_resolves_auto_for_every_consumer(cpu_model):
    """The shipped vLLM CPU config says ``dtype: auto``: parsing resolves it (with the real checkpoint's config.json),
    so the checks, the loaders and run.json all see the dtype this CPU trains in, never ``auto``."""
    from cpu.capability import auto_dtype, detect
    from train.config import parse_config

    _, _, model_args = parse_config(["--config", "configs/cpu-smollm2-vllm.yaml"])
    assert model_args.dtype == auto_dtype(detect(), "bfloat16").dtype != "auto"
    assert model_args.cpu_dtype_line.startswith(f"[verigrpo] compute dtype {model_args.dtype} (dtype: auto: ")
