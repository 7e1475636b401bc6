"""Pre-flight checks for runs past one process: what accelerate launched, where the trainer sits, how long
the other ranks may wait.

Kept apart from ``train/config/machine_checks.py`` (one machine: device, vLLM build, memory)
because these read what ``accelerate launch`` set up. accelerate passes its choices to the processes in
environment variables (``accelerate/utils/launch.py``: ``ACCELERATE_USE_DEEPSPEED``,
``ACCELERATE_DEEPSPEED_ZERO_STAGE`` or ``ACCELERATE_DEEPSPEED_CONFIG_FILE``, ``ACCELERATE_USE_FSDP``,
``WORLD_SIZE``); they are read here, without importing accelerate or transformers, because
transformers' ``TrainingArguments`` already fails while the config is parsed when DeepSpeed is chosen
and not installed (a ``PackageNotFoundError`` traceback), so that refusal must come first
(``check_launcher``). Every refusal names the setting and the fix; all run before any model loads.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from importlib import metadata

from train.config.arguments import ConfigError
from train.config.memory_model import CUDA_CONTEXT, estimate_for
from train.engines.choice import Engine, rollout_engine

TRUE = ("y", "yes", "t", "true", "on", "1")  # accelerate's str_to_bool (accelerate/utils/environment.py)
# The held-out eval's pace on a GPU: transformers generate of the 4-bit 1.5B recipe took 52 s for 512 tokens of
# 16 sequences (docs/gpu-16gb.md), ~0.1 s per decoded token of a batch. An estimate for the wait check only.
EVAL_SECONDS_PER_TOKEN = 0.1


class DistributedConfigError(ConfigError):
    """A launch (accelerate, placement, timeouts) this run cannot work under, with the fix in the message."""


@dataclass(frozen=True)
class Launch:
    """What accelerate (or torchrun) set up for this process, from its environment."""

    world_size: int = 1  # training processes over all nodes
    deepspeed: bool = False
    zero_stage: int | None = None  # DeepSpeed's ZeRO stage (accelerate's default is 2)
    fsdp: bool = False

    @property
    def shards_parameters(self) -> str | None:
        """'DeepSpeed ZeRO-3' or 'FSDP' when the parameters are sharded over the processes, else None."""
        if self.deepspeed and self.zero_stage == 3:
            return "DeepSpeed ZeRO-3"
        return "FSDP" if self.fsdp else None


def _flag(name: str, env) -> bool:
    return env.get(name, "false").strip().lower() in TRUE


def launch_from_env(env=None, training_args=None) -> Launch:
    """The launch as accelerate's variables describe it; ``training_args.deepspeed``/``fsdp`` (TRL's own keys)
    count too."""
    env = os.environ if env is None else env
    deepspeed = _flag("ACCELERATE_USE_DEEPSPEED", env) or bool(getattr(training_args, "deepspeed", None))
    stage = None
    if deepspeed:
        stage = _zero_stage(env, getattr(training_args, "deepspeed", None))
    fsdp = _flag("ACCELERATE_USE_FSDP", env) or bool(getattr(training_args, "fsdp", None))
    try:
        world = int(env.get("WORLD_SIZE", "1"))
    except ValueError:
        world = 1
    return Launch(world_size=max(1, world), deepspeed=deepspeed, zero_stage=stage, fsdp=fsdp)


def _zero_stage(env, config=None) -> int:
    """ZeRO stage: a DeepSpeed JSON config's ``zero_optimization.stage`` wins (accelerate passes its path), else
    accelerate's variable, else accelerate's default (2)."""
    config = config or env.get("ACCELERATE_DEEPSPEED_CONFIG_FILE")
    if isinstance(config, dict):
        return int(config.get("zero_optimization", {}).get("stage", 0))
    if config and config != "none" and os.path.isfile(config):
        try:
            with open(config) as handle:
                return int(json.load(handle).get("zero_optimization", {}).get("stage", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            pass  # DeepSpeed reads the file itself and says what is wrong with it
    try:
        return int(env.get("ACCELERATE_DEEPSPEED_ZERO_STAGE", "2"))
    except ValueError:
        return 2


def check_launcher(env=None) -> None:
    """Before the config is parsed: DeepSpeed chosen by accelerate must be installed (transformers otherwise
    fails inside ``TrainingArguments`` with a PackageNotFoundError traceback)."""
    launch = launch_from_env(env)
    if launch.deepspeed:
        try:
            metadata.version("deepspeed")
        except metadata.PackageNotFoundError:
            raise DistributedConfigError(
                f"accelerate chose DeepSpeed (ACCELERATE_USE_DEEPSPEED=true, ZeRO stage {launch.zero_stage}: "
                "configs/accelerate/deepspeed-zero*.yaml) but deepspeed is not installed. Install it "
                "(pip install deepspeed) or launch with DDP: --config_file configs/accelerate/ddp.yaml."
            ) from None


def check_distributed(script_args, training_args, model_args, env=None) -> None:
    """Sharded 4-bit bases, FSDP with the adapter engines, and the other ranks' longest wait."""
    launch = launch_from_env(env, training_args)
    sharded = launch.shards_parameters
    if sharded and model_args.load_in_4bit:
        dtype = model_args.dtype if model_args.dtype not in (None, "auto") else None
        if dtype is None or model_args.bnb_4bit_quant_storage != dtype:
            wanted = dtype or "bfloat16"
            fix = f"--bnb_4bit_quant_storage {wanted}" + ("" if dtype else f" --dtype {wanted}")
            raise DistributedConfigError(
                f"load_in_4bit under {sharded}: the packed 4-bit weights are stored as "
                f"{model_args.bnb_4bit_quant_storage or 'uint8'} and the others as {model_args.dtype}; {sharded} "
                "flattens and gathers every parameter in one dtype, so it fails after the model loads. Store the "
                f"4-bit weights in the compute dtype: set `bnb_4bit_quant_storage: {wanted}` ({fix})."
            )
    engine = rollout_engine(training_args, model_args)
    if launch.fsdp and engine is not Engine.NONE:
        raise DistributedConfigError(
            f"FSDP with the {engine.value} adapter engine: at every sync the engine saves the LoRA adapter for "
            "vLLM from the parameters the saving process holds, and TRL gathers sharded parameters only under "
            "DeepSpeed ZeRO-3 (under FSDP its gather is a no-op), so the adapter would be a shard, or the save "
            "would hang. Launch with DDP "
            "(configs/accelerate/ddp.yaml) or DeepSpeed ZeRO-3 (configs/accelerate/deepspeed-zero3.yaml), or "
            "set use_vllm: false."
        )
    if launch.world_size > 1:
        check_zero3_main_only_generation(training_args, launch)
        check_waits(script_args, training_args, model_args, launch.world_size)


