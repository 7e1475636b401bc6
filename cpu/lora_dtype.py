"""A 4-bit model's LoRA adapter in float32 on a CPU without native bf16: TRL's bf16 adapter is emulated there.

TRL casts a QLoRA adapter to bf16 when it builds the trainer (``GRPOTrainer.__init__``, after the QLoRA paper), so every
LoRA layer multiplies in bf16. With AVX512-BF16 or AMX that is hardware; on an AVX2-only CPU torch computes each bf16
product with its reference kernel, one fp32 dot product per output: the rank-16 up-projection of the demo's batch took
~200-270 ms a call against ~2 ms in float32, and in one run the fp32 adapter took 0.57-0.63x the generation time and
0.68x the backward time of the bf16 one (docs/benchmarks.md). So where the CPU would emulate bf16 and the 4-bit layers
compute in float32 (``dtype: float32``, or ``dtype: auto`` on such a CPU), the adapter trains in float32 too: the
trainable parameters are cast back before the optimizer is built (its state then is float32 as well).

This changes the numbers on such CPUs (logprobs by at most ~2e-3, LoRA gradients by ~0.3 % in that run), never on a
CPU with native bf16 and never off CPU: TRL's bf16 adapter stays there. torch only; nothing of train/ or evals/.
"""

from __future__ import annotations

from cpu.capability import CpuKind, detect


def fp32_adapter_on_emulating_cpu(model, kind: CpuKind | None = None) -> str | None:
    """Cast ``model``'s bf16 trainable parameters to float32 when the model is on a CPU that emulates bf16 and its
    4-bit layers compute in float32; the start-up line that says so, or None when nothing was cast."""
    import torch

    trainable = [p for name, p in model.named_parameters() if p.requires_grad and "lora_magnitude_vector" not in name]
    if not trainable or any(p.device.type != "cpu" for p in trainable):
        return None
    if not any(p.dtype == torch.bfloat16 for p in trainable) or _four_bit_compute_dtype(model) != torch.float32:
        return None
    kind = kind or detect()
    if kind.native_bf16:
        return None
    for param in trainable:
        if param.dtype == torch.bfloat16:
            param.data = param.data.to(torch.float32)
    return (
        f"[verigrpo] LoRA adapter in float32 (TRL keeps a 4-bit model's adapter in bf16, which this CPU emulates: "
        f"{kind.describe()})"
    )


def _four_bit_compute_dtype(model):
    """The compute dtype of ``model``'s bitsandbytes 4-bit layers (None without any)."""
    try:
        from bitsandbytes.nn import Linear4bit
    except ImportError:
        return None
    return next((m.compute_dtype for m in model.modules() if isinstance(m, Linear4bit)), None)
