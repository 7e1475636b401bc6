"""The LoRA adapter of a 4-bit model trains in float32 on a CPU that emulates bf16 (cpu/lora_dtype.py), and stays in
TRL's bf16 where the CPU computes bf16 natively or the 4-bit layers compute in bf16."""

import pytest
import torch

from cpu.capability import CpuKind
from cpu.lora_dtype import fp32_adapter_on_emulating_cpu
from tests.helpers.cpu_policy import load_4bit_base

AVX2 = CpuKind(capability="AVX2", flags=frozenset({"avx2", "fma"}))
AVX512_BF16 = CpuKind(capability="AVX512", flags=frozenset({"avx512f", "avx512_bf16"}))


@pytest.fixture(scope="module")
def base(cpu_model):
    return load_4bit_base(cpu_model)


def trl_qlora(base):
    """The policy as TRL's GRPOTrainer leaves it: a LoRA adapter on the 4-bit base, its trainable weights in bf16."""
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "down_proj"]))
    for param in model.parameters():
        if param.requires_grad:
            param.data = param.data.to(torch.bfloat16)
    return model


def trainable_dtypes(model) -> set:
    return {p.dtype for p in model.parameters() if p.requires_grad}


@pytest.mark.parametrize(
    ("kind", "cast"),
    [(AVX2, True), (AVX512_BF16, False)],
    ids=["avx2-emulates-bf16", "avx512-bf16-native"],
)
def test_the_adapter_is_float32_only_where_the_cpu_emulates_bf16(base, kind, cast):
    model = trl_qlora(base)
    try:
        before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        line = fp32_adapter_on_emulating_cpu(model, kind)
        assert trainable_dtypes(model) == ({torch.float32} if cast else {torch.bfloat16})
        assert (line is not None) == cast
        if cast:
            assert "LoRA adapter in float32" in line and "AVX2, no native bf16" in line
        for name, param in model.named_parameters():  # the same values, exactly (bf16 -> fp32 is exact)
            if name in before:
                assert torch.equal(param.detach().float(), before[name].float()), name
        assert not any(
            p.requires_grad for n, p in model.named_parameters() if "lora_" not in n
        )  # the base stays frozen
    finally:
        model.unload()


def test_nothing_changes_without_bf16_trainables_or_with_bf16_compute():
    linear = torch.nn.Linear(4, 4)  # float32 trainables: nothing to cast
    assert fp32_adapter_on_emulating_cpu(linear, AVX2) is None and linear.weight.dtype == torch.float32
    bf16 = torch.nn.Linear(4, 4).to(torch.bfloat16)  # no 4-bit layers: not a QLoRA adapter, left as configured
    assert fp32_adapter_on_emulating_cpu(bf16, AVX2) is None and bf16.weight.dtype == torch.bfloat16
