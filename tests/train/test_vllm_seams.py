"""train/vllm_seams.py: every vLLM (and vllm-bnb-plugin) name the seam reaches is where it was read, without starting
an engine. On a vLLM upgrade these fail first, each naming the seam function to update (docs/testing.md)."""

import dataclasses
import inspect

import pytest

from train import vllm_seams

pytestmark = pytest.mark.usefixtures("needs_vllm")


def moved(what: str, seam: str) -> str:
    return (
        f"vLLM no longer has {what} where vLLM {vllm_seams.VLLM_VERSION} had it: train/vllm_seams.py's {seam} needs "
        "updating (and the tests that use it: tests/integration/test_adapter_engine.py, test_share_base.py)"
    )


def sets(cls, attribute: str) -> bool:
    """Whether ``cls``'s source (its own body, not its bases') assigns ``self.<attribute>``."""
    return f"self.{attribute} =" in inspect.getsource(cls) or f"self.{attribute}:" in inspect.getsource(cls)


def test_the_engine_model_path():
    from vllm import LLM
    from vllm.v1.engine.llm_engine import LLMEngine
    from vllm.v1.executor.uniproc_executor import ExecutorWithExternalLauncher, UniProcExecutor
    from vllm.v1.worker.cpu_model_runner import CPUModelRunner
    from vllm.v1.worker.cpu_worker import CPUWorker
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner
    from vllm.v1.worker.gpu_worker import Worker
    from vllm.v1.worker.worker_base import WorkerWrapperBase

    assert sets(LLM, "llm_engine"), moved("LLM.llm_engine", "engine_model")
    assert sets(LLMEngine, "model_executor"), moved("LLMEngine.model_executor", "engine_model")
    assert issubclass(ExecutorWithExternalLauncher, UniProcExecutor), moved(
        "the external launcher's executor", "engine_model"
    )
    assert sets(UniProcExecutor, "driver_worker"), moved("UniProcExecutor.driver_worker", "engine_model")
    assert "__getattr__" in vars(WorkerWrapperBase), moved(
        "WorkerWrapperBase passing attributes to its worker", "engine_model"
    )
    for worker in (CPUWorker, Worker):
        assert sets(worker, "model_runner"), moved(f"{worker.__name__}.model_runner", "engine_model")
    for runner in (CPUModelRunner, GPUModelRunner):
        assert callable(getattr(runner, "get_model", None)), moved(f"{runner.__name__}.get_model()", "engine_model")


def test_the_engine_lora_methods_and_cache_config():
    from vllm.config import CacheConfig
    from vllm.v1.engine.llm_engine import LLMEngine

    assert list(inspect.signature(LLMEngine.add_lora).parameters) == ["self", "lora_request"], moved(
        "LLMEngine.add_lora(lora_request)", "add_lora"
    )
    assert list(inspect.signature(LLMEngine.remove_lora).parameters) == ["self", "lora_id"], moved(
        "LLMEngine.remove_lora(lora_id)", "remove_lora"
    )
    assert sets(LLMEngine, "vllm_config"), moved("LLMEngine.vllm_config", "cache_config")
    fields = {f.name for f in dataclasses.fields(CacheConfig)}
    missing = {"gpu_memory_utilization", "num_gpu_blocks", "block_size"} - fields
    assert not missing, moved(f"CacheConfig.{', '.join(sorted(missing))}", "cache_config")


def test_the_quantization_registry_platform_and_nvml():
    methods = vllm_seams.quantization_methods()
    assert isinstance(methods, list) and "bitsandbytes" in methods, moved(
        "bitsandbytes in vllm.model_executor.layers.quantization.QUANTIZATION_METHODS after its plugins load",
        "quantization_methods",
    )
    assert callable(getattr(vllm_seams.vllm_platform(), "verify_quantization", None)), moved(
        "vllm.platforms.current_platform.verify_quantization", "vllm_platform"
    )
    nvml = vllm_seams.nvml()
    for name in ("nvmlInit", "nvmlSystemGetDriverVersion", "NVMLError"):
        assert hasattr(nvml, name), moved(f"vllm.third_party.pynvml.{name}", "nvml")


def test_the_plugins_4bit_layout():
    import vllm_bnb_plugin.bitsandbytes_loader as loader
    from vllm.model_executor.models.llama import LlamaForCausalLM

    source = inspect.getsource(loader)
    for attribute in ("bnb_quant_state", "bnb_shard_offsets"):
        assert attribute in source, moved(
            f"the plugin's loader writing weight.{attribute}", "shard_states/shard_offsets"
        )
    assert vllm_seams.packed_modules(LlamaForCausalLM) == {
        "qkv_proj": ["q_proj", "k_proj", "v_proj"],
        "gate_up_proj": ["gate_proj", "up_proj"],
    }, moved("LlamaForCausalLM.packed_modules_mapping", "packed_modules")


def test_the_layout_readers_on_a_weight_without_it():
    import torch

    plain = torch.nn.Parameter(torch.zeros(2, 1, dtype=torch.uint8), requires_grad=False)
    assert vllm_seams.shard_states(plain) is None and vllm_seams.shard_offsets(plain) is None
    assert vllm_seams.packed_modules(torch.nn.Linear(1, 1)) == {}


def test_the_sleep_mode_pool_and_what_is_asleep_in_it(monkeypatch):
    """vLLM's cumem allocator (a singleton, ``CuMemAllocator.instance``) keeps each allocation of the sleep-mode pool in
    ``pointer_to_data``: its handle (device, size, address, handle) and whether sleep has unmapped it. Built here
    without a GPU (its constructor allocates nothing; ``get_instance`` would need the CUDA extension)."""
    from vllm.device_allocator import AllocationData
    from vllm.device_allocator.cumem import CuMemAllocator

    assert "instance" in vars(CuMemAllocator), moved("CuMemAllocator.instance", "sleeping_pool_bytes")
    assert sets(CuMemAllocator, "pointer_to_data"), moved("CuMemAllocator.pointer_to_data", "sleeping_pool_bytes")
    assert [f.name for f in dataclasses.fields(AllocationData)][:2] == ["handle", "tag"] and "is_asleep" in {
        f.name for f in dataclasses.fields(AllocationData)
    }, moved("AllocationData(handle, tag, ..., is_asleep)", "sleeping_pool_bytes")
    allocator = CuMemAllocator()
    allocator.pointer_to_data = {
        1: AllocationData((0, 3 << 20, 1, 11), "weights", is_asleep=True),
        2: AllocationData((0, 5 << 20, 2, 12), "kv_cache", is_asleep=True),
        3: AllocationData((0, 7 << 20, 3, 13), "kv_cache"),  # mapped
    }
    monkeypatch.setattr(CuMemAllocator, "instance", allocator)
    assert vllm_seams.sleeping_pool_bytes() == 8 << 20
    monkeypatch.setattr(CuMemAllocator, "instance", None)  # no sleep mode: vLLM never made one
    assert vllm_seams.sleeping_pool_bytes() == 0
