"""Pre-flight checks that depend on the machine: the device, the vLLM settings it can run, and GPU memory.

Which vLLM build and plugin are installed, and whether they fit, is ``train/config/vllm_install.py``; the memory
estimate itself is ``train/config/memory_model.py`` (the GPU check measures against the same one); import their names
from there.

Kept apart from ``train/config/validation.py`` (checks on the config alone) because these read what
is installed and visible. All run before any model loads. A LoRA policy with ``use_vllm`` generates
through an adapter engine (``train/engines/``); a full-weights policy keeps TRL's sync.
"""

from __future__ import annotations

import math

from train.config.device_capability import check_device_capability, check_torch_runs_on_device
from train.config.distributed_checks import check_placement, check_shared_gpu
from train.config.memory_model import GIB, colocated_vllm, estimate_for, usable_bytes
from train.config.nvidia_driver import why_torch_sees_no_gpu
from train.config.triton_toolchain import triton_build_problem
from train.config.vllm_install import (
    INSTALL_CPU,
    SUPPORTED,
    MachineConfigError,
    check_bnb,
    check_vllm_line,
    installed_vllm,
)
from train.engines.choice import Engine, rollout_engine

CPU_CONFIGS = "configs/cpu-smollm2.yaml (or configs/cpu-smollm2-vllm.yaml for vLLM rollouts)"


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (the one place that asks; tests replace it)."""
    import torch

    return torch.cuda.is_available()


def device_count() -> int:
    """How many CUDA GPUs this process sees (the one place that asks; tests replace it)."""
    import torch

    return torch.cuda.device_count()


def gpu_recipe_refusal(setting: str, cpu_fix: str) -> str:
    """The refusal of a GPU config on a machine where torch sees no GPU: ``setting`` made it a GPU run, ``cpu_fix``
    undoes it. When the machine has an NVIDIA driver torch cannot use (too old for torch's CUDA, a CPU-only torch, a
    card CUDA 13 dropped, a hidden device), the refusal names the driver, the minimum and what to install instead."""
    why = why_torch_sees_no_gpu()
    if why is not None:
        problem, fix = why
        return f"this is a GPU recipe ({setting}) and {problem}. To run it: {fix}."
    return (
        f"this is a GPU recipe ({setting}) and no CUDA GPU is visible. Run it on a GPU; on this machine use "
        f"{CPU_CONFIGS}, or {cpu_fix} to run this config on CPU (slow)."
    )


def check_machine(script_args, training_args, model_args) -> None:
    """Raise MachineConfigError when this config cannot run on this machine."""
    cuda = cuda_available()
    if not training_args.use_cpu and not cuda:
        raise MachineConfigError(gpu_recipe_refusal("use_cpu is false", "set `use_cpu: true`"))
    check_vllm(training_args, model_args, cuda=cuda, server_urls=script_args.vllm_server_urls)
    if cuda and not training_args.use_cpu:
        check_triton_toolchain()  # Triton builds its CUDA launcher on first use: a compiler and Python.h
        check_torch_runs_on_device()  # torch's CUDA build has kernels for this card (CUDA 13: 7.5 and up)
        check_device_capability(training_args, model_args)  # bf16 in vLLM below compute capability 8.0
        check_placement(script_args, training_args, device_count())
        check_gpu_memory(training_args, model_args, share_base=script_args.vllm_share_base)
        check_shared_gpu(training_args, model_args, share_base=script_args.vllm_share_base)
    if training_args.fp16 and not cuda:
        raise MachineConfigError("fp16: mixed precision fp16 needs a GPU. Set fp16: false (or bf16: true) on CPU.")


def check_triton_toolchain() -> None:
    """Refuse a GPU run where Triton could not build its launcher (train/config/triton_toolchain.py): it would stop
    only after the model loaded."""
    problem = triton_build_problem()
    if problem is not None:
        what, fix = problem
        raise MachineConfigError(f"{what}. Before a GPU run, {fix}.")


def check_vllm(training_args, model_args, cuda: bool, server_urls=()) -> None:
    """vLLM settings this machine (colocated) or these servers (``vllm_mode: server``) cannot run.

    In server mode with a LoRA policy (``train/engines/server.py``) vLLM runs in the servers, so the
    trainer needs no local vLLM build; the servers' own build is theirs to match (``server_command``; a
    4-bit server on vLLM >= 0.28 without the plugin fails at its own start), and the pool checks at start
    what it can ask them (``ServerPool.check_servers``).
    """
    if not training_args.use_vllm:
        return
    server = rollout_engine(training_args, model_args) is Engine.SERVER
    if not server:
        found = installed_vllm()
        if found is None:
            raise MachineConfigError(f"use_vllm: vLLM is not installed. Install it: {SUPPORTED}.")
        dist, version = found
        if dist == "vllm" and not cuda:
            raise MachineConfigError(
                f"use_vllm: the installed vLLM {version} is the CUDA build and no CUDA GPU is visible. On CPU install "
                f"the CPU build ({INSTALL_CPU}) and use {CPU_CONFIGS}, or set use_vllm: false."
            )
        check_vllm_line(dist, version)
    if model_args.load_in_8bit:
        raise MachineConfigError(
            "load_in_8bit with use_vllm: vLLM has no in-flight 8-bit quantization. Use load_in_4bit."
        )
    if model_args.load_in_4bit:
        if model_args.bnb_4bit_quant_type != "nf4" or not model_args.use_bnb_nested_quant:
            raise MachineConfigError(
                "load_in_4bit with use_vllm: vLLM quantizes the base as nf4 with double quantization, so the trainer "
                "must too, or the rollouts come from a different policy. Set `bnb_4bit_quant_type: nf4` and "
                "`use_bnb_nested_quant: true`."
            )
        if not server:
            check_bnb(dist, version)  # last: it imports vLLM and loads its plugins
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


def check_gpu_memory(training_args, model_args, share_base: bool = False) -> None:
    """Refuse, before loading, a config whose estimated peak exceeds what this process may use."""
    import torch

    _, total = torch.cuda.mem_get_info()
    fraction = getattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)()
    usable = usable_bytes(total, fraction)  # the estimate counts the CUDA context: so does what may be held
    estimate = estimate_for(training_args, model_args, total, share_base=share_base)
    if estimate is None:
        return
    if colocated_vllm(training_args):
        check_vllm_pool(training_args.vllm_gpu_memory_utilization, estimate.parts["vLLM pool"], estimate, total)
    if estimate.total <= usable:
        return
    raise MachineConfigError(
        f"estimated peak GPU memory {estimate.total / GIB:.1f} GiB exceeds this GPU's {usable / GIB:.1f} GiB "
        f"({estimate.describe()} GiB). Lower per_device_train_batch_size (raise gradient_accumulation_steps to "
        "keep the batch), max_completion_length or vllm_gpu_memory_utilization, turn on gradient_checkpointing, "
        "or set load_in_4bit: true."
    )


def vllm_pool_shortfall(pool: float, estimate) -> float:
    """How many bytes vLLM's pool lacks for what it holds before any KV cache plus one sequence's KV cache
    (``estimate.vllm_minimum``); 0 if none."""
    return max(0.0, sum(estimate.vllm_minimum.values()) - pool)


def check_vllm_pool(utilization: float, pool: float, estimate, total: float) -> None:
    """Refuse a vLLM pool that vLLM itself would refuse while loading: it must hold vLLM's weights, activations, CUDA
    graphs and non-torch memory, and then the KV cache of one max_model_len sequence (train/config/memory_model.py
    ``vllm_pool_minimum``)."""
    if not vllm_pool_shortfall(pool, estimate):
        return
    needs = sum(estimate.vllm_minimum.values())
    one_sequence = next((value for name, value in estimate.vllm_minimum.items() if name.startswith("KV cache")), 0.0)
    refusal = (
        '"No available memory for the cache blocks"'
        if pool <= needs - one_sequence
        else "too little KV cache for one max_model_len sequence"
    )
    parts = ", ".join(f"{name} {value / GIB:.2f}" for name, value in estimate.vllm_minimum.items())
    raise MachineConfigError(
        f"vllm_gpu_memory_utilization {utilization:g} gives vLLM {pool / GIB:.2f} GiB of this GPU, less than the "
        f"{needs / GIB:.2f} GiB it must hold before serving one sequence ({parts} GiB), so vLLM would stop while "
        f"loading ({refusal}): raise vllm_gpu_memory_utilization to at least {math.ceil(100 * needs / total) / 100:.2f}"
        ", or lower vllm_max_model_length."
    )
