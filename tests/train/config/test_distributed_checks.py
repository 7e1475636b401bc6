"""Pre-flight for runs past one process (train/config/distributed_checks.py): accelerate's launch read from its
environment variables, placement on a multi-GPU node, free GPU memory, and the other ranks' longest wait.

The launches are given as accelerate sets them (``accelerate/utils/launch.py``); the devices as mocks (no GPU
here). The command-line refusals run ``train/grpo.py`` as a user would, with accelerate's variables set.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest
import torch

import train.config.machine_checks as mc
from tests.helpers import REPO
from tests.helpers.model_shapes import QWEN_1_5B
from train.config import ConfigError, parse_config, resolve_run
from train.config.distributed_checks import (
    DistributedConfigError,
    check_distributed,
    check_launcher,
    check_placement,
    launch_from_env,
)
from train.config.memory_model import GIB

CPU = "configs/cpu-smollm2.yaml"  # 4-bit nf4 + LoRA, float32
CPU_SERVER = "configs/cpu-smollm2-vllm-server.yaml"
GPU_SERVER = "configs/qwen2.5-1.5b-qlora-vllm-server.yaml"
ZERO3 = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"}
ZERO2 = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "2"}
FSDP = {"ACCELERATE_USE_FSDP": "true", "FSDP_VERSION": "1"}


def deepspeed_installed() -> bool:
    try:
        metadata.version("deepspeed")
        return True
    except metadata.PackageNotFoundError:
        return False


# ---- accelerate's environment ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "world", "sharded"),
    [
        ({}, 1, None),
        ({"WORLD_SIZE": "8", "ACCELERATE_USE_DEEPSPEED": "true"}, 8, None),  # accelerate's default stage is 2
        (ZERO2, 1, None),
        (ZERO3, 1, "DeepSpeed ZeRO-3"),
        ({"ACCELERATE_USE_DEEPSPEED": "True", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3"}, 1, "DeepSpeed ZeRO-3"),
        (FSDP, 1, "FSDP"),
        ({"ACCELERATE_USE_FSDP": "1"}, 1, "FSDP"),  # accelerate's truth values
        ({"ACCELERATE_USE_FSDP": "false"}, 1, None),
    ],
)
def test_the_launch_is_read_from_accelerates_variables(env, world, sharded):
    launch = launch_from_env(env)
    assert (launch.world_size, launch.shards_parameters) == (world, sharded)


def test_a_deepspeed_config_file_gives_the_zero_stage(tmp_path):
    config = tmp_path / "ds.json"
    config.write_text(json.dumps({"zero_optimization": {"stage": 3}}))
    env = {"ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_CONFIG_FILE": str(config)}
    assert launch_from_env(env).shards_parameters == "DeepSpeed ZeRO-3"


@pytest.mark.skipif(deepspeed_installed(), reason="refuses only where DeepSpeed is missing")
def test_deepspeed_chosen_but_not_installed_is_refused_before_parsing():
    with pytest.raises(DistributedConfigError, match=r"accelerate chose DeepSpeed .*\(pip install deepspeed\)"):
        check_launcher(ZERO3)
    check_launcher({})


# ---- sharded 4-bit bases and FSDP with the adapter engines ----------------------------------------------


@pytest.mark.parametrize(
    ("config", "overrides", "env", "refusal"),
    [
        (CPU, (), ZERO3, r"load_in_4bit under DeepSpeed ZeRO-3: .* `bnb_4bit_quant_storage: float32`"),
        (CPU, (), FSDP, r"load_in_4bit under FSDP: .*stored as uint8 .*--bnb_4bit_quant_storage float32"),
        (CPU, ("--bnb_4bit_quant_storage", "bfloat16"), ZERO3, r"stored as bfloat16 and the others as float32"),
        (CPU, ("--bnb_4bit_quant_storage", "float32"), ZERO3, None),
        (CPU, (), ZERO2, None),  # ZeRO-2 shards no parameters
        (CPU, (), {}, None),
        (CPU, ("--bnb_4bit_quant_storage", "float32", "--use_vllm", "true"), FSDP,
         r"FSDP with the colocate adapter engine: .*configs/accelerate/ddp.yaml"),
        (CPU_SERVER, (), FSDP, r"FSDP with the server adapter engine"),
        (CPU_SERVER, (), ZERO3, None),  # not 4-bit; the engine gathers the adapter under ZeRO-3
        (CPU, ("--use_peft", "false", "--load_in_4bit", "false"), FSDP, None),  # TRL's own path
    ],
    ids=["zero3-4bit", "fsdp-4bit", "zero3-wrong-storage", "zero3-storage-set", "zero2", "ddp", "fsdp-colocate",
         "fsdp-server", "zero3-server", "fsdp-full"],
)  # fmt: skip
def test_sharded_launches_that_cannot_work_are_refused_with_the_fix(config, overrides, env, refusal):
    args = parse_config(["--config", config, *overrides])
    if refusal is None:
        check_distributed(*args, env=env)
    else:
        with pytest.raises(DistributedConfigError, match=refusal):
            check_distributed(*args, env=env)


def run_cli(env: dict, *argv: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, **env, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "train/grpo.py", *argv], cwd=REPO, capture_output=True, text=True, timeout=600, env=environ
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (FSDP, "error: load_in_4bit under FSDP"),
        pytest.param(
            ZERO3,
            "error: accelerate chose DeepSpeed",
            marks=pytest.mark.skipif(deepspeed_installed(), reason="refuses only where DeepSpeed is missing"),
        ),
    ],
    ids=["fsdp", "deepspeed-missing"],
)
def test_the_command_line_refuses_before_any_model_loads(tmp_path, env, message):
    """As the issue ran it: ``ACCELERATE_USE_FSDP=true python train/grpo.py --config configs/cpu-smollm2.yaml``
    trained; with DeepSpeed chosen and absent, transformers raised a PackageNotFoundError traceback."""
    out = tmp_path / "run"
    result = run_cli(env, "--config", CPU, "--output_dir", str(out))
    assert result.returncode == 2, result.stderr[-3000:]
    assert message in result.stderr and "Traceback" not in result.stderr
    assert "Loading weights" not in result.stderr and not out.exists()


# ---- the other ranks' longest wait -------------------------------------------------------------------------


def test_a_wait_longer_than_ddp_timeout_is_refused_naming_both_keys():
    args = parse_config(["--config", CPU_SERVER, "--ddp_timeout", "1800"])
    check_distributed(*args, env={})  # one process: nobody waits
    with pytest.raises(
        DistributedConfigError,
        match=r"ddp_timeout 1800 s is shorter .* other 1 process\(es\).*up to 3000 s \(5 requests x "
        r"vllm_server_request_timeout 600 s\).*Raise ddp_timeout to at least 4500, or lower vllm_server_request_timeout",
    ):
        check_distributed(*args, env={"WORLD_SIZE": "2"})
    check_distributed(*parse_config(["--config", CPU_SERVER]), env={"WORLD_SIZE": "2"})  # the shipped 3600 s
    fast = parse_config(["--config", CPU_SERVER, "--ddp_timeout", "1800", "--vllm_server_request_timeout", "300"])
    check_distributed(*fast, env={"WORLD_SIZE": "2"})


def test_the_held_out_eval_counts_as_a_wait(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    common = ["--config", GPU_SERVER, "--bf16", "false", "--model_name_or_path", str(tmp_path)]
    check_distributed(*parse_config(common), env={"WORLD_SIZE": "4"})  # the shipped recipe fits
    long_eval = [*common, "--eval_problems", "4000", "--vllm_server_request_timeout", "60"]
    with pytest.raises(DistributedConfigError, match=r"held-out eval takes about 6400 s .* eval_problems or eval_max"):
        check_distributed(*parse_config(long_eval), env={"WORLD_SIZE": "4"})


# ---- placement and free memory on a GPU machine (mocked) ----------------------------------------------


@pytest.fixture
def gpu_node(monkeypatch, tmp_path):
    """A node with ``count`` GPUs of 140 GiB, ``free`` GiB free on this process's; the server recipe on it."""
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    for name in ("CUDA_VISIBLE_DEVICES", "WORLD_SIZE", "ACCELERATE_USE_FSDP", "ACCELERATE_USE_DEEPSPEED"):
        monkeypatch.delenv(name, raising=False)

    def make(count=4, free=139.0, total=140.0, *overrides):
        monkeypatch.setattr(mc, "cuda_available", lambda: True)
        monkeypatch.setattr(mc, "device_count", lambda: count)
        monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (free * GIB, total * GIB))
        monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0, raising=False)
        try:  # the device-capability pre-flight (issue #33's module), where present: an H200
            import train.config.device_capability as dc

            monkeypatch.setattr(dc, "device_name", lambda: "NVIDIA H200")
            monkeypatch.setattr(dc, "device_capability", lambda: (9, 0))
        except ImportError:
            pass
        return parse_config(["--config", GPU_SERVER, "--bf16", "false", "--model_name_or_path", str(tmp_path),
                             *overrides])  # fmt: skip

    return make


