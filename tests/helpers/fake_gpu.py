"""A stand-in GPU for the GPU check's memory accounting: torch's CUDA memory counters, the card's physical memory, and
vLLM's sleep-mode pool, kept apart as they are on a real card (no GPU has been lent to this project yet).

What it models, read from torch 2.13 (``c10/cuda/CUDACachingAllocator.cpp``) and vLLM 0.30
(``vllm/device_allocator/cumem.py``):

* torch counts every block it allocates, in any pool: ``memory_reserved`` / ``max_memory_reserved`` and the
  per-process fraction (an allocation fails when the count would pass ``fraction x total``);
* vLLM's sleep-mode pool is a torch ``MemPool`` on vLLM's cumem allocator, so torch counts it too; ``sleep``
  unmaps its physical memory (``unmap_and_release``) and leaves torch's blocks allocated: the card's free memory
  (``mem_get_info``) grows and torch's count does not; ``wake_up`` maps it again;
* ``CuMemAllocator.pointer_to_data``: each allocation's size and whether it is asleep (what
  ``train.vllm_seams.sleeping_pool_bytes`` reads).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import SimpleNamespace

import torch

GIB = 1024**3


class FakeCard:
    """One GPU of ``total`` bytes: what the card holds (physical) and what torch's allocator counts."""

    def __init__(self, total: float, context: float = 0.5 * GIB) -> None:
        self.total = total
        self.physical = context  # the CUDA context (and nothing else) before anything is allocated
        self.reserved = 0.0  # torch's reserved bytes (every pool, the sleeping one included)
        self.peak = 0.0  # torch's max_memory_reserved since the last reset
        self.physical_peak = self.physical  # the truth the check must report
        self.fraction = 1.0
        self.fractions: list[float] = []  # every fraction the code set, in order
        self._lock = threading.Lock()  # the check samples from a thread

    # torch.cuda's memory API, as the GPU check and pre-flight call it
    def mem_get_info(self, device=None) -> tuple[int, int]:
        with self._lock:
            return int(self.total - self.physical), int(self.total)

    def max_memory_reserved(self, device=None) -> int:
        return int(self.peak)

    def memory_reserved(self, device=None) -> int:
        return int(self.reserved)

    def reset_peak_memory_stats(self, device=None) -> None:
        self.peak = self.reserved

    def set_per_process_memory_fraction(self, fraction: float, device=None) -> None:
        self.fraction = fraction
        self.fractions.append(fraction)

    def get_per_process_memory_fraction(self, device=None) -> float:
        return self.fraction

    def install(self, monkeypatch) -> FakeCard:
        """Replace torch.cuda's memory functions (and CUDA tensors' creation: the check's context probe) with this."""
        for name in (
            "mem_get_info", "max_memory_reserved", "memory_reserved", "reset_peak_memory_stats",
            "set_per_process_memory_fraction", "get_per_process_memory_fraction",
        ):  # fmt: skip
            monkeypatch.setattr(torch.cuda, name, getattr(self, name))
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
        empty = torch.empty

        def cpu_empty(*size, device=None, **kwargs):
            return empty(*size, **kwargs) if str(device).startswith("cuda") else empty(*size, device=device, **kwargs)

        monkeypatch.setattr(torch, "empty", cpu_empty)
        return self

    # what the run does
    def allocate(self, size: float) -> None:
        """A torch allocation: refused as torch refuses it under the fraction (or when the card is full)."""
        with self._lock:
            if self.reserved + size > self.fraction * self.total or self.physical + size > self.total:
                raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {size / GIB:.2f} GiB")
            self.reserved += size
            self.physical += size
            self.peak = max(self.peak, self.reserved)
            self.physical_peak = max(self.physical_peak, self.physical)

    def free(self, size: float) -> None:
        """Freed and returned to the card (empty_cache)."""
        with self._lock:
            self.reserved -= size
            self.physical -= size

    def unmap(self, size: float) -> None:
        with self._lock:
            self.physical -= size

    def map(self, size: float) -> None:
        with self._lock:
            if self.physical + size > self.total:
                raise RuntimeError("CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:119")
            self.physical += size
            self.physical_peak = max(self.physical_peak, self.physical)


