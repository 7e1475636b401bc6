"""vLLM rollouts for a LoRA policy: vLLM holds the base once, each sync sends only the adapter.

TRL 1.16 syncs a PEFT policy into vLLM by merging the adapter into the base and pushing full
weights. On a bitsandbytes 4-bit base that merge re-quantizes the weights and pushes packed tensors
without their quantization state, so the rollouts would not come from the policy being trained.
Here vLLM loads the policy's *base* itself (``quantization="bitsandbytes"`` when the policy is
4-bit, so both sides quantize the same checkpoint the same way) with ``enable_lora=True``; after
every optimizer step the adapter is saved (peft's own files, in /dev/shm when it holds two versions,
else on disk: ``train/engines/adapter_storage.py``; removed with everything in it when the run ends) and loaded under a **new integer id** (vLLM caches adapters by id: the same id would keep
serving the old weights), and every generate call passes that ``LoRARequest``. The base is never
merged, re-quantized or pushed. TRL still computes advantages, the loss and its importance-sampling
correction from the logprobs vLLM returns (``logprobs_mode="processed_logprobs"``, as TRL sets).

TRL's public contract this relies on (trl 1.16.0; tests/train/test_trl_seams.py checks it): ``generate``
calls ``self.llm.generate(...)`` and ``self.sync_weights()``; ``GRPOTrainer.__init__`` builds the object
as ``VLLMGeneration(...)`` (swapped in through ``train.trl_seams.generation_class``). What is shared with
the server engine (saving, naming, run.json, cleanup) is ``train/engines/base.py``.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

from trl.trainer.utils import ensure_master_addr_port

from train.engines.adapter_storage import ADAPTER_DIR_PREFIX, adapter_bytes, choose_root, make_adapter_dir
from train.engines.base import AdapterEngine
from train.engines.choice import Engine
from train.engines.share_base_views import share_base, vllm_model
from train.engines.vllm_lora import max_lora_rank
from train.vllm_seams import add_lora, remove_lora


@dataclass(frozen=True)
class EngineSettings:
    """What vLLM needs to know about the policy that TRL's generation object does not pass."""

    base_model: str  # the checkpoint the policy's base was loaded from (never the merged policy)
    quantization: str | None  # "bitsandbytes" for a 4-bit policy, else None
    dtype: str  # vLLM's dtype: the policy's compute dtype
    max_lora_rank: int
    adapter_root: str | None = (
        None  # the config's adapter_root; None: /dev/shm if it has room, else disk (adapter_storage)
    )
    seed: int = 0
    share_base: bool = (
        False  # vllm_share_base: the trainer's 4-bit layers view vLLM's (train/engines/share_base_views.py)
    )


__all__ = ["ADAPTER_DIR_PREFIX", "AdapterSyncGeneration", "EngineSettings", "engine_settings"]


VLLM_POOLS = frozenset({"weights", "kv_cache"})  # the memory vLLM's sleep releases and wake_up maps again, by tag


