"""The CPU model loaded in 4-bit as ``configs/cpu-smollm2.yaml`` trains it (nf4, double quantization, fp32 compute):
the base of the tests that compare a CPU kernel with bitsandbytes on the real weights."""

from pathlib import Path


def load_4bit_base(model_dir: Path):
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    quantization = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.float32,
    )
    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, quantization_config=quantization)