@dataclass
class Allocation:
    """``vllm.device_allocator.AllocationData`` as the seam reads it: ``handle[1]`` is the size."""

    handle: tuple
    tag: str
    is_asleep: bool = False


@dataclass
class FakeCuMemPool:
    """vLLM's sleep-mode pool on ``card``: allocated through torch (counted), unmapped by ``sleep`` behind its back."""

    card: FakeCard
    pointer_to_data: dict[int, Allocation] = field(default_factory=dict)

    def allocate(self, size: float, tag: str) -> None:
        self.card.allocate(size)
        address = len(self.pointer_to_data) + 1
        self.pointer_to_data[address] = Allocation((0, size, address, address), tag)

    def sleep(self) -> None:
        for data in self.pointer_to_data.values():
            if not data.is_asleep:
                self.card.unmap(data.handle[1])
                data.is_asleep = True

    def wake_up(self, tags=None) -> None:
        for data in self.pointer_to_data.values():
            if data.is_asleep and (tags is None or data.tag in tags):
                self.card.map(data.handle[1])
                data.is_asleep = False

    def asleep_bytes(self) -> int:
        return int(sum(data.handle[1] for data in self.pointer_to_data.values() if data.is_asleep))


class FakeVLLM:
    """``vllm.LLM`` with sleep mode on a fake card: its weights and KV cache in the cumem pool, activations while it
    generates in torch's own pool."""

    def __init__(self, card: FakeCard, weights: float, kv_cache: float, activations: float) -> None:
        self.card, self.activations = card, activations
        self.pool = FakeCuMemPool(card)
        self.pool.allocate(weights, "weights")
        self.pool.allocate(kv_cache, "kv_cache")

    def sleep(self, level: int = 1) -> None:
        self.pool.sleep()

    def wake_up(self, tags=None) -> None:
        self.pool.wake_up(tags)

    def generate(self, *args, **kwargs):
        if any(data.is_asleep for data in self.pool.pointer_to_data.values()):
            raise AssertionError("generate while vLLM sleeps")
        self.card.allocate(self.activations)
        self.card.free(self.activations)
        return [[1, 2, 3]]


# ---- the GPU check's run on a stand-in GPU (scripts/check_gpu.py's ``check``, with only the model stood in) ----------

H200 = 139.8 * GIB
RESIDENT = 1.5 * GIB  # the trainer's 4-bit 1.5B model, LoRA and Adam
WEIGHTS, KV_CACHE = 1.2 * GIB, 3.15 * GIB  # vLLM's pool under a 14.5 GiB cap: 0.3 x 14.5 GiB
GENERATION = 0.3 * GIB  # vLLM's activations while it generates


class Engine:
    """The colocated engine as TRL drives it: each generate wakes vLLM (``_AdapterLLM`` wakes what sleeps) and puts it
    back to sleep after (TRL asks for level 2; ``_AdapterLLM`` sleeps at level 1)."""

    def __init__(self, llm: FakeVLLM) -> None:
        from train.engines.base import SyncRecord
        from train.engines.colocated import _AdapterLLM  # the real wrapper the engine puts around vllm.LLM

        self.llm = _AdapterLLM(llm, SimpleNamespace(lora_request="policy-v1"))
        self.sync_record = SyncRecord()

    def generate(self, prompts, images, num_generations):
        self.llm.generate(prompts)
        self.llm.sleep(level=2)
        return prompts, [[1, 2, 3]] * len(prompts), None, None


