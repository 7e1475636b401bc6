"""``dtype: auto`` on CPU: the compute dtype chosen by the CPU the run is on, and the start-up line that says why.

On CPU a config may say ``dtype: auto``: the checkpoint's dtype (transformers' meaning of ``auto``), except float32
where this CPU would emulate the checkpoint's bf16 or fp16 (``cpu/capability.py``: bf16 is native only with
AVX512-BF16 or AMX). On an AVX512-BF16 machine a bf16 checkpoint therefore trains in bf16 exactly as
``dtype: bfloat16`` did; on an AVX2-only one it trains in float32. An explicit dtype (``float32``, ``bfloat16``) is
always what the run uses; the line only says when the CPU emulates it. ``resolve_cpu_dtype`` replaces ``auto`` by
the chosen dtype in the ModelConfig before anything reads it, so the 4-bit compute dtype, the model's loading dtype,
the vLLM engine's dtype and run.json (which the evals load the checkpoint from) all hold the dtype trained in.
Off CPU nothing changes.
"""

from __future__ import annotations

from collections.abc import Callable

from cpu.capability import CpuKind, auto_dtype, detect


def on_cpu(training_args) -> bool:
    """Whether the run computes on the CPU (``use_cpu``, or no accelerator torch can use)."""
    if getattr(training_args, "use_cpu", False):
        return True
    import torch

    return not torch.accelerator.is_available()


def checkpoint_dtype(model_args) -> str | None:
    """The dtype the checkpoint's config.json names (None when it names none or cannot be read here)."""
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(
            model_args.model_name_or_path,
            revision=getattr(model_args, "model_revision", None),
            trust_remote_code=getattr(model_args, "trust_remote_code", False),  # not a TRL 1.16 ModelConfig key
        )
    except (OSError, ValueError):
        return None
    found = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    return None if found is None else str(found).removeprefix("torch.")


def resolve_cpu_dtype(
    model_args,
    training_args,
    kind: CpuKind | None = None,
    read_checkpoint: Callable[[object], str | None] = checkpoint_dtype,
) -> str | None:
    """On CPU: replace ``dtype: auto`` in ``model_args`` by the dtype chosen for this CPU and return the start-up
    line (which dtype the trainer computes in, and why); off CPU: None, nothing changed. ``kind`` and
    ``read_checkpoint`` are this machine's and the checkpoint's config.json unless given (tests)."""
    if not on_cpu(training_args):
        return None
    kind = kind or detect()
    configured = model_args.dtype
    if configured in (None, "auto"):
        choice = auto_dtype(kind, read_checkpoint(model_args))
        model_args.dtype = choice.dtype
        line = f"compute dtype {choice.dtype} (dtype: auto: {choice.reason})"
    elif kind.native(configured):
        line = f"compute dtype {configured} (as configured; {kind.describe()})"
    else:
        line = (
            f"compute dtype {configured} as configured, which this CPU emulates ({kind.describe()}): float32 computes "
            "natively here and is several times faster (dtype: auto chooses by the CPU)"
        )
    if model_args.load_in_4bit and getattr(training_args, "use_vllm", False):
        line += "; vLLM's 4-bit rollouts compute in bfloat16"
        if model_args.dtype != "bfloat16":
            line += (
                f" beside the trainer's {model_args.dtype}: the two differ by bf16 rounding, which TRL's importance "
                "sampling corrects and the on-policy guard's 4-bit band allows"
            )
    return f"[verigrpo] {line}"