def check_zero3_main_only_generation(training_args, launch: Launch) -> None:
    """Refuse the held-out eval under ZeRO-3 without ``ds3_gather_for_generation``: the main process generates alone
    (``train/artifacts/held_out.py``) through a model whose every forward all-gathers weight shards from all
    processes, while the others wait in a barrier: a deadlock at the first eval. With the gather (TRL's default) the
    weights are gathered once on every process and the main process's forward is its own."""
    zero3 = launch.deepspeed and launch.zero_stage == 3
    if not zero3 or training_args.ds3_gather_for_generation or training_args.eval_strategy == "no":
        return
    raise DistributedConfigError(
        "ds3_gather_for_generation: false under DeepSpeed ZeRO-3 with a held-out eval (eval_strategy: "
        f"{training_args.eval_strategy}): the main process runs the eval alone, and without the gather each of its "
        "forwards waits for the other processes' weight shards while they wait for it: the run would hang at the "
        "first eval. Set ds3_gather_for_generation: true (TRL's default), or eval_strategy: no."
    )


@dataclass(frozen=True)
class Waits:
    """The longest the other ranks wait in one collective while the main process works alone (seconds)."""

    rollout: float  # adapter sync + generation on the servers (server engine), else 0
    held_out: float  # the held-out eval on the main process (an estimate), else 0

    @property
    def worst(self) -> float:
        return max(self.rollout, self.held_out)


def sync_requests_bound(timeout: float) -> float:
    """The longest an adapter sync can take (``ServerPool.load``): load, unload the old one, and if that
    answers 404, list the models and reload the current adapter — one ``timeout`` each."""
    return 4 * timeout


def main_process_waits(script_args, training_args, model_args) -> Waits:
    rollout = 0.0
    if rollout_engine(training_args, model_args) is Engine.SERVER:
        timeout = script_args.vllm_server_request_timeout
        rollout = sync_requests_bound(timeout) + timeout  # then one generation request per server, in parallel
    held_out = 0.0
    if training_args.eval_strategy != "no" and script_args.eval_problems:
        tokens = script_args.eval_max_tokens or 2 * training_args.max_completion_length
        batches = math.ceil(script_args.eval_problems / training_args.per_device_eval_batch_size)
        held_out = batches * tokens * EVAL_SECONDS_PER_TOKEN
    return Waits(rollout, held_out)