class Trainer:
    """GRPO steps: rollouts from the engine, then the loss's activations (``training`` bytes) while vLLM sleeps."""

    def __init__(self, card: FakeCard, engine: Engine, training: float, steps: int) -> None:
        self.card, self.rollout_engine, self.training, self.steps = card, engine, training, steps
        self.callbacks = []
        self.state = SimpleNamespace(log_history=[], global_step=0)

    def add_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def train(self) -> None:
        args, control = SimpleNamespace(), SimpleNamespace()
        for _ in range(self.steps):
            for callback in self.callbacks:
                callback.on_step_begin(args, self.state, control)
            self.rollout_engine.generate([[0, 1]], None, 1)
            self.card.allocate(self.training)
            self.card.free(self.training)
            for callback in self.callbacks:
                callback.on_step_end(args, self.state, control)

    def close_rollout_engine(self) -> None:
        pass


@dataclass
class CheckRun:
    rows: dict  # check -> Row
    card: FakeCard
    built_with: list  # (script_args, training_args, model_args) build_trainer was given
    extra: dict


def run_gpu_check(
    monkeypatch, model_dir, training: float, cap: float | None = 14.5, *overrides: str, build=None, preflight=False
) -> CheckRun:
    """``train.gpu_check.run.check`` on configs/qwen2.5-1.5b-qlora-vllm.yaml (2 steps; ``overrides`` as on the command
    line) on a stand-in H200: the config, budget, pre-flight estimate, meter and verdicts are the check's own; the
    environment, the model and vLLM are stand-ins. The build runs train/grpo.py's memory pre-flight first when
    ``preflight`` (as its resolve_run does), then ``build(card)`` if given, else the 1.5B policy, vLLM's pool asleep,
    and steps whose loss holds ``training`` bytes. The on-policy and speed rows are not run."""
    import argparse

    import train.grpo
    import train.vllm_seams
    from tests.helpers import REPO
    from train.config import machine_checks
    from train.gpu_check import run
    from train.gpu_check.environment import Environment

    card = FakeCard(H200).install(monkeypatch)
    built_with, vllm = [], []

    def build_trainer(script_args, training_args, model_args):
        built_with.append((script_args, training_args, model_args))
        if preflight:  # train/grpo.py's own pre-flight of GPU memory (train/config/machine_checks.py)
            machine_checks.check_gpu_memory(training_args, model_args, share_base=script_args.vllm_share_base)
        if build is not None:
            return build(card)
        card.allocate(RESIDENT)
        vllm.append(FakeVLLM(card, WEIGHTS, KV_CACHE, GENERATION))
        engine = Engine(vllm[0])
        engine.llm.sleep()  # the colocated engine sleeps once built (train/engines/colocated.py start_engine)
        return Trainer(card, engine, training, steps=2), None, None

    monkeypatch.setattr(train.grpo, "build_trainer", build_trainer)
    # what vLLM's allocator has unmapped, from its bookkeeping (raising=False: before issue #51 there was no seam)
    asleep = lambda: vllm[0].pool.asleep_bytes() if vllm else 0  # noqa: E731
    monkeypatch.setattr(train.vllm_seams, "sleeping_pool_bytes", asleep, raising=False)
    monkeypatch.setattr(machine_checks, "cuda_available", lambda: True)
    stand_in = Environment(
        gpu=True, device_name="NVIDIA H200 (stand-in)", memory_bytes=H200, driver="580.65.06", cuda="13.0",
        packages={"torch": "2.13.0", "transformers": "5.20.2", "trl": "1.16.0", "peft": "0.21.2",
                  "bitsandbytes": "0.50.2"},
        vllm=("vllm", "0.30.0"), vllm_bnb=True,
    )  # fmt: skip
    monkeypatch.setattr(run, "probe", lambda cuda: stand_in)
    monkeypatch.setattr(run, "_after_training", lambda *args: None)  # the on-policy and speed rows: not run here
    opts = argparse.Namespace(
        config=str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml"), steps=2, memory_cap=cap, out=None,
        speed_rounds=1,
    )  # fmt: skip
    argv = ["--bf16", "false", "--model_name_or_path", str(model_dir), *overrides]  # bf16 needs a real GPU to parse
    rows, extra = run.check(opts, argv, model_dir / "gpu-check")
    return CheckRun({row.check: row for row in rows}, card, built_with, extra)
