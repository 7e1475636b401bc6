"""One copy of the 4-bit base (``vllm_share_base: true``): the trainer's quantized layers view vLLM's weights.

The colocated engine holds the base twice: the trainer's peft model and vLLM each quantize the same checkpoint (nf4,
double quantization). ``share_base`` runs once, right after vLLM has loaded in this process: it points every
bitsandbytes ``Linear4bit`` under the trainer's LoRA layers at its own bytes inside vLLM's packed parameter, and the
embeddings (and an untied head) at vLLM's tensor where both hold the same dtype, without a copy, then lets the
trainer's own tensors go. LoRA stays on the trainer's modules; vLLM keeps serving each adapter version as before.

vLLM's layout (read in the versions ``train/config/share_base_checks.py`` lists): a 4-bit layer holds one uint8 parameter
of shape (bytes, 1); a fused layer (``qkv_proj``, ``gate_up_proj``: the model's ``packed_modules_mapping``) keeps its
shards back to back at ``weight.bnb_shard_offsets`` (bytes), each with its own ``QuantState`` in
``weight.bnb_quant_state`` (double quantization undone at load: fp32 absmax); under vLLM's LoRA the layer is the
wrapper's ``base_layer``. Everything is checked before one layer is rebound, and ``SharedLayoutError`` stops the run
otherwise: the layout, a vLLM shard for every trainer layer, and equal bytes, absmax, code and shape on both sides
(so the trainer computes exactly what it computed before).

What keeps vLLM's copy intact while the trainer trains:

* the trainer's tensors are aliases of vLLM's storage made outside inference mode: a view of an inference tensor is
  itself one (vLLM may create weights under ``torch.inference_mode``), and autograd cannot save those for backward;
* every trainer layer gets its own ``QuantState`` (a shallow copy: it shares absmax and code, which nothing writes
  in place) and bitsandbytes' CPU fast path is off on shared layers. On CPUs with AVX512-BF16, ``Linear4bit.forward``
  in eval mode without grad repacks ``weight.data`` and rewrites the layer's ``QuantState`` in place
  (bitsandbytes/nn/modules.py): with vLLM's own state that corrupted vLLM's output;
* shared tensors keep ``requires_grad=False``: no gradient reaches them and the optimizer never holds them.
  ``SharedBase.problems()`` re-checks every view (the engine runs it after each sync).
"""

from __future__ import annotations

import copy
import ctypes
import gc
import math
import mmap
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import torch

from cpu.bnb_seams import repacked_for_cpu, set_quant_state, stop_cpu_repack
from train.config.arguments import ConfigError
from train.config.share_base_checks import recognised_layouts
from train.vllm_seams import VLLM_VERSION, engine_model, packed_modules, shard_offsets, shard_states

MADV_DONTNEED = 4  # Linux madvise(2): drop these pages (a private file mapping re-reads them if touched)
LORA_WRAPPED = ".base_layer"  # peft's and vLLM's LoRA wrappers hold the original layer under this name


class SharedLayoutError(ConfigError):
    """vLLM's loaded weights are not in a layout the trainer can view, or differ from the trainer's."""


@dataclass(frozen=True)
class SharedTensor:
    """One trainer weight that is now a view of vLLM's: which vLLM parameter, from which byte, how many bytes."""

    name: str  # the trainer's module, LoRA wrapper removed (model.layers.0.self_attn.q_proj, model.embed_tokens)
    kind: str  # "4bit", "embedding" or "lm_head"
    owner: torch.nn.Module  # the trainer module whose ``weight`` it is (read at check time: ``.to()`` may replace it)
    vllm_name: str
    vllm_weight: torch.Tensor
    offset: int  # bytes from the start of vLLM's parameter
    nbytes: int

    def problem(self) -> str | None:
        weight = self.owner.weight
        if weight.data_ptr() != self.vllm_weight.data_ptr() + self.offset:
            return f"{self.name} is no longer a view of vLLM's {self.vllm_name} at byte {self.offset}"
        if weight.requires_grad or weight.is_inference():
            return f"{self.name}: a shared weight must not require grad or be an inference tensor"
        return None


