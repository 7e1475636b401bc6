"""Rollout speed: the adapter engine (vLLM + LoRARequest) vs transformers generate, and the sync cost.

    python scripts/bench_rollouts.py                                   # CPU: configs/cpu-smollm2-vllm.yaml
    python scripts/bench_rollouts.py --config configs/qwen2.5-1.5b-qlora-vllm.yaml --prompts 16 --max-tokens 512

Both sides run the same policy (the config's base, 4-bit when the config says so, plus one LoRA
adapter with non-zero weights), the same prompts, sampling settings and token budget, interleaved
(HF, vLLM, HF, vLLM, ...) so load drift on a shared machine hits both alike. The engine is the one
the trainer uses (``AdapterSyncGeneration`` through TRL's ``generate``), and the sync cost is its
``sync_weights`` (save the adapter, load it under a new id) timed over several rounds. The rounds are
``train/gpu_check/rollout_speed.py``, shared with ``scripts/check_gpu.py``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from train.config import parse_config
from train.gpu_check.rollout_speed import Sampling, arithmetic_prompt_ids, build_policy, compare, engine_round


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

    # lazy: colocated imports TRL, vLLM and torch (~10 s); --help must not wait for them
    from train.engines.colocated import AdapterSyncGeneration, engine_settings

    _, training_args, model_args = parse_config(["--config", opts.config])
    model_args.model_name_or_path = str(Path(model_args.model_name_or_path).resolve())
    accelerator = Accelerator(cpu=training_args.use_cpu)
    policy, tokenizer = build_policy(model_args)
    prompts = arithmetic_prompt_ids(tokenizer, opts.prompts)
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

    engine_round(engine, prompts[:1], 1)  # first-call warm-up, not counted
    speed = compare(
        policy, tokenizer, engine, prompts, opts.generations, Sampling(opts.max_tokens, temperature), opts.rounds
    )
    sync_ms = []
    for _ in range(opts.syncs):
        start = time.perf_counter()
        engine.sync_weights()
        sync_ms.append(1000 * (time.perf_counter() - start))
    engine.close()

    hf_rate, vllm_rate = speed["hf_tokens_per_s"], speed["engine_tokens_per_s"]
    quant = "4-bit nf4" if model_args.load_in_4bit else model_args.dtype
    print(f"policy: {model_args.model_name_or_path} ({quant}) + LoRA r{model_args.lora_r}; device {accelerator.device}")
    print(
        f"rollouts: {opts.prompts} prompts x {opts.generations} completions x <= {opts.max_tokens} tokens, "
        f"temperature {temperature}, {opts.rounds} interleaved rounds per side"
    )
    print(f"  transformers generate + peft   {hf_rate:8.1f} tokens/s")
    print(f"  adapter engine (vLLM + LoRA)   {vllm_rate:8.1f} tokens/s   ratio vLLM/HF {speed['ratio']:.2f}")
    print(
        f"adapter sync (save + load under a new id), {opts.syncs} rounds: median {statistics.median(sync_ms):.0f} ms, "
        f"max {max(sync_ms):.0f} ms; vLLM engine start {load_seconds:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
