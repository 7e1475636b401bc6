"""A driver torch cannot use is named, not reported as "no GPU" (issue #40, 1).

The stand-in for what only a GPU machine has: a fake NVML that sees a card and a driver while torch's
``cuda.is_available()`` is False (an old driver: torch built for CUDA 13 needs >= 580). Pre-flight
(``train/config/machine_checks.py``) and the GPU check's environment row (``train/gpu_check``) must both name the
driver seen, the minimum, and what to install. A card below what CUDA 13 builds for (a V100) is told what can run.
"""

from __future__ import annotations

import json

import pytest
import torch

import train.config.device_capability as dc
import train.config.machine_checks as mc
import train.config.nvidia_driver as nd
from tests.helpers import REPO
from tests.helpers.model_shapes import QWEN_1_5B
from train.config import ConfigError, parse_config, resolve_run
from train.config.memory_model import GIB


class FakeNVML:
    """NVML as nvidia-ml-py exposes it, seeing ``cards`` [(name, (major, minor))] under ``driver``."""

    class NVMLError(Exception):
        pass

    def __init__(self, driver: str, cards) -> None:
        self.driver, self.cards, self.initialized = driver, list(cards), 0

    def nvmlInit(self):
        self.initialized += 1

    def nvmlShutdown(self):
        pass

    def nvmlSystemGetDriverVersion(self):
        return self.driver.encode()  # older bindings return bytes

    def nvmlDeviceGetCount(self):
        return len(self.cards)

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetName(self, handle):
        return self.cards[handle][0]

    def nvmlDeviceGetCudaComputeCapability(self, handle):
        return self.cards[handle][1]


class NoNVML(FakeNVML):
    def nvmlInit(self):
        raise self.NVMLError("NVML Shared Library Not Found")


T4 = ("Tesla T4", (7, 5))
V100 = ("Tesla V100-SXM2-16GB", (7, 0))
RESOLVED = ("2.13.0+cu130", "13.0")


@pytest.fixture
def gpu_machine(monkeypatch):
    """torch sees no GPU; NVML sees ``cards`` under ``driver``; torch is the build ``build``."""

    def make(driver="535.183.01", cards=(T4,), build=RESOLVED):
        monkeypatch.setattr(mc, "cuda_available", lambda: False)
        monkeypatch.setattr(nd, "nvml_library_present", lambda: True)
        monkeypatch.setattr(nd, "nvml_module", lambda: FakeNVML(driver, cards))
        monkeypatch.setattr(nd, "from_proc", lambda: None)
        monkeypatch.setattr(nd, "from_nvidia_smi", lambda: None)
        monkeypatch.setattr(nd, "torch_build", lambda: build)

    return make


@pytest.fixture
def qwen_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(QWEN_1_5B))
    return tmp_path


def gpu_recipe(model_dir, *overrides):
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    return parse_config(["--config", config, "--bf16", "false", "--model_name_or_path", str(model_dir), *overrides])


def test_preflight_names_an_old_driver_its_minimum_and_what_to_install(gpu_machine, qwen_dir):
    gpu_machine(driver="535.183.01", cards=(T4,))
    with pytest.raises(ConfigError) as refused:
        resolve_run(*gpu_recipe(qwen_dir))
    message = str(refused.value)
    assert "NVIDIA driver 535.183.01 with Tesla T4 (compute capability 7.5)" in message
    assert "driver >= 580 for CUDA 13.x" in message and "install NVIDIA driver 580 or newer" in message
    assert "no CUDA GPU is visible" not in message


def test_the_gpu_checks_environment_row_names_the_driver(gpu_machine):
    from train.engines.choice import Engine
    from train.gpu_check.environment import probe
    from train.gpu_check.verdicts import FAIL, Wants, environment_row

    gpu_machine(driver="550.54.15", cards=(("NVIDIA A10G", (8, 6)),))
    env = probe(False)
    assert env.driver == "550.54.15" and not env.gpu
    row = environment_row(env, Wants(gpu_recipe=True, four_bit=True, engine=Engine.COLOCATED))
    assert row.status == FAIL
    assert "NVIDIA driver 550.54.15 with NVIDIA A10G" in row.verdict and "driver >= 580" in row.verdict
    assert "install NVIDIA driver 580 or newer" in row.fix
    assert "driver 550.54.15" in row.measured