@dataclass
class SharedBase:
    """What ``share_base`` did: the shared tensors, what the trainer freed, and what stayed its own (and why)."""

    tensors: list[SharedTensor]
    freed_bytes: int  # the trainer's own storage released (weak references to it died)
    kept: list[str] = field(default_factory=list)  # trainer weights whose old storage something else still holds
    not_shared: dict[str, str] = field(default_factory=dict)  # name -> why it stayed the trainer's own

    @property
    def shared_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    def problems(self) -> list[str]:
        """Every shared weight that stopped being a view of vLLM's (empty: all still are)."""
        return [p for p in (t.problem() for t in self.tensors) if p]

    def facts(self) -> dict:
        """For run.json's ``rollout_engine`` and the logs."""
        return {
            "layers_4bit": sum(t.kind == "4bit" for t in self.tensors),
            "tensors": len(self.tensors),
            "shared_bytes": self.shared_bytes,
            "freed_bytes": self.freed_bytes,
            "not_shared": dict(self.not_shared),
        }


def vllm_model(llm) -> torch.nn.Module:
    """The model a colocated vLLM runs in this process (the external launcher keeps the worker in-process; TRL's
    colocated sync reaches it the same way)."""
    try:
        return engine_model(llm)
    except AttributeError as exc:
        raise SharedLayoutError(
            f"vllm_share_base: vLLM's model is not reachable in this process ({exc}; train/vllm_seams.py "
            f"engine_model, read in vLLM {VLLM_VERSION}); this vLLM runs its worker differently. Set "
            "vllm_share_base: false."
        ) from exc


def share_base(policy: torch.nn.Module, vllm: torch.nn.Module) -> SharedBase:
    """Point the trainer's 4-bit layers (and same-dtype embeddings / head) of ``policy`` at ``vllm``'s weights.

    Checks everything first and raises ``SharedLayoutError`` (nothing changed) when a layout or a byte differs.
    """
    base = policy.get_base_model() if hasattr(policy, "get_base_model") else policy
    plan = _plan_4bit(_trainer_4bit_layers(base), vllm)
    embeddings, not_shared = _plan_embeddings(base, vllm)
    watched = []  # (trainer weight name, weak reference to the storage it drops, bytes, file address): no strong refs
    files = _private_file_mappings()
    shared = []
    for name, module, vllm_name, weight, start, stop, state in plan:
        watched += [_watch(name, t, files) for t in _quant_tensors(module.weight)]
        module.weight.data = _alias(weight, start, (stop - start, 1))
        set_quant_state(module, copy.copy(state))  # the trainer's own: nothing it does reaches vLLM's
        stop_cpu_repack(module)  # the CPU fast path would repack the shared bytes
        shared.append(SharedTensor(name, "4bit", module, vllm_name, weight, start, stop - start))
    for name, kind, module, vllm_name, weight in embeddings:
        rows = module.weight.shape[0]
        watched.append(_watch(name, module.weight.data, files))
        module.weight.data = _alias(weight, 0, (rows, weight.shape[1]))
        nbytes = rows * weight.shape[1] * weight.element_size()
        shared.append(SharedTensor(name, kind, module, vllm_name, weight, 0, nbytes))
    for t in shared:
        t.owner.weight.requires_grad_(False)
    freed, kept = _release(watched)
    result = SharedBase(shared, freed, kept, not_shared)
    if result.problems():
        raise SharedLayoutError("vllm_share_base: rebinding failed: " + "; ".join(result.problems()[:5]))
    return result


# ---- the plan: what maps to what, checked before anything changes ----------------------------------------------