class _AdapterLLM:
    """``vllm.LLM`` seen through TRL's generate(): every generate call gets the current adapter, and sleep mode is
    safe for adapters by construction.

    vLLM allocates its LoRA slots inside the "weights" memory pool (``load_model``). Level-1 sleep copies that
    pool to host memory and unmaps it; ``wake_up`` maps it again and copies that backup over it
    (``vllm/device_allocator/cumem.py``), so an adapter written while the weights sleep would be lost or fault.
    Hence: sleep is always level 1 (TRL asks for 2, which discards the base and the adapter, and then re-pushes
    full weights; here the base never moves), ``asleep`` records which pools sleep, ``load`` wakes the weights
    before ``add_lora``, and ``generate`` wakes whatever still sleeps (vLLM schedules nothing until every pool is
    back; the restored weights hold the adapter loaded while they were awake).
    """

    def __init__(self, llm, engine: AdapterSyncGeneration) -> None:
        self._llm = llm
        self._engine = engine
        self.asleep: set[str] = set()

    def generate(self, *args, **kwargs):
        if self._engine.lora_request is None:
            raise RuntimeError("the adapter engine generated before its first sync: no adapter is loaded")
        self.wake_up()
        kwargs.setdefault("lora_request", self._engine.lora_request)
        return self._llm.generate(*args, **kwargs)

    def load(self, request) -> None:
        """vLLM's ``add_lora`` with the weights pool (where the LoRA slots are) mapped."""
        self.wake_up(tags=["weights"])
        add_lora(self._llm, request)

    def sleep(self, level: int = 1) -> None:
        self._llm.sleep(level=1)
        self.asleep = set(VLLM_POOLS)

    def wake_up(self, tags=None) -> None:
        waking = (set(VLLM_POOLS) if tags is None else set(tags)) & self.asleep
        if waking:
            self._llm.wake_up(tags=sorted(waking))
            self.asleep -= waking

    def __getattr__(self, name):
        return getattr(self._llm, name)


