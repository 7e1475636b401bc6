"""Memory: the budget (a card's or a cap's), pre-flight's estimate for it, and the peak a run really used.

What is measured, and why:

* GPU: the memory the card holds for this process, never more. Two measurements, the larger one counts:
  the device memory in use (``torch.cuda.mem_get_info``: total - free) less what was in use before the model
  loads, sampled on the main thread once the trainer and its vLLM engine are built and at each sleep and wake-up
  of vLLM, and every 0.2 s from a thread until training ends (not from a thread while vLLM loads: it captures
  CUDA graphs then, and a CUDA call from another thread during a capture can invalidate it, vLLM PR #48053); and
  torch's exact peak of reserved bytes (``max_memory_reserved``) in each phase between vLLM's sleeps and wake-ups,
  less what sleep mode has unmapped in that phase. vLLM runs in the training process (external launcher), and its
  pool (weights, KV cache, LoRA slots) is torch's too: without sleep mode plain torch allocations, with it a torch
  ``MemPool`` on vLLM's cumem allocator, which torch keeps counting while level-1 sleep has released the memory
  (``vllm/device_allocator/cumem.py``; vLLM's own ``mem_utils.py`` measures from free memory for that reason). So
  torch's peak alone would count the sleeping pool as if sleep saved nothing; the bytes asleep are read from vLLM's
  allocator (``train/vllm_seams.py`` ``sleeping_pool_bytes``). Plus the CUDA context pre-flight assumes (0.9 GiB;
  it exists before the first sample). Torch's peak is a floor under the sampled one (a sample can miss a short
  peak); the samples see what torch does not (non-torch memory). Another process allocating on the same GPU
  meanwhile would count: run the check on an otherwise idle card.
* CPU: the peak resident set size of this process (``getrusage``: exact, no sampling), which holds
  vLLM too (the external launcher runs its engine in-process), minus the RSS before the model loads
  (torch, transformers, TRL and vLLM already imported), against pre-flight's estimate; the whole peak
  plus the verifier's worker processes (no model; sampled) against the budget.

``--memory-cap`` on a GPU caps the process as a smaller card would: torch's per-process memory fraction (the cap less
the CUDA context, which torch does not count, plus the bytes sleep mode has unmapped while they are unmapped: torch
counts them, the smaller card would not hold them; re-set at each sleep and wake-up), and vLLM's
``gpu_memory_utilization`` scaled so its pool is the same share of the cap as the config gives it of a card (vLLM
sizes its pool as utilization x the device's total memory). On CPU nothing is enforced (Linux does not enforce
RLIMIT_RSS, and RLIMIT_AS counts the address space torch and vLLM reserve far beyond what they touch): the cap is the
budget the verdict compares with.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import resource
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from train import vllm_seams
from train.config.arguments import ConfigError
from train.config.memory_model import CUDA_CONTEXT, GIB, MemoryEstimate, estimate_for

SAMPLE_SECONDS = 0.2
# What torch reports as a Tesla T4's total memory with ECC on (the default on cloud T4s: 15,360 MiB less ECC's
# share; torch.cuda.get_device_properties(0).total_memory on Colab, not measured here): the most common free
# "16 GB" card offers 14.75 GiB, CUDA context included. `make gpu-check`'s cap (14.5 GiB) stays below it.
T4_TOTAL_BYTES = 15_835_660_288
# train/engines/colocated.py gives vLLM's CPU build this much KV cache (GiB) when VLLM_CPU_KVCACHE_SPACE is unset
CPU_KV_CACHE_GIB_DEFAULT = "1"


@dataclass(frozen=True)
class Budget:
    """The memory a run may use, where the figure comes from, and how (whether) it is enforced."""

    bytes: float
    source: str
    enforcement: str
    vllm_utilization: tuple[float, float] | None = None  # (the config's, the one used) on a GPU
    device_bytes: float = 0.0  # the GPU's total memory, when the cap is enforced on one (else 0: nothing enforced)

    def fraction(self, unmapped: float = 0.0) -> float:
        """torch's per-process fraction that holds this process to the cap on the card: the cap less the CUDA context
        (torch does not count it), plus ``unmapped``, bytes torch counts that the card does not hold (vLLM's pool
        while sleep mode has released it: a smaller card would not hold them either)."""
        return min(1.0, (self.bytes - CUDA_CONTEXT + unmapped) / self.device_bytes)

    def enforce(self, unmapped: float = 0.0) -> None:
        """Set torch's fraction for the cap (nothing when no cap is enforced: CPU, or the whole GPU)."""
        if self.device_bytes:
            import torch

            torch.cuda.set_per_process_memory_fraction(self.fraction(unmapped))

    def as_dict(self) -> dict:
        return {
            "gib": round(self.bytes / GIB, 2),
            "source": self.source,
            "enforcement": self.enforcement,
            "vllm_gpu_memory_utilization": self.vllm_utilization,
        }