def _trainer_4bit_layers(base: torch.nn.Module) -> dict[str, torch.nn.Module]:
    from bitsandbytes.nn import Linear4bit

    return {
        name.removesuffix(LORA_WRAPPED): module
        for name, module in base.named_modules()
        if isinstance(module, Linear4bit)
    }


def _vllm_4bit_layers(vllm: torch.nn.Module) -> dict[str, torch.Tensor]:
    """vLLM's 4-bit weights by layer name (LoRA wrapper removed): parameters that carry per-shard quantization states."""
    layers = {}
    for name, module in vllm.named_modules():
        weight = module._parameters.get("weight")  # registered here, not a wrapper's property
        if weight is not None and shard_states(weight) is not None:
            layers[name.removesuffix(LORA_WRAPPED)] = weight
    return layers


def _plan_4bit(trainer: dict[str, torch.nn.Module], vllm: torch.nn.Module) -> list[tuple]:
    """(name, trainer module, vLLM layer, vLLM weight, start byte, stop byte, vLLM QuantState) for every trainer layer."""
    if not trainer:
        raise SharedLayoutError(
            "vllm_share_base: the trainer's model has no bitsandbytes 4-bit layers to share (is load_in_4bit set?)."
        )
    packed = packed_modules(vllm)
    shards: dict[str, tuple[str, int]] = {}  # trainer layer name -> (vLLM layer, shard index)
    problems = []
    layers = _vllm_4bit_layers(vllm)
    for vllm_name, weight in layers.items():
        parent, _, leaf = vllm_name.rpartition(".")
        names = [f"{parent}.{sub}" if parent else sub for sub in packed.get(leaf, [leaf])]
        problem = _layout_problem(vllm_name, weight, len(names))
        if problem:
            problems.append(problem)
            continue
        shards.update({name: (vllm_name, index) for index, name in enumerate(names)})
    if problems:
        raise _layout_error(problems)
    missing = sorted(set(trainer) - set(shards))
    if missing:
        raise _layout_error([f"no 4-bit vLLM shard for the trainer's {', '.join(missing[:5])} ({len(missing)} layers)"])
    plan = []
    for name, module in trainer.items():
        vllm_name, index = shards[name]
        weight = layers[vllm_name]
        start, stop = (int(x) for x in shard_offsets(weight)[index : index + 2].tolist())
        state = shard_states(weight)[index]
        problem = _content_problem(name, module, weight.data[start:stop], state)
        if problem:
            problems.append(problem)
        plan.append((name, module, vllm_name, weight, start, stop, state))
    if problems:
        raise SharedLayoutError(
            "vllm_share_base: the trainer's 4-bit weights are not the bytes vLLM holds, so sharing would change the "
            f"policy: {'; '.join(problems[:5])}{' ...' if len(problems) > 5 else ''}. Both must quantize the same "
            "checkpoint as nf4 with double quantization (the config's bnb settings); otherwise set vllm_share_base: false."
        )
    return plan


def _layout_error(problems: list[str]) -> SharedLayoutError:
    return SharedLayoutError(
        "vllm_share_base: vLLM's loaded 4-bit weights are not in the layout the trainer can view: "
        f"{'; '.join(problems[:5])}{' ...' if len(problems) > 5 else ''}. Layouts read: {recognised_layouts()}. "
        "Set vllm_share_base: false (the run then keeps two copies of the base, as without it)."
    )


