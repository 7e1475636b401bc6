"""The GPU memory model: one training process's peak by part, from the model's config.json and the recipe.

One module for both users: pre-flight refuses a config whose estimate exceeds the GPU
(``machine_checks.check_gpu_memory``, ``distributed_checks``), and the GPU check compares the same estimate with
what a run measured (``train/gpu_check/memory.py``). It imports nothing from the checks, so neither imports the
other through it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
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
# What vLLM needs in its pool before any KV cache (vllm/v1/worker/gpu_worker.py ``determine_available_memory``, 0.30):
# the pool is gpu_memory_utilization x the card, and the KV cache gets what is left of it after ``non_kv_cache_memory``
# (everything the engine holds once loaded, measured from free memory: its weights and LoRA slots, non-torch memory)
# plus the activation peak of a profile run at max_num_batched_tokens (``transient_peak_headroom``) and the CUDA graph
# estimate (``profile_cudagraph_memory``). Nothing left: ValueError("No available memory for the cache blocks"); less
# than one max_model_len sequence: ValueError("... KV cache is needed, which is larger than the available KV cache
# memory") (vllm/v1/core/kv_cache_utils.py ``_check_enough_kv_cache_memory``).
VLLM_BATCHED_TOKENS = 4096  # train/engines/colocated.py passes max_num_batched_tokens=4096
# The profile run's forward holds, in the widest block (the MLP), its input, the fused gate_up output (2 x intermediate)
# and the activation's output (intermediate), with the residual stream and the normed input beside them: read from
# vLLM's Qwen2/Llama MLP (MergedColumnParallelLinear, SiluAndMul), 16-bit activations; not measured.
VLLM_ACTIVATION_HIDDENS, VLLM_ACTIVATION_INTERMEDIATES = 3, 3
# The profile run's sampler (``_dummy_sampler_run``: one row per sequence, max_num_seqs rows): the 16-bit logits, their
# fp32 copy, top-k/top-p's sort (fp32 values + int64 indices), the fp32 probabilities and processed logprobs: 26 bytes a
# logit (vllm/v1/sample/sampler.py, read; not measured).
VLLM_SAMPLER_BYTES_PER_LOGIT = 2 + 4 + 12 + 4 + 4
# Device memory that is not torch's and that vLLM counts in its pool (workspaces outside torch's allocator, kernel images
# loaded on first use; NCCL needs none in one process): assumed, not measured.
VLLM_NON_TORCH = 0.2 * GIB


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
    max_positions: int | None = None  # max_position_embeddings: vLLM's max_model_len when the config sets none

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
            max_positions=cfg.get("max_position_embeddings"),
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

    def kv_bytes_per_token(self, dtype_bytes: float = 2.0) -> float:
        """vLLM's KV cache per token: a key and a value per layer and KV head (the model's dtype: kv_cache_dtype auto)."""
        return 2 * self.layers * self.kv_heads * self.head_dim * dtype_bytes


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
    vllm_minimum: dict[str, float] = field(default_factory=dict)  # what vLLM's pool must hold first (vllm_pool_minimum)

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
    slots = lora_slot_bytes(shape, lora_r, lora_targets)
    backup = vllm_base + slots if vllm_sleeps and vllm_pool_bytes > 0 else 0.0
    return MemoryEstimate(
        {**parts, "CUDA context": CUDA_CONTEXT, "vLLM pool": vllm_pool_bytes, "vLLM CUDA graphs": graphs},
        vllm_sleeps,
        vllm_base,
        backup,
    )


def _vllm_rank(lora_r: int) -> int:

    return max_lora_rank(lora_r) if lora_r else 0


def lora_slot_bytes(shape: ModelShape, lora_r: int, lora_targets: list[str]) -> float:
    """vLLM's LoRA slots in its weights pool: max_loras 1, 16-bit A and B per target, the rank rounded up."""
    targets = [name for name in lora_targets if name in shape.projections] or list(shape.projections)
    return shape.layers * sum(_vllm_rank(lora_r) * sum(shape.projections[name]) for name in targets) * 2.0


