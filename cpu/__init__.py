"""CPU kernels: the trainer's generation and the ``verigrpo/`` checkpoint evals run the same model code on CPU, so
both use these (torch + transformers + bitsandbytes; no Inspect, nothing of train/ or evals/).

- ``capability``: what this CPU computes natively (torch's capability, AVX512-BF16/AMX flags) and the compute dtype
  ``dtype: auto`` means on it (``auto_dtype``; train/config/cpu_dtype.py applies it)
- ``bnb_cpu``: a 4-bit (bitsandbytes) model computes on CPU what it computes in training, also in eval mode
  (``keep_training_kernel``), and an inference-only one, or a training step, dequantizes each layer once
  (``dequantize_once``, ``dequantized``)
- ``lora_dtype``: a 4-bit model's LoRA adapter trains in float32 where the CPU would emulate TRL's bf16 adapter
  (``fp32_adapter_on_emulating_cpu``)
- ``grouped_attention``: decoding without copying the KV cache once per query head (``grouped_kv_attention``)
- ``greedy_batch``: greedy decoding of a batch whose prompts share a prefix (computed once; finished rows dropped),
  behind ``evals/providers/checkpoint_model.py``'s ``generate``
- ``transformers_seams``, ``bnb_seams``: every private transformers / bitsandbytes name verigrpo relies on, in one
  module per library, each pinned by a test (tests/cpu/test_*_seams.py)
"""

from cpu.bnb_seams import quiet_missing_hub_kernel  # noqa: E402 - bitsandbytes warns on import that an optional Hub kernel is absent

quiet_missing_hub_kernel()