def check_waits(script_args, training_args, model_args, world_size: int) -> None:
    """With several processes the others wait in one collective while the main process syncs and rolls out
    (server engine) or runs the held-out eval; past ``ddp_timeout`` the collective aborts with an opaque
    watchdog error instead of the server's own. Refuse a config whose bounded waits exceed it."""
    waits = main_process_waits(script_args, training_args, model_args)
    limit = training_args.ddp_timeout
    if waits.worst < limit:
        return
    parts = []
    if waits.rollout:
        timeout = script_args.vllm_server_request_timeout
        parts.append(
            f"an adapter sync and a generation on the vLLM servers can take up to {waits.rollout:.0f} s (5 requests "
            f"x vllm_server_request_timeout {timeout:g} s)"
        )
    if waits.held_out:
        parts.append(
            f"the held-out eval takes about {waits.held_out:.0f} s ({script_args.eval_problems} problems, "
            f"{EVAL_SECONDS_PER_TOKEN} s per generated token of a batch of {training_args.per_device_eval_batch_size})"
        )
    need = math.ceil(waits.worst * 1.5 / 60) * 60
    raise DistributedConfigError(
        f"ddp_timeout {limit} s is shorter than the longest wait of the other {world_size - 1} process(es) while "
        f"the main process works alone: {'; '.join(parts)}. They would abort with a collective timeout instead of "
        f"the real error. Raise ddp_timeout to at least {need}"
        + (", or lower vllm_server_request_timeout" if waits.rollout else "")
        + (", eval_problems or eval_max_tokens" if waits.held_out else "")
        + "."
    )


def check_placement(script_args, training_args, device_count: int, env=None) -> None:
    """One process that sees several GPUs while vLLM servers are configured: transformers would spread the model
    over every visible GPU (``device_map="auto"``), the servers' too. Unless the user placed it
    (``CUDA_VISIBLE_DEVICES``) or launched one process per GPU."""
    env = os.environ if env is None else env
    servers = bool(script_args.vllm_server_urls) or (training_args.use_vllm and training_args.vllm_mode == "server")
    if not servers or device_count <= 1 or launch_from_env(env).world_size > 1:
        return
    if env.get("CUDA_VISIBLE_DEVICES", "").strip():
        return
    raise DistributedConfigError(
        f"one training process sees {device_count} GPUs while rollouts come from vLLM servers: the model would be "
        "spread over every visible GPU, including those the servers use. Give the trainer its GPU(s): "
        "CUDA_VISIBLE_DEVICES=0 python train/grpo.py ..., or one process per trainer GPU: CUDA_VISIBLE_DEVICES=0,1 "
        "accelerate launch --config_file configs/accelerate/ddp.yaml --num_processes 2 train/grpo.py ... "
        "(docs/scaling-out.md#one-node-several-gpus)."
    )


def check_free_memory(needed: float, free: float, total: float, own: float) -> None:
    """Refuse a process whose estimated peak (``needed`` bytes, this process's CUDA context ``own`` included) is
    more than the GPU has free: another process (a vLLM server, another rank) already uses the rest."""
    available = free + own
    if needed <= available:
        return
    gib = 1024**3
    raise DistributedConfigError(
        f"estimated peak GPU memory {needed / gib:.1f} GiB exceeds what this GPU has free ({free / gib:.1f} of "
        f"{total / gib:.1f} GiB): other processes use {(total - free - own) / gib:.1f} GiB of it (a vLLM server or "
        "another training process on the same GPU?). Give each training process a GPU of its own "
        "(CUDA_VISIBLE_DEVICES, docs/scaling-out.md), or lower per_device_train_batch_size / max_completion_length."
    )


def check_shared_gpu(training_args, model_args, share_base: bool = False) -> None:
    """The memory estimate (``memory_model.estimate_for``) against the GPU's free memory, not its total: a trainer
    placed on a GPU a vLLM server (or another rank) already fills would pass the total and run out of memory."""
    import torch

    free, total = torch.cuda.mem_get_info()
    estimate = estimate_for(training_args, model_args, total, share_base=share_base)
    if estimate is not None:
        check_free_memory(estimate.total, free, total, own=CUDA_CONTEXT)