def vllm_pool_minimum(
    shape: ModelShape,
    *,
    four_bit: bool,
    lora_r: int,
    lora_targets: list[str],
    max_num_seqs: int,
    max_model_len: int | None,
) -> dict[str, float]:
    """What vLLM's pool must hold before vLLM can give its KV cache anything, by part (bytes), in vLLM's own terms
    (see VLLM_BATCHED_TOKENS): below their sum vLLM stops while loading with ``ValueError("No available memory for
    the cache blocks")``, or with too little KV cache for one ``max_model_len`` sequence. Weights and slots are vLLM's
    layout (read from its loader); the activation and sampler peaks are read from its code; the CUDA graphs
    (CUDA_GRAPH_POOL) and non-torch memory (VLLM_NON_TORCH) are assumed. None of it is measured on a GPU."""
    base = shape.block_params * (NF4_VLLM_BYTES if four_bit else 2.0) + shape.embedding_params * 2.0
    per_token = (VLLM_ACTIVATION_HIDDENS * shape.hidden + VLLM_ACTIVATION_INTERMEDIATES * shape.intermediate) * 2.0
    # a 4-bit layer's matmul dequantizes one shard to 16 bits first (bitsandbytes' matmul_4bit): the largest one
    dequant = max(a * b for a, b in shape.projections.values()) * 2.0 if four_bit else 0.0
    length = max_model_len or shape.max_positions or 0
    return {
        "weights": base,
        "LoRA slots": lora_slot_bytes(shape, lora_r, lora_targets),
        f"activations of {VLLM_BATCHED_TOKENS:,} batched tokens": VLLM_BATCHED_TOKENS * per_token + dequant,
        f"sampler ({max_num_seqs} sequences)": max_num_seqs * shape.vocab * VLLM_SAMPLER_BYTES_PER_LOGIT,
        "CUDA graphs": CUDA_GRAPH_POOL,
        "non-torch memory": VLLM_NON_TORCH,
        f"KV cache of one {length:,}-token sequence": length * shape.kv_bytes_per_token(),
    }


def usable_bytes(total: float, fraction: float) -> float:
    """What one process may hold on a card of ``total`` bytes when torch may allocate ``fraction`` of it: torch's
    allocations plus the CUDA context, which torch does not count. ``--memory-cap`` (train/gpu_check/memory.py) sets
    the fraction to (cap - context) / total, so this gives the cap back: one accounting for pre-flight and the GPU
    check's memory row, both of which count the context in the estimate."""
    if fraction >= 1.0:
        return total
    return min(total, total * fraction + CUDA_CONTEXT)


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
    colocated = colocated_vllm(training_args)
    pool = training_args.vllm_gpu_memory_utilization * gpu_total_bytes if colocated else 0.0
    shape = ModelShape.from_config(cfg)
    four_bit = bool(model_args.load_in_4bit)
    lora_r = model_args.lora_r if model_args.use_peft else 0
    lora_targets = list(model_args.lora_target_modules or [])
    found = estimate_memory(
        shape,
        four_bit=four_bit,
        lora_r=lora_r,
        lora_targets=lora_targets,
        batch=training_args.per_device_train_batch_size,
        prompt_tokens=256,  # GSM8K-style chat prompts are 150-250 tokens
        completion_tokens=training_args.max_completion_length,
        gradient_checkpointing=training_args.gradient_checkpointing,
        vllm_pool_bytes=pool,
        vllm_sleeps=bool(training_args.use_vllm and training_args.vllm_enable_sleep_mode),
        share_base=share_base,
    )
    if not colocated:
        return found
    minimum = vllm_pool_minimum(
        shape,
        four_bit=four_bit,
        lora_r=lora_r,
        lora_targets=lora_targets,
        max_num_seqs=vllm_max_num_seqs(training_args),
        max_model_len=training_args.vllm_max_model_length,
    )
    return dataclasses.replace(found, vllm_minimum=minimum)


def vllm_max_num_seqs(training_args) -> int:
    """The ``max_num_seqs`` TRL 1.16 gives a colocated vLLM (``GRPOTrainer.__init__``): the batch x TP x
    steps_per_generation."""
    steps = getattr(training_args, "steps_per_generation", None) or training_args.gradient_accumulation_steps
    return training_args.per_device_train_batch_size * training_args.vllm_tensor_parallel_size * steps


def colocated_vllm(training_args) -> bool:
    """Whether vLLM shares this process's GPU (colocate); in server mode it runs on the servers' GPUs."""
    return bool(training_args.use_vllm) and training_args.vllm_mode == "colocate"