def apply_cap(cap_gib: float | None, training_args, gpu: bool, device_bytes: float) -> Budget:
    """The run's budget; on a GPU with a cap, enforce it (torch's fraction, vLLM's utilization scaled)."""
    if cap_gib is not None and cap_gib <= 0:
        raise ConfigError(f"--memory-cap {cap_gib}: give a positive number of GiB.")
    where = "this GPU" if gpu else "this machine's RAM"
    if cap_gib is not None and cap_gib * GIB > device_bytes:
        raise ConfigError(
            f"--memory-cap {cap_gib} GiB exceeds {where} ({device_bytes / GIB:.1f} GiB): a cap can only shrink it."
        )
    if cap_gib is None:
        budget = device_bytes
        source = f"{where}: {device_bytes / GIB:.1f} GiB"
    else:
        budget = cap_gib * GIB
        source = f"--memory-cap {cap_gib:g} GiB"
    if not gpu:
        enforcement = (
            "not enforced on CPU (Linux ignores RLIMIT_RSS; RLIMIT_AS would count the address space torch and "
            "vLLM reserve but never touch): the measured peak RSS is compared with it"
        )
        return Budget(budget, source, enforcement)
    if cap_gib is None:
        return Budget(budget, source, "the whole GPU (no --memory-cap)")
    # torch's fraction does not count the CUDA context, which the card holds too: the allocations get the cap less
    # the context, so that both fit in what a smaller card offers (a T4 with ECC: T4_TOTAL_BYTES, not 16 GiB)
    utilization = training_args.vllm_gpu_memory_utilization
    scaled = utilization * budget / device_bytes
    training_args.vllm_gpu_memory_utilization = scaled
    capped = Budget(budget, source, "", (utilization, scaled), device_bytes)
    enforcement = (
        f"torch.cuda.set_per_process_memory_fraction({capped.fraction():.4f}) ({cap_gib:g} GiB less the CUDA "
        f"context's {CUDA_CONTEXT / GIB:g} GiB), raised by vLLM's pool while sleep mode has it unmapped; "
        f"vllm_gpu_memory_utilization {utilization:g} -> {scaled:.4f} (vLLM's pool {utilization:g} x {cap_gib:g} GiB "
        f"= {utilization * cap_gib:.2f} GiB)"
    )
    capped = dataclasses.replace(capped, enforcement=enforcement)
    capped.enforce()
    return capped


def estimate(
    training_args, model_args, gpu: bool, device_bytes: float, share_base: bool = False
) -> MemoryEstimate | None:
    """Pre-flight's estimate (train/config/memory_model.py) of this run's peak; None without a config.json.

    On a GPU it is pre-flight's own figure (vLLM's pool = utilization x the device's memory, the
    utilization already scaled by a cap). On CPU the same model of the trainer, with what differs there:
    no CUDA context, and vLLM holding its own copy of the weights beside a KV cache of
    ``VLLM_CPU_KVCACHE_SPACE`` GiB instead of a share of a card. ``share_base`` (``vllm_share_base``): the
    base counted once, in vLLM's copy.
    """
    found = estimate_for(training_args, model_args, device_bytes, share_base=share_base)
    if found is None or gpu:
        return found
    kv_cache = float(os.environ.get("VLLM_CPU_KVCACHE_SPACE", CPU_KV_CACHE_GIB_DEFAULT)) * GIB
    pool = found.base_bytes + kv_cache if training_args.use_vllm else 0.0
    return MemoryEstimate(
        {**found.parts, "CUDA context": 0.0, "vLLM pool": pool}, vllm_sleeps=False, base_bytes=found.base_bytes
    )


def _rss_bytes() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _children_rss() -> int:
    import psutil

    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:  # it ended between listing and reading
            continue
    return total