def test_one_process_on_a_multi_gpu_node_with_servers_must_be_placed(gpu_node, monkeypatch):
    args = gpu_node(count=4)
    with pytest.raises(ConfigError, match=r"one training process sees 4 GPUs while rollouts come from vLLM servers"):
        resolve_run(*args)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # placed by the user
    resolve_run(*args)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    monkeypatch.setenv("WORLD_SIZE", "2")  # one process per GPU (accelerate launch)
    resolve_run(*args)
    resolve_run(*gpu_node(count=1))


def test_placement_only_matters_with_servers():
    script_args, training_args, _ = parse_config(["--config", CPU])
    check_placement(script_args, training_args, device_count=8, env={})


def test_memory_is_checked_against_what_the_gpu_has_free(gpu_node, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2")
    resolve_run(*gpu_node(count=1, free=15.0, total=16.0))
    # a vLLM server (or another rank) already holds 13 of the 16 GiB: the total would fit, the free does not
    with pytest.raises(ConfigError, match=r"exceeds what this GPU has free \(3.0 of 16.0 GiB\): other processes use"):
        resolve_run(*gpu_node(count=1, free=3.0, total=16.0))


def test_server_mode_counts_no_vllm_pool_on_the_trainers_gpu(gpu_node, monkeypatch):
    """vllm_gpu_memory_utilization is the colocated engine's share; in server mode vLLM is on other GPUs."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    resolve_run(*gpu_node(1, 15.0, 16.0, "--vllm_gpu_memory_utilization", "0.9"))
