"""Rollout speed: the adapter engine (vLLM + LoRARequest) vs transformers generate, and the sync cost.

    python scripts/bench_rollouts.py                                   # CPU: configs/cpu-smollm2-vllm.yaml
    python scripts/bench_rollouts.py --config configs/qwen2.5-1.5b-qlora-vllm.yaml --prompts 16 --max-tokens 512

Both sides run the same policy (the config's base, 4-bit when the config says so, plus one LoRA
adapter with non-zero weights), the same prompts, sampling settings and token budget, interleaved
(HF, vLLM, HF, vLLM, ...) so load drift on a shared machine hits both alike. The engine is the one
the trainer uses (``AdapterSyncGeneration`` through TRL's ``generate``), and the sync cost is its
``sync_weights`` (save the adapter, load it under a new id) timed over several rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def build_policy(model_args):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import get_quantization_config

    dtype = getattr(torch, model_args.dtype) if model_args.dtype not in (None, "auto") else "auto"
    model = AutoModelForCausalLM.from_pretrained(
        model_args.model_name_or_path, dtype=dtype, quantization_config=get_quantization_config(model_args)
    )
    lora = LoraConfig(
        r=model_args.lora_r,
        lora_alpha=model_args.lora_alpha,
        target_modules=model_args.lora_target_modules,
        lora_dropout=0.0,
    )
    policy = get_peft_model(model, lora)
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:  # a trained-looking adapter: both sides must actually apply it
            torch.nn.init.normal_(param, std=0.01)
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    tokenizer.padding_side = "left"
    return policy.eval(), tokenizer


def prompt_ids(tokenizer, count: int) -> list[list[int]]:
    from evals.math_data import load_problems
    from rewards import build_messages

    problems = load_problems("arithmetic", split="train", limit=count, seed=0)
    return [
        tokenizer.apply_chat_template(build_messages(p.question, 1), add_generation_prompt=True, return_dict=False)
        for p in problems
    ]


def hf_round(policy, tokenizer, prompts, generations, max_tokens, temperature) -> tuple[int, float]:
    import torch

    batch = tokenizer.pad({"input_ids": [p for p in prompts for _ in range(generations)]}, return_tensors="pt")
    start = time.perf_counter()
    with torch.no_grad():
        out = policy.generate(
            **batch,
            do_sample=True,
            temperature=temperature,
            max_new_tokens=max_tokens,
            pad_token_id=tokenizer.pad_token_id,
        )
    seconds = time.perf_counter() - start
    completions = out[:, batch["input_ids"].shape[1] :]
    tokens = int((completions != tokenizer.pad_token_id).sum())
    return tokens, seconds


def vllm_round(engine, prompts, generations) -> tuple[int, float]:
    start = time.perf_counter()
    _, completion_ids, _, _ = engine.generate(
        prompts=[p for p in prompts for _ in range(generations)], images=None, num_generations=generations
    )
    return sum(len(c) for c in completion_ids), time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/cpu-smollm2-vllm.yaml")
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per side")
    parser.add_argument("--syncs", type=int, default=10)
    opts = parser.parse_args()

    from accelerate import Accelerator

    from train.config import parse_config
    from train.engines.colocated import AdapterSyncGeneration, engine_settings

    _, training_args, model_args = parse_config(["--config", opts.config])
    model_args.model_name_or_path = str(Path(model_args.model_name_or_path).resolve())
    accelerator = Accelerator(cpu=training_args.use_cpu)
    policy, tokenizer = build_policy(model_args)
    prompts = prompt_ids(tokenizer, opts.prompts)
    temperature = training_args.temperature

    load_start = time.perf_counter()
    engine = AdapterSyncGeneration(
        model=policy,
        accelerator=accelerator,
        processing_class=tokenizer,
        settings=engine_settings(model_args, training_args),
        gpu_memory_utilization=training_args.vllm_gpu_memory_utilization,
        max_model_length=training_args.vllm_max_model_length,
        max_num_seqs=opts.prompts * opts.generations,
        temperature=temperature,
        max_completion_length=opts.max_tokens,
        logprobs=0,
    )
    load_seconds = time.perf_counter() - load_start
    engine.sync_weights()

    hf, vl = [], []
    vllm_round(engine, prompts[:1], 1)  # first-call warm-up, not counted
    for _ in range(opts.rounds):
        hf.append(hf_round(policy, tokenizer, prompts, opts.generations, opts.max_tokens, temperature))
        vl.append(vllm_round(engine, prompts, opts.generations))
    sync_ms = []
    for _ in range(opts.syncs):
        start = time.perf_counter()
        engine.sync_weights()
        sync_ms.append(1000 * (time.perf_counter() - start))
    engine.close()

    def rate(rounds):
        return sum(t for t, _ in rounds) / sum(s for _, s in rounds)

    hf_rate, vllm_rate = rate(hf), rate(vl)
    quant = "4-bit nf4" if model_args.load_in_4bit else model_args.dtype
    print(f"policy: {model_args.model_name_or_path} ({quant}) + LoRA r{model_args.lora_r}; device {accelerator.device}")
    print(
        f"rollouts: {opts.prompts} prompts x {opts.generations} completions x <= {opts.max_tokens} tokens, "
        f"temperature {temperature}, {opts.rounds} interleaved rounds per side"
    )
    print(f"  transformers generate + peft   {hf_rate:8.1f} tokens/s")
    print(f"  adapter engine (vLLM + LoRA)   {vllm_rate:8.1f} tokens/s   ratio vLLM/HF {vllm_rate / hf_rate:.2f}")
    print(
        f"adapter sync (save + load under a new id), {opts.syncs} rounds: median {statistics.median(sync_ms):.0f} ms, "
        f"max {max(sync_ms):.0f} ms; vLLM engine start {load_seconds:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