def _layout_problem(name: str, weight: torch.Tensor, shards: int) -> str | None:
    from bitsandbytes.functional import QuantState

    data = weight.data
    if data.dtype != torch.uint8 or data.dim() != 2 or data.shape[1] != 1 or not data.is_contiguous():
        return f"{name}: weight is {data.dtype} {tuple(data.shape)}, not contiguous packed uint8 (bytes, 1)"
    states = shard_states(weight)
    if not isinstance(states, dict) or sorted(states) != list(range(shards)):
        return f"{name}: its quantization states are not one QuantState per shard 0..{shards - 1}"
    offsets = shard_offsets(weight)
    bounds = [int(x) for x in offsets.tolist()] if isinstance(offsets, torch.Tensor) else []
    if len(bounds) != shards + 1 or bounds[0] != 0 or bounds[-1] != data.shape[0]:
        return f"{name}: shard offsets {bounds} do not cut its {data.shape[0]} bytes into {shards} shards"
    for index, state in states.items():
        if not isinstance(state, QuantState) or state.nested or state.quant_type != "nf4":
            return f"{name} shard {index}: not a flat (double quantization undone) nf4 QuantState"
        if state.absmax.dtype != torch.float32 or bounds[index + 1] - bounds[index] != math.prod(state.shape) // 2:
            return f"{name} shard {index}: fp32 absmax and {math.prod(state.shape) // 2} bytes expected"
    return None


def _content_problem(name: str, module: torch.nn.Module, vllm_bytes: torch.Tensor, state) -> str | None:
    """Why the trainer's layer is not the same quantized tensor as vLLM's shard (None: it is, byte for byte)."""
    weight = module.weight
    mine = weight.quant_state
    if mine is None or repacked_for_cpu(mine):
        return f"{name}: the trainer's layer has no QuantState or was repacked for the CPU already"
    if (tuple(mine.shape), mine.blocksize, mine.quant_type, mine.dtype) != (
        tuple(state.shape),
        state.blocksize,
        state.quant_type,
        state.dtype,
    ):
        return (
            f"{name}: trainer {tuple(mine.shape)} {mine.quant_type} block {mine.blocksize} {mine.dtype}, vLLM "
            f"{tuple(state.shape)} {state.quant_type} block {state.blocksize} {state.dtype}"
        )
    if weight.device != vllm_bytes.device or weight.data.dtype != torch.uint8:
        return f"{name}: trainer weight {weight.data.dtype} on {weight.device}, vLLM's uint8 on {vllm_bytes.device}"
    if weight.numel() != vllm_bytes.numel() or not torch.equal(weight.data.reshape(-1), vllm_bytes.reshape(-1)):
        return f"{name}: the packed 4-bit bytes differ"
    if not torch.equal(_flat_absmax(mine), state.absmax) or not torch.equal(mine.code, state.code.to(mine.code.device)):
        return f"{name}: the quantization constants (absmax or code) differ"
    return None


def _flat_absmax(state) -> torch.Tensor:
    """The per-block scales as fp32, double quantization undone exactly as vLLM's loader does (``_dequantize_dq``)."""
    if not state.nested:
        return state.absmax
    from bitsandbytes.functional import dequantize_blockwise

    absmax = dequantize_blockwise(state.absmax, state.state2)
    absmax += state.offset
    return absmax.float()


def _plan_embeddings(base: torch.nn.Module, vllm: torch.nn.Module) -> tuple[list[tuple], dict[str, str]]:
    """(name, kind, trainer module, vLLM name, vLLM weight) for the input embeddings and an untied head, where both
    sides hold equal tensors of one dtype (vLLM may pad rows at the end); otherwise why not."""
    names = {id(module): name for name, module in base.named_modules()}
    vllm_params = {
        name.replace(LORA_WRAPPED, ""): p for name, p in vllm.named_parameters(remove_duplicate=False) if p.dim() == 2
    }
    embed, head = base.get_input_embeddings(), base.get_output_embeddings()
    candidates = [("embedding", embed)]
    if head is not None and head.weight is not embed.weight:  # a tied head is the embedding's own tensor
        candidates.append(("lm_head", head))
    plan, skipped = [], {}
    for kind, module in candidates:
        name = names.get(id(module), kind)
        vllm_name = f"{name}.weight"
        theirs, mine = vllm_params.get(vllm_name), module.weight
        why = None
        if theirs is None:
            why = f"vLLM has no {vllm_name}"
        elif theirs.dtype != mine.dtype or theirs.device != mine.device:
            why = f"trainer {mine.dtype} on {mine.device}, vLLM {theirs.dtype} on {theirs.device}"
        elif theirs.shape[1:] != mine.shape[1:] or theirs.shape[0] < mine.shape[0] or not theirs.is_contiguous():
            why = f"trainer {tuple(mine.shape)}, vLLM {tuple(theirs.shape)}"
        elif not torch.equal(theirs.data[: mine.shape[0]], mine.data):
            why = "the values differ"
        if why:
            skipped[name] = why
        else:
            plan.append((name, kind, module, vllm_name, theirs))
    return plan, skipped


