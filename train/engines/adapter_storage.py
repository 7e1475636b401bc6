"""Where the colocated engine writes its adapter versions: RAM-backed ``/dev/shm`` when it has room, else a disk
temporary directory (with a one-line notice), or the config's ``adapter_root``.

Every sync writes the new version before the previous one is deleted, so two versions exist at once. TRL
keeps a QLoRA adapter in bf16 (``grpo_trainer.py`` casts LoRA parameters of a quantized model) and peft
upcasts a full-precision policy's to fp32; at rank 16 on the seven projections that is ~37 MB for Qwen2.5-1.5B
(4-bit) and ~60 MB for 3B, 74 / 120 MB at once: more than Docker's default ``--shm-size`` (64 MiB), where a
write to ``/dev/shm`` fails with "No space left on device" at the first sync. So the free space is checked
against the adapter's size before ``/dev/shm`` is used. The size comes from the policy's LoRA parameters: the
meta-device model pre-flight builds (``train/config/lora_checks.py``) and, in the engine, the real one.

The free space is one budget per node: every colocated training process of a node checks it before any of them
writes (so each sees the same free bytes) and then writes its own two versions into the same ``/dev/shm`` (or disk),
beside NCCL's own shared-memory segments. The need is therefore the node's: ``LOCAL_WORLD_SIZE`` (set by torchrun and
``accelerate launch``; 1 without a launcher) times one process's, and all ranks of a node reach the same decision.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

ADAPTER_DIR_PREFIX = "verigrpo-adapter-"
RAM_ROOT = "/dev/shm"
VERSIONS_AT_ONCE = 2  # the new version is written before the previous one is removed
HEADROOM = 1.1  # peft's safetensors header and adapter_config.json, and a margin
MIB = 1024**2


def adapter_bytes(peft_model, bytes_per_param: int | None = None) -> int:
    """Bytes of the adapter peft saves: its LoRA parameters at ``bytes_per_param`` (default: their own dtype's size;
    on the meta model pass what training will hold: 2 for a 4-bit policy, whose adapter TRL keeps in bf16, else 4)."""
    return sum(
        (getattr(p, "ds_numel", None) or p.numel()) * (bytes_per_param or p.element_size())  # ZeRO-3: whole size
        for name, p in peft_model.named_parameters()
        if "lora_" in name
    )


def needed_bytes(adapter: int) -> int:
    """Free space one process's adapter versions need at their peak (two versions, with headroom)."""
    return int(adapter * VERSIONS_AT_ONCE * HEADROOM)


def ranks_on_this_node() -> int:
    """Training processes on this node that write adapter versions: ``LOCAL_WORLD_SIZE`` (torchrun, accelerate
    launch), else 1."""
    try:
        return max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        return 1


def _processes(ranks: int) -> str:
    return "" if ranks == 1 else f" for the {ranks} training processes on this node"


@dataclass(frozen=True)
class AdapterRoot:
    """Where adapter versions go: ``parent`` (a fresh directory is made inside it unless ``configured``)."""

    parent: str | None  # None: the system's temporary directory (tempfile's choice: $TMPDIR, /tmp, ...)
    configured: bool  # the config's adapter_root: written into directly, never removed
    notice: str | None = None  # why /dev/shm was not used, when it exists


def _free(path: str) -> int:
    return shutil.disk_usage(path).free


def choose_root(adapter: int, configured: str | None = None, ranks: int | None = None) -> AdapterRoot:
    """The configured ``adapter_root``, else ``/dev/shm`` when it is writable and holds two versions for each of the
    node's ``ranks`` (default ``ranks_on_this_node()``), else disk.

    Raises OSError (with the sizes and the fix) when the chosen place cannot hold them.
    """
    ranks = ranks or ranks_on_this_node()
    need = needed_bytes(adapter) * ranks
    if configured is not None:
        Path(configured).mkdir(parents=True, exist_ok=True)
        _require(configured, need, adapter, "adapter_root", ranks)
        return AdapterRoot(configured, configured=True)
    notice = None
    if os.path.isdir(RAM_ROOT) and os.access(RAM_ROOT, os.W_OK):
        free = _free(RAM_ROOT)
        if free >= need:
            return AdapterRoot(RAM_ROOT, configured=False)
        disk = tempfile.gettempdir()
        notice = (
            f"adapter versions go to {disk} (disk), not {RAM_ROOT}: it has {free / MIB:.0f} MiB free and a sync needs "
            f"{need / MIB:.0f} MiB (two {adapter / MIB:.0f} MiB versions{_processes(ranks)}); raise the container's "
            "--shm-size or set adapter_root to silence this"
        )
    _require(tempfile.gettempdir(), need, adapter, "the temporary directory", ranks)
    return AdapterRoot(None, configured=False, notice=notice)


def _require(path: str, need: int, adapter: int, what: str, ranks: int = 1) -> None:
    free = _free(path)
    if free < need:
        raise OSError(
            f"{what} {path} has {free / MIB:.0f} MiB free; the adapter engine writes two {adapter / MIB:.0f} MiB adapter "
            f"versions at each sync{_processes(ranks)} ({need / MIB:.0f} MiB). Free space there or set adapter_root "
            "to a directory with room."
        )


def make_adapter_dir(root: AdapterRoot) -> tuple[Path, bool]:
    """(directory, owned): the configured root itself (not owned), or a fresh directory named after this process
    (``verigrpo-adapter-<pid>-...``, so a leftover can be traced to its run) that the engine removes at the end."""
    if root.configured:
        return Path(root.parent), False
    if root.notice:
        logger.warning(root.notice)
    return Path(tempfile.mkdtemp(prefix=f"{ADAPTER_DIR_PREFIX}{os.getpid()}-", dir=root.parent)), True