@pytest.mark.parametrize(
    ("driver", "cards", "build", "expected"),
    [
        ("535.183.01", (T4,), RESOLVED, "older than torch 2.13.0+cu130 (built for CUDA 13.0) needs: driver >= 580"),
        ("580.65.06", (V100,), RESOLVED, "below compute capability 7.5, the lowest torch 2.13.0+cu130"),
        ("580.65.06", (T4,), RESOLVED, "sees no GPU although this machine has NVIDIA driver 580.65.06"),
        ("535.183.01", (T4,), ("2.13.0+cpu", None), "torch 2.13.0+cpu is a CPU-only build"),
        ("535.183.01", (T4,), ("2.8.0+cu126", "12.6"), "sees no GPU although"),  # 535 runs CUDA 12
    ],
    ids=["old-driver", "volta-on-cuda13", "hidden-card", "cpu-torch", "cuda12-torch"],
)
def test_why_torch_sees_no_gpu(gpu_machine, driver, cards, build, expected):
    gpu_machine(driver=driver, cards=cards, build=build)
    problem, fix = nd.why_torch_sees_no_gpu()
    assert expected in problem and fix


def test_no_driver_at_all_keeps_the_plain_refusal(monkeypatch, qwen_dir):
    monkeypatch.setattr(mc, "cuda_available", lambda: False)
    monkeypatch.setattr(nd, "nvml_library_present", lambda: True)
    monkeypatch.setattr(nd, "nvml_module", lambda: NoNVML("", ()))
    monkeypatch.setattr(nd, "from_proc", lambda: None)
    monkeypatch.setattr(nd, "from_nvidia_smi", lambda: None)
    assert nd.driver_seen() is None and nd.why_torch_sees_no_gpu() is None
    with pytest.raises(ConfigError, match="no CUDA GPU is visible"):
        resolve_run(*gpu_recipe(qwen_dir))


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\nGCC version", "535.183.01"),
        ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build", "580.65.06"),
        ("garbage", None),
    ],
)  # fmt: skip
def test_the_kernel_modules_version_file_is_read_without_nvml(tmp_path, text, version):
    (tmp_path / "version").write_text(text)
    seen = nd.from_proc(str(tmp_path / "version"))
    assert (seen.version if seen else None) == version


def test_a_volta_card_is_told_what_runs_under_torchs_cuda_13_build(monkeypatch, qwen_dir):
    """torch built for CUDA 13 has no sm_70 kernels and vLLM pins that torch: advising vLLM there is wrong."""
    monkeypatch.setattr(mc, "cuda_available", lambda: True)
    monkeypatch.setattr(dc, "device_name", lambda: V100[0])
    monkeypatch.setattr(dc, "device_capability", lambda: V100[1])
    monkeypatch.setattr(dc, "torch_arch_list", lambda: ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"])
    monkeypatch.setattr(nd, "torch_build", lambda: RESOLVED)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (15 * GIB, 16 * GIB))
    for overrides in [(), ("--use_vllm", "false"), ("--load_in_4bit", "false", "--dtype", "float16")]:
        with pytest.raises(ConfigError) as refused:
            resolve_run(*gpu_recipe(qwen_dir, *overrides))
        message = str(refused.value)
        assert "on Tesla V100-SXM2-16GB (compute capability 7.0)" in message
        assert "compute capability 7.5" in message and "CUDA 13.0" in message
        assert "use_vllm: false, dtype: float16" in message and "vLLM with a full-precision base" not in message


def test_nvidia_smi_is_read_when_neither_nvml_nor_proc_answers(monkeypatch):
    import subprocess
    from types import SimpleNamespace

    asked = []

    def run(argv, **kwargs):
        asked.append(argv)
        return SimpleNamespace(stdout="535.183.01, Tesla T4, 7.5\n535.183.01, Tesla V100-SXM2-16GB, 7.0\n")

    monkeypatch.setattr(nd, "nvml_library_present", lambda: False)
    monkeypatch.setattr(nd, "from_proc", lambda: None)
    monkeypatch.setattr(nd.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(subprocess, "run", run)
    seen = nd.driver_seen()
    assert seen == nd.DriverSeen(
        "535.183.01", (nd.Card("Tesla T4", (7, 5)), nd.Card("Tesla V100-SXM2-16GB", (7, 0))), "nvidia-smi"
    )
    assert "--query-gpu=driver_version,name,compute_cap" in asked[0]
