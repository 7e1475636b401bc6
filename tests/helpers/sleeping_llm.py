"""A stand-in for ``vllm.LLM`` that keeps vLLM's sleep-mode bookkeeping, for tests of the colocated engine's
sync path without a GPU (vLLM's CPU build ignores ``sleep``/``wake_up``).

What it models, read from vLLM 0.30 (``device_allocator/cumem.py``, ``v1/worker/gpu_worker.py``): the LoRA slots
are allocated by ``load_model`` inside the "weights" memory pool; ``sleep(level=1)`` backs that pool up to host
memory and unmaps it, ``sleep(level=2)`` discards it; ``wake_up(tags)`` maps the named pools again and copies the
backup taken *at sleep* back over them. So an adapter written while the weights sleep is lost (on a GPU: an
illegal memory access, or silently the pre-sleep slot): here ``add_lora`` raises instead. ``generate`` raises
unless every pool is awake (vLLM's engine resumes scheduling only then) and unless the slot really holds the
adapter the request names, so a rollout from a stale or empty slot cannot pass unnoticed.
"""

from __future__ import annotations

from types import SimpleNamespace

TAGS = frozenset({"weights", "kv_cache"})


class AsleepError(AssertionError):
    """What the GPU would do (crash, or silently use another adapter), made loud."""


class SleepingLLM:
    """``vllm.LLM(**kwargs)`` as the colocated engine and TRL's generate use it (see the module docstring)."""

    def __init__(self, **kwargs) -> None:
        self.kwargs = kwargs
        self.sleep_mode = bool(kwargs.get("enable_sleep_mode"))
        self.asleep: set[str] = set()
        self.slot: int | None = None  # the adapter id whose weights the GPU slot holds: what rollouts really use
        self._backup: int | None = None  # the slot as the weights' host backup holds it (level-1 sleep)
        self.registered: set[int] = set()
        self.events: list[tuple] = []  # ("sleep", level), ("wake_up", tags), ("add_lora", id), ("generate", id)
        self.llm_engine = SimpleNamespace(add_lora=self._add_lora, remove_lora=self._remove_lora)

    def sleep(self, level: int = 1) -> None:
        if not self.sleep_mode:
            raise AsleepError("sleep() on an LLM built without enable_sleep_mode")
        self.events.append(("sleep", level))
        if "weights" not in self.asleep:
            self._backup = self.slot if level == 1 else None  # level 2 discards the weights pool
        self.asleep = set(TAGS)

    def wake_up(self, tags: list[str] | None = None) -> None:
        wanted = set(TAGS if tags is None else tags)
        self.events.append(("wake_up", tuple(sorted(wanted))))
        if "weights" in wanted & self.asleep:
            self.slot = self._backup  # cumem copies the pre-sleep backup over the pool
        self.asleep -= wanted

    def _add_lora(self, request) -> bool:
        self.events.append(("add_lora", request.lora_int_id))
        if "weights" in self.asleep:
            raise AsleepError(
                f"add_lora({request.lora_name}) while vLLM's weights sleep: the LoRA slots are unmapped "
                "(a GPU would fault or lose the adapter at wake-up)"
            )
        self.registered.add(request.lora_int_id)
        self.slot = request.lora_int_id
        return True

    def _remove_lora(self, lora_id: int) -> bool:
        self.registered.discard(lora_id)
        return True

    def reset_prefix_cache(self, *args, **kwargs) -> bool:
        return True

    def generate(self, prompts, sampling_params=None, use_tqdm=False, lora_request=None):
        wanted = None if lora_request is None else lora_request.lora_int_id
        self.events.append(("generate", wanted))
        if self.asleep:
            raise AsleepError(f"generate while {sorted(self.asleep)} sleep (vLLM would not schedule it)")
        if wanted is not None and wanted != self.slot:
            raise AsleepError(f"a rollout asked for adapter {wanted} and the slot holds {self.slot}: off-policy")
        n = len(prompts)
        logprob = SimpleNamespace(logprob=-0.5, rank=1)
        return [
            SimpleNamespace(
                prompt_token_ids=list(p["prompt_token_ids"]),
                prompt_logprobs=[None] + [{t: logprob} for t in p["prompt_token_ids"][1:]],
                outputs=[SimpleNamespace(token_ids=[1, 2], logprobs=[{1: logprob}, {2: logprob}])],
            )
            for p in prompts[:n]
        ]