def _peak_rss_bytes() -> int:
    """This process's own high-water RSS: Linux's VmHWM (per address space). ``ru_maxrss`` is the fallback only: on
    Linux it survives execve, so a process started from a large one (pytest, a notebook) inherits its parent's peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


class PeakMeter:
    """The peak memory of a phase (``start`` to ``stop``), as the module docstring describes. On a GPU, ``budget``'s cap
    (if any) is re-enforced each time vLLM sleeps or wakes (``watch_sleep``), also after ``stop``."""

    def __init__(self, gpu: bool, budget: Budget | None = None) -> None:
        self.gpu = gpu
        self.budget = budget
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._device = None
        self._running = False
        self.before = 0.0  # in use at start: device memory (GPU) or RSS (CPU)
        self.sampled_peak = 0.0  # the largest sample: device memory in use (GPU), children's RSS (CPU)
        self.unmapped = 0.0  # GPU: bytes torch counts that the card does not hold now (vLLM's pool, asleep)
        self.torch_peak = 0.0  # GPU: the largest phase peak of torch's reserved bytes, less what was unmapped then
        self.phases = 0  # GPU: phases measured (one more at each sleep or wake-up of vLLM)
        self.result: dict | None = None

    def _sample(self) -> float:
        if self.gpu:
            import torch

            free, total = torch.cuda.mem_get_info(self._device)
            return float(total - free)
        return float(_children_rss())

    def sample(self) -> None:
        """One sample (on the calling thread: between phases, or the sampling thread's)."""
        value = self._sample()
        with self._lock:
            self.sampled_peak = max(self.sampled_peak, value)

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            self.sample()

    def start(self) -> None:
        """What is in use before the model loads. No sampling yet: call ``start_sampling`` once vLLM is built."""
        self._running = True
        if self.gpu:
            import torch

            self._device = torch.cuda.current_device()
            torch.empty(1, device=f"cuda:{self._device}")  # the CUDA context exists before the first sample
            torch.cuda.reset_peak_memory_stats(self._device)
            self.before = self._sample()
            self.sampled_peak = self.before
            self.unmapped = float(vllm_seams.sleeping_pool_bytes())
        else:
            self.before = float(_rss_bytes())
            self.sampled_peak = self._sample()

    def phase_ends(self) -> None:
        """Just before vLLM sleeps or wakes (main thread): the ending phase's torch peak, less what was unmapped in it."""
        if self.gpu and self._running:
            import torch

            reserved = float(torch.cuda.max_memory_reserved(self._device))
            self.torch_peak = max(self.torch_peak, reserved - self.unmapped)
            self.phases += 1

    def phase_begins(self) -> None:
        """Just after vLLM slept or woke (main thread): what its pool holds unmapped now, the cap's fraction for it,
        and (while measuring) a fresh torch peak and one sample."""
        if not self.gpu:
            return
        self.unmapped = float(vllm_seams.sleeping_pool_bytes())
        if self.budget is not None:
            self.budget.enforce(self.unmapped)
        if self._running:
            import torch

            torch.cuda.reset_peak_memory_stats(self._device)
            self.sample()

    def start_sampling(self) -> None:
        """Sample every SAMPLE_SECONDS from a thread until ``stop``: only once vLLM has captured its CUDA graphs. The
        build is a phase of its own (vLLM's sleep at its end leaves its pool unmapped)."""
        self.phase_ends()
        self.phase_begins()
        self.sample()
        self._thread = threading.Thread(target=self._loop, name="gpu-check-memory", daemon=True)
        self._thread.start()

    def stop(self) -> dict:
        """The phase's peak (bytes): ``peak`` against the budget, ``run`` against pre-flight's estimate."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        if self.gpu:
            self.phase_ends()
            self._running = False
            sampled = self.sampled_peak - self.before + CUDA_CONTEXT
            peak = max(sampled, self.torch_peak + CUDA_CONTEXT)
            self.result = {
                "measure": "GPU memory the card holds for the process (sampled device memory in use, and torch's "
                "peak less vLLM's pool while asleep, the larger) + CUDA context (0.9 GiB, assumed)",
                "peak": peak,
                "run": peak,
                "torch_peak_on_card": self.torch_peak,
                "sampled_device_delta": self.sampled_peak - self.before,
                "phases": self.phases,
                "cuda_context_assumed": CUDA_CONTEXT,
            }
        else:
            self._running = False
            peak = float(_peak_rss_bytes())
            self.result = {
                "measure": "peak RSS of this process (vLLM in-process), getrusage",
                "peak": peak + self.sampled_peak,  # the machine holds the verifier's workers too
                "run": peak - self.before,
                "peak_rss": peak,
                "rss_before_model": self.before,
                "children_peak_rss": self.sampled_peak,
            }
        return self.result


def watch_sleep(llm, meter: PeakMeter) -> Callable[[], None]:
    """Around each ``sleep`` and ``wake_up`` of ``llm`` (this instance only, as ``timing.time_rollouts`` wraps the
    engine's generate): the meter ends a phase before it and begins one after it. Returns a function that unwraps."""
    names = ("sleep", "wake_up")
    for name in names:
        original = getattr(llm, name)

        def around(*args, _original=original, **kwargs):
            meter.phase_ends()
            try:
                return _original(*args, **kwargs)
            finally:
                meter.phase_begins()

        setattr(llm, name, functools.wraps(original)(around))

    def stop() -> None:
        for name in names:
            delattr(llm, name)  # the class's method again

    return stop
