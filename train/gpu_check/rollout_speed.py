"""Rollout speed: the adapter engine (vLLM + LoRARequest) against transformers ``generate`` + peft.

Both sides run the same policy, prompts, sampling settings and token budget, interleaved (HF, vLLM,
HF, vLLM, ...) so load drift on a shared machine hits both alike. The engine side goes through the
engine's own ``generate`` (TRL's, as the trainer calls it). Used by ``scripts/bench_rollouts.py``
(a fresh policy with a random adapter) and ``scripts/check_gpu.py`` (the trained policy of its run).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from cpu.bnb_cpu import keep_training_kernel
from problems.math_data import load_problems
from rewards import build_messages


def build_policy(model_args):
    """The config's base (4-bit when it says so) plus one LoRA adapter with non-zero weights, in eval mode."""
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
    keep_training_kernel(policy)  # measure the 4-bit math training runs, not bitsandbytes' CPU eval kernel
    torch.manual_seed(0)
    for name, param in policy.named_parameters():
        if "lora_B" in name:  # a trained-looking adapter: both sides must actually apply it
            torch.nn.init.normal_(param, std=0.01)
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    tokenizer.padding_side = "left"
    return policy.eval(), tokenizer


def arithmetic_prompt_ids(tokenizer, count: int) -> list[list[int]]:
    """``count`` chat prompts of the arithmetic task, as token ids."""
    problems = load_problems("arithmetic", split="train", limit=count, seed=0)
    return chat_prompt_ids(tokenizer, [build_messages(p.question, 1) for p in problems])


def chat_prompt_ids(tokenizer, conversations: list[list[dict]]) -> list[list[int]]:
    return [
        tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, return_dict=False)
        for messages in conversations
    ]


@dataclass(frozen=True)
class Sampling:
    """What both sides sample with (TRL's defaults: no top-k, no top-p cut)."""

    max_tokens: int
    temperature: float
    top_p: float = 1.0
    top_k: int = 0


def hf_round(policy, tokenizer, prompts, generations: int, sampling: Sampling) -> tuple[int, float]:
    """(completion tokens, seconds) of one ``generate`` call over every prompt x ``generations``."""
    import torch

    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"  # decoder-only generation continues the prompt's last token
    try:
        batch = tokenizer.pad({"input_ids": [p for p in prompts for _ in range(generations)]}, return_tensors="pt")
    finally:
        tokenizer.padding_side = side
    batch = {k: v.to(policy.device) for k, v in batch.items()}
    was_training = policy.training
    policy.eval()
    start = time.perf_counter()
    try:
        with torch.no_grad():
            out = policy.generate(
                **batch,
                do_sample=True,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                top_k=sampling.top_k,
                max_new_tokens=sampling.max_tokens,
                pad_token_id=pad,
                use_cache=True,  # a trainer with gradient checkpointing turns the cache off in the config
            )
    finally:
        policy.train(was_training)
    seconds = time.perf_counter() - start
    completions = out[:, batch["input_ids"].shape[1] :]
    tokens = int((completions != pad).sum())
    return tokens, seconds


def engine_round(engine, prompts, generations: int) -> tuple[int, float]:
    """(completion tokens, seconds) of one engine ``generate`` over every prompt x ``generations``."""
    start = time.perf_counter()
    _, completion_ids, _, _ = engine.generate(
        prompts=[p for p in prompts for _ in range(generations)], images=None, num_generations=generations
    )
    return sum(len(c) for c in completion_ids), time.perf_counter() - start


def tokens_per_second(rounds: list[tuple[int, float]]) -> float:
    return sum(t for t, _ in rounds) / sum(s for _, s in rounds)


def compare(policy, tokenizer, engine, prompts, generations: int, sampling: Sampling, rounds: int) -> dict:
    """Interleaved rounds of both sides; tokens/s of each and the ratio engine/HF."""
    hf, engine_rounds = [], []
    for _ in range(rounds):
        hf.append(hf_round(policy, tokenizer, prompts, generations, sampling))
        engine_rounds.append(engine_round(engine, prompts, generations))
    hf_rate, engine_rate = tokens_per_second(hf), tokens_per_second(engine_rounds)
    return {
        "prompts": len(prompts),
        "generations": generations,
        "max_tokens": sampling.max_tokens,
        "temperature": sampling.temperature,
        "rounds": rounds,
        "hf_tokens_per_s": hf_rate,
        "engine_tokens_per_s": engine_rate,
        "ratio": engine_rate / hf_rate,
        "hf_rounds": hf,
        "engine_rounds": engine_rounds,
    }