class AdapterSyncGeneration(AdapterEngine):
    """TRL's colocated vLLM generation with adapter-only weight sync (see the module docstring)."""

    engine = Engine.COLOCATED

    def __init__(self, *args, settings: EngineSettings, **kwargs) -> None:
        self.lora_request = None
        self.shared_base = None  # train.engines.share_base_views.SharedBase once the base is shared
        model = kwargs["model"] if "model" in kwargs else args[0]
        # /dev/shm only when it holds two versions of this adapter; an own temporary directory is removed by close()
        adapter_dir, owns = make_adapter_dir(choose_root(adapter_bytes(model), settings.adapter_root))
        super().__init__(*args, settings=settings, adapter_dir=adapter_dir, owns_adapter_dir=owns, **kwargs)

    def start_engine(self) -> None:
        from vllm import LLM

        if self.mode != "colocate":
            raise ValueError("the adapter engine runs colocated (vllm_mode: colocate)")
        if self.tensor_parallel_size != 1:
            raise ValueError("the adapter engine supports vllm_tensor_parallel_size 1 only")
        if self.settings.share_base and (self.enable_sleep_mode or self.accelerator.num_processes != 1):
            raise ValueError("vllm_share_base needs one process and no sleep mode (train/config/share_base_checks.py)")
        accelerator = self.accelerator
        # vLLM's external launcher reads the torch.distributed rendezvous from the environment (as TRL does)
        os.environ["RANK"] = str(accelerator.process_index)
        os.environ["LOCAL_RANK"] = str(accelerator.local_process_index)
        os.environ["WORLD_SIZE"] = str(accelerator.num_processes)
        if accelerator.num_processes == 1 and os.environ.get("MASTER_PORT", "").strip().lower() in ("", "0", "auto"):
            # TRL picks 29500 whenever it is free at that instant, as does every other run on the machine: two
            # engines starting together both bind it and one dies (EADDRINUSE). The kernel's pick does not collide.
            os.environ["MASTER_PORT"] = str(_kernel_free_port())
        ensure_master_addr_port()
        if self.accelerator.device.type == "cpu":
            # the CPU build sizes its KV cache from this (GiB); 1 GiB holds ~45k tokens of the small model
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        s = self.settings
        llm = LLM(
            model=s.base_model,
            dtype=s.dtype,
            quantization=s.quantization,
            enable_lora=True,
            max_lora_rank=s.max_lora_rank,
            max_loras=1,
            gpu_memory_utilization=self.gpu_memory_utilization,
            max_model_len=self.max_model_length,
            max_num_seqs=self.max_num_seqs,
            max_num_batched_tokens=4096,
            enable_sleep_mode=self.enable_sleep_mode,
            model_impl=self.model_impl,
            distributed_executor_backend="external_launcher",
            seed=s.seed + accelerator.process_index,
            logprobs_mode="processed_logprobs",  # temperature applied: what TRL's importance sampling expects
            trust_remote_code=self.trust_remote_code,
        )
        self.llm = _AdapterLLM(llm, self)
        if s.share_base:
            self.shared_base = share_base(self.model, vllm_model(llm))  # SharedLayoutError: nothing was rebound
        if self.enable_sleep_mode:
            self.llm.sleep()
        self.mark_weights_resident()  # level-1 sleep keeps the base: TRL must never re-push it
        accelerator.wait_for_everyone()

    def adapter_name(self, version: int) -> str:
        return f"policy-v{version}"

    def generate(self, *args, **kwargs):
        """TRL's generate; afterwards TRL's flag agrees with the engine again. TRL marks the weights discarded after
        its level-2 sleep (``_llm_weights_sleeping``), and its next generate would then sync again, loading a second
        adapter version in one optimizer step. Level 1 keeps the base and the adapter: nothing is to re-push."""
        try:
            return super().generate(*args, **kwargs)
        finally:
            self.mark_weights_resident()

    def sync_weights(self) -> None:
        super().sync_weights()
        if self.shared_base is not None and (lost := self.shared_base.problems()):
            raise RuntimeError(f"vllm_share_base: the trainer's weights stopped viewing vLLM's: {'; '.join(lost[:3])}")

    def engine_facts(self) -> dict:
        return {"shared_base": self.shared_base.facts()} if self.shared_base is not None else {}

    def adapter_path(self, name: str, version: int) -> Path:
        return self.adapter_dir / f"v{version:06d}-rank{self.accelerator.process_index}"

    def load_adapter(self, name: str, version: int, path: Path) -> None:
        """Load under a new integer id (vLLM caches adapters by id: the same id would keep serving old weights)."""
        from vllm.lora.request import LoRARequest

        request = LoRARequest(name, version, str(path))
        self.llm.load(request)  # wakes the weights first: the LoRA slots live in that pool
        previous, self.lora_request = self.lora_request, request
        if previous is not None:
            remove_lora(self.llm, previous.lora_int_id)
        self.llm.reset_prefix_cache()

    def prompt_logprobs(self, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
        """Per-token logprobs of ``completion_ids`` after ``prompt_ids`` under the loaded adapter.

        The on-policy check: these must equal the trainer policy's logprobs for the same tokens.
        """
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=1, temperature=1.0, prompt_logprobs=0)
        ids = list(prompt_ids) + list(completion_ids)
        (out,) = self.llm.generate([{"prompt_token_ids": ids}], sampling_params=params, use_tqdm=False)
        scored = out.prompt_logprobs[len(prompt_ids) :]
        return [entry[token].logprob for entry, token in zip(scored, completion_ids)]


def _kernel_free_port() -> int:
    """A TCP port nothing listens on now, chosen by the kernel (not a well-known default)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("localhost", 0))
        return sock.getsockname()[1]


def engine_settings(
    model_args, training_args, share_base: bool = False, adapter_root: str | None = None
) -> EngineSettings:
    """The adapter engine's settings for a PEFT policy, from TRL's ModelConfig and GRPOConfig (``share_base``: the
    config's ``vllm_share_base``; ``adapter_root``: its ``adapter_root``)."""
    return EngineSettings(
        base_model=model_args.model_name_or_path,
        quantization="bitsandbytes" if model_args.load_in_4bit else None,
        # vLLM's bitsandbytes loader computes in bf16 (float32 fails on CPU); a trainer computing its 4-bit
        # layers in float32 then differs only by bf16 rounding, which TRL's importance sampling corrects
        dtype="bfloat16" if model_args.load_in_4bit else (model_args.dtype or "auto"),
        max_lora_rank=max_lora_rank(model_args.lora_r),  # vLLM takes 1, 8, 16, ...: the adapter keeps its own r
        seed=training_args.seed,
        share_base=share_base,
        adapter_root=adapter_root,
    )
