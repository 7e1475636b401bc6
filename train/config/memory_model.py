"""The GPU memory model: one training process's peak by part, from the model's config.json and the recipe.

One module for both users: pre-flight refuses a config whose estimate exceeds the GPU
(``machine_checks.check_gpu_memory``, ``distributed_checks``), and the GPU check compares the same estimate with
what a run measured (``train/gpu_check/memory.py``). It imports nothing from the checks, so neither imports the
other through it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from train.engines.vllm_lora import max_lora_rank

GIB = 1024**3
CUDA_CONTEXT = 0.9 * GIB  # not in torch's counters, but on the card (assumed, not measured)
# bitsandbytes nf4 with double quantization, the trainer's 4-bit layers: 4 bits + ~0.127 bit/param of constants
NF4_NESTED_BYTES = 0.5 + 0.127 / 8
# vLLM's bitsandbytes loader flattens the nested absmax to one fp32 scale per 64-value block (``_dequantize_dq``):
# its copy of a 4-bit base holds 0.5 + 4/64 = 0.5625 B/param, and so does a trainer sharing it (vllm_share_base)
NF4_VLLM_BYTES = 0.5 + 4 / 64
# vLLM's CUDA graphs live in torch's graph pool, not in the memory level-1 sleep releases (``device_allocator/
# cumem.py`` releases only its "weights" and "kv_cache" pools): with sleep mode they stay while the trainer computes.
# vLLM counts them inside gpu_memory_utilization (it profiles them, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
# Assumed, not measured: vLLM reports 0.1-0.5 GiB of graph memory for 1.5B-8B models; no GPU has run this engine.
CUDA_GRAPH_POOL = 0.5 * GIB
# One decoder block's activations per token with 16-bit tensors and flash/SDPA attention (no attention scores):
# ~34 x hidden bytes (Korthikanti et al. 2022, "Reducing Activation Recomputation", sbh(34 + 5as/h)). With gradient
# checkpointing the backward recomputes one block at a time and holds its activations while it runs.
RECOMPUTE_BYTES_PER_HIDDEN = 34.0


@dataclass(frozen=True)
class ModelShape:
    """What memory depends on, from a transformers config.json."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    tied: bool

    @classmethod
    def from_config(cls, cfg: dict) -> ModelShape:
        heads = cfg["num_attention_heads"]
        return cls(
            vocab=cfg["vocab_size"],
            hidden=cfg["hidden_size"],
            layers=cfg["num_hidden_layers"],
            heads=heads,
            kv_heads=cfg.get("num_key_value_heads", heads),
            head_dim=cfg.get("head_dim") or cfg["hidden_size"] // heads,
            intermediate=cfg["intermediate_size"],
            tied=bool(cfg.get("tie_word_embeddings", False)),
        )

    @property
    def projections(self) -> dict[str, tuple[int, int]]:
        """(in, out) of each linear layer in one decoder block."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        h, i = self.hidden, self.intermediate
        return {
            "q_proj": (h, q),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (q, h),
            "gate_proj": (h, i),
            "up_proj": (h, i),
            "down_proj": (i, h),
        }

    @property
    def block_params(self) -> int:
        return self.layers * sum(a * b for a, b in self.projections.values())

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden * (1 if self.tied else 2)


@dataclass(frozen=True)
class MemoryEstimate:
    """Peak GPU memory of one training process, by part (bytes).

    With vLLM sleep mode the pool is released while the trainer computes the loss, so the peak is
    the larger of the training phase and the generation phase (resident weights + the pool). The
    pool's CUDA graphs are not released (``vLLM CUDA graphs``): they count in the training phase.
    """

    parts: dict[str, float]
    vllm_sleeps: bool = False
    base_bytes: float = 0.0  # vLLM's copy of the base (its layout: 0.5625 B/param for 4-bit), in its pool
    host_backup_bytes: float = 0.0  # what level-1 sleep copies to pinned host memory: vLLM's weights pool

    @property
    def total(self) -> float:
        if not self.vllm_sleeps:
            return sum(v for k, v in self.parts.items() if k != "vLLM CUDA graphs")  # inside the pool then
        training = sum(v for k, v in self.parts.items() if k != "vLLM pool")
        resident = sum(self.parts[k] for k in ("weights", "lora+optimizer", "CUDA context"))
        return max(training, resident + self.parts["vLLM pool"])  # the graphs are inside the pool while generating

    def describe(self) -> str:
        return ", ".join(f"{name} {value / GIB:.1f}" for name, value in self.parts.items() if value >= 0.05 * GIB)


def estimate_memory(
    shape: ModelShape,
    *,
    four_bit: bool,
    lora_r: int,
    lora_targets: list[str],
    batch: int,
    prompt_tokens: int,
    completion_tokens: int,
    gradient_checkpointing: bool,
    vllm_pool_bytes: float,
    vllm_sleeps: bool = False,
    share_base: bool = False,
) -> MemoryEstimate:
    """A deliberately simple model of peak memory, calibrated against H200 runs capped at 14.5 GiB.

    Measured (random weights with Qwen2.5 shapes, every completion at max length): 1.5B 4-bit + LoRA
    r16, batch 16 x 512: 4.3 GiB reserved; 1.5B bf16 + LoRA, batch 8 x 512: 4.5 GiB; 7B 4-bit, batch
    16 x 256: 8.7 GiB (torch's reserved bytes, so without the CUDA context; transformers generation, no
    vLLM). ``tests/train/config/test_machine_checks.py`` holds the estimate to within 20 % of each. Every vLLM
    term (the pool's size aside, which is vLLM's own definition) and the CUDA context are read from code or
    assumed, not measured: docs/gpu-16gb.md#memory-pre-flight lists which is which.

    ``share_base`` (``vllm_share_base``): the trainer's 4-bit layers and embeddings are views of vLLM's, so the base
    is counted once, inside the vLLM pool.
    """
    # norms and embeddings stay 16-bit on both sides
    weights = shape.block_params * (NF4_NESTED_BYTES if four_bit else 2.0) + shape.embedding_params * 2.0
    vllm_base = shape.block_params * (NF4_VLLM_BYTES if four_bit else 2.0) + shape.embedding_params * 2.0
    targets = [name for name in lora_targets if name in shape.projections] or list(shape.projections)
    lora_params = shape.layers * sum(lora_r * sum(shape.projections[name]) for name in targets)
    lora = lora_params * 16.0  # fp32 weight + grad + two Adam moments
    tokens = batch * (prompt_tokens + completion_tokens)
    # checkpointing keeps each block's input; without it every block keeps ~34 h-sized activations per token
    per_token_layer = shape.hidden * 2.0 * (1 if gradient_checkpointing else 34)
    activations = tokens * shape.layers * per_token_layer
    # TRL computes completion logprobs in chunks; logits for one chunk (bf16 + fp32 log-softmax) dominate
    logits = min(batch, 2) * completion_tokens * shape.vocab * 6.0
    # with checkpointing the backward recomputes one block and holds its activations; the loss's logits are freed
    # by then (the head's backward runs first), so the two do not add up: the larger one counts
    recompute = tokens * shape.hidden * RECOMPUTE_BYTES_PER_HIDDEN if gradient_checkpointing else 0.0
    # dequantized weights of one block during 4-bit forward/backward, plus the CUDA context and allocator slack
    workspace = (max(b for b in (a * c for a, c in shape.projections.values())) * 2.0 * 3) if four_bit else 0.0
    parts = {
        "weights": 0.0 if share_base else weights,
        "lora+optimizer": lora,
        "activations": activations,
        "logits or recompute block": max(logits, recompute),
        "dequant buffers": workspace,
    }
    parts["allocator slack"] = 0.15 * sum(parts.values())  # torch's reserved minus allocated, measured 10-30 %
    graphs = CUDA_GRAPH_POOL if vllm_sleeps and vllm_pool_bytes > 0 else 0.0
    # level-1 sleep backs up vLLM's weights pool: its base and its LoRA slots (max_loras 1, 16-bit, rank rounded up)
    slots = shape.layers * sum(_vllm_rank(lora_r) * sum(shape.projections[name]) for name in targets) * 2.0
    backup = vllm_base + slots if vllm_sleeps and vllm_pool_bytes > 0 else 0.0
    return MemoryEstimate(
        {**parts, "CUDA context": CUDA_CONTEXT, "vLLM pool": vllm_pool_bytes, "vLLM CUDA graphs": graphs},
        vllm_sleeps,
        vllm_base,
        backup,
    )


def _vllm_rank(lora_r: int) -> int:

    return max_lora_rank(lora_r) if lora_r else 0


def _model_config(model_name_or_path: str) -> dict | None:
    local = Path(model_name_or_path, "config.json")
    if local.is_file():
        return json.loads(local.read_text())
    try:
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(model_name_or_path).to_dict()
    except (OSError, ValueError):
        return None  # offline and not cached: the model load will say so itself


def estimate_for(training_args, model_args, gpu_total_bytes: float, share_base: bool = False) -> MemoryEstimate | None:
    cfg = _model_config(model_args.model_name_or_path)
    if cfg is None or "hidden_size" not in cfg:
        return None
    pool = training_args.vllm_gpu_memory_utilization * gpu_total_bytes if colocated_vllm(training_args) else 0.0
    return estimate_memory(
        ModelShape.from_config(cfg),
        four_bit=bool(model_args.load_in_4bit),
        lora_r=model_args.lora_r if model_args.use_peft else 0,
        lora_targets=list(model_args.lora_target_modules or []),
        batch=training_args.per_device_train_batch_size,
        prompt_tokens=256,  # GSM8K-style chat prompts are 150-250 tokens
        completion_tokens=training_args.max_completion_length,
        gradient_checkpointing=training_args.gradient_checkpointing,
        vllm_pool_bytes=pool,
        vllm_sleeps=bool(training_args.use_vllm and training_args.vllm_enable_sleep_mode),
        share_base=share_base,
    )


def colocated_vllm(training_args) -> bool:
    """Whether vLLM shares this process's GPU (colocate); in server mode it runs on the servers' GPUs."""
    return bool(training_args.use_vllm) and training_args.vllm_mode == "colocate"