# ---- views and release ------------------------------------------------------------------------------------------


def _alias(weight: torch.Tensor, start: int, shape: tuple[int, ...]) -> torch.Tensor:
    """A tensor over ``weight``'s storage from element ``start`` (no copy), never an inference tensor: made outside
    inference mode on the storage itself, where a view of an inference tensor would be one too."""
    data = weight.data
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= size
    with torch.inference_mode(False):
        alias = torch.empty(0, dtype=data.dtype, device=data.device)
        alias.set_(data.untyped_storage(), data.storage_offset() + start, shape, strides)
    return alias


def _quant_tensors(weight) -> list[torch.Tensor]:
    """The trainer's own tensors of a 4-bit weight: the packed bytes and the (nested) quantization constants."""
    state = weight.quant_state
    tensors = [weight.data, state.absmax]
    if state.nested:
        tensors.append(state.state2.absmax)
    return tensors


def _watch(name: str, tensor: torch.Tensor, files: list[tuple[int, int]]) -> tuple:
    """(name, weak reference to the storage, bytes, its address if it lies in a privately mapped file, else None)."""
    storage = tensor.untyped_storage()
    ptr = storage.data_ptr()
    mapped = ptr if tensor.device.type == "cpu" and any(a <= ptr < b for a, b in files) else None
    return name, weakref.ref(storage), storage.nbytes(), mapped


def _release(watched: list[tuple]) -> tuple[int, list[str]]:
    """Collect, then count the bytes whose storage died; hand freed memory back to the system."""
    gc.collect()
    freed, kept, seen = 0, [], set()
    for name, ref, nbytes, mapped in watched:
        if id(ref) in seen:
            continue
        seen.add(id(ref))
        if ref() is None:
            freed += nbytes
            if mapped is not None:
                _drop_file_pages(mapped, nbytes)
        elif name not in kept:
            kept.append(name)
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    _trim_heap()
    return freed, kept


def _private_file_mappings() -> list[tuple[int, int]]:
    """Address ranges of files this process maps privately (transformers reads a safetensors checkpoint through
    mmap: on CPU an unquantized tensor such as the embeddings can stay a view of the file)."""
    try:
        lines = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return []  # not Linux: nothing is dropped
    ranges = []
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[5].startswith("/") and fields[1].endswith("p"):
            start, stop = (int(x, 16) for x in fields[0].split("-"))
            ranges.append((start, stop))
    return ranges


def _drop_file_pages(ptr: int, nbytes: int) -> None:
    """Release the resident pages of a dead tensor that was a view of a mapped file (its mapping stays, held by
    the file's other tensors, so freeing the tensor alone keeps them in RSS). Only whole pages inside the tensor:
    a neighbour sharing an edge page keeps it. Private mapping: a page touched again is re-read from the file."""
    start = -(-ptr // mmap.PAGESIZE) * mmap.PAGESIZE
    stop = (ptr + nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
    if stop > start:
        ctypes.CDLL(None).madvise(ctypes.c_void_p(start), ctypes.c_size_t(stop - start), MADV_DONTNEED)


def _trim_heap() -> None:
    """Freed CPU tensors stay in glibc's heap (and the process's RSS) until trimmed."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim
