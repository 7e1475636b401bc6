"""A GPU run checks, before anything loads, that Triton can build its CUDA launcher (issue #51, 3).

On CUDA the first Triton kernel (vLLM's model runner and LoRA kernels, TRL's fused LM head) compiles Triton's
``driver.c`` (``#include <Python.h>``) with the system C compiler (``triton/runtime/build.py``: ``$CC``, gcc, clang; the
headers from ``sysconfig``). A slim or ``-runtime`` image lacks both and the run stopped after the model loaded with
"Failed to find C compiler" (a RuntimeError the GPU check re-raised as a traceback). The stand-ins: a PATH with no
compiler, and an interpreter whose include directory has no Python.h.
"""

from __future__ import annotations

import json
import sys
import sysconfig

import pytest
import torch

import train.config.device_capability as dc
import train.config.machine_checks as mc
import train.config.vllm_install as vllm_install
import train.gpu_check.environment as environment
from tests.helpers import REPO
from tests.helpers.model_shapes import QWEN_1_5B
from train.config import ConfigError, parse_config, resolve_run
from train.config.memory_model import GIB
from train.engines.choice import Engine
from train.gpu_check.verdicts import FAIL, PASS, Wants, environment_row

VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
INSTALL = f"apt-get install gcc python{VERSION}-dev"


@pytest.fixture
def toolchain(monkeypatch, tmp_path):
    """This machine's C compiler and Python headers, or none: ``make(compiler=False, headers=False)``."""

    def make(compiler: bool = True, headers: bool = True):
        bin_dir, include = tmp_path / "bin", tmp_path / "include"
        bin_dir.mkdir(exist_ok=True)
        include.mkdir(exist_ok=True)
        if compiler:
            gcc = bin_dir / "gcc"
            gcc.write_text("#!/bin/sh\n")
            gcc.chmod(0o755)
        if headers:
            (include / "Python.h").write_text("/* stand-in */\n")
        monkeypatch.setenv("PATH", str(bin_dir))
        monkeypatch.delenv("CC", raising=False)
        real = sysconfig.get_paths
        monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: {**real(*a, **k), "include": str(include)})
        return include

    return make


@pytest.fixture
def gpu_machine(monkeypatch, tmp_path):
    """A GPU machine (an H200) with vLLM 0.30 and its bitsandbytes plugin, all pretend; the main recipe on it."""
    monkeypatch.setattr(mc, "cuda_available", lambda: True)
    monkeypatch.setattr(dc, "device_name", lambda: "NVIDIA H200")
    monkeypatch.setattr(dc, "device_capability", lambda: (9, 0))
    monkeypatch.setattr(mc, "installed_vllm", lambda: ("vllm", "0.30.0"))
    monkeypatch.setattr(vllm_install, "installed_bnb_plugin", lambda: "0.0.3")
    monkeypatch.setattr(vllm_install, "bnb_registration_problem", lambda: None)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (139 * GIB, 140 * GIB))
    monkeypatch.setattr(torch.cuda, "get_per_process_memory_fraction", lambda: 1.0)
    monkeypatch.delenv("VLLM_PLUGINS", raising=False)
    model = tmp_path / "qwen"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(QWEN_1_5B))
    config = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    return parse_config(["--config", config, "--bf16", "false", "--model_name_or_path", str(model)])


@pytest.mark.parametrize(
    ("compiler", "headers", "missing"),
    [
        (False, True, "a C compiler (gcc or clang)"),
        (True, False, "Python's headers (no Python.h in"),
        (False, False, "a C compiler (gcc or clang) and Python's headers"),
    ],
    ids=["no-compiler", "no-headers", "neither"],
)
def test_a_gpu_run_without_what_triton_compiles_with_stops_before_loading(
    gpu_machine, toolchain, compiler, headers, missing
):
    toolchain(compiler=compiler, headers=headers)
    with pytest.raises(ConfigError) as refused:
        resolve_run(*gpu_machine)
    message = str(refused.value)
    assert "Triton (vLLM's and TRL's GPU kernels) compiles its CUDA launcher at run time" in message
    assert f"this machine lacks {missing}" in message and INSTALL in message


def test_with_a_compiler_and_the_headers_the_gpu_run_goes_on(gpu_machine, toolchain):
    toolchain()
    resolve_run(*gpu_machine)


def test_a_cc_that_is_not_there_is_named(gpu_machine, toolchain, monkeypatch):
    toolchain()
    monkeypatch.setenv("CC", "clang-19")  # Triton runs $CC as given: gcc on the PATH does not help
    with pytest.raises(ConfigError, match=r"lacks the C compiler that CC='clang-19' names"):
        resolve_run(*gpu_machine)


def test_a_cpu_run_needs_neither(toolchain, cpu_model):
    """On CPU no Triton kernel runs: nothing is asked for."""
    toolchain(compiler=False, headers=False)
    resolve_run(*parse_config(["--config", str(REPO / "configs" / "cpu-smollm2.yaml")]))


def gpu_environment(monkeypatch):
    """environment.probe(gpu=True) on a stand-in H200 (the toolchain is this test's)."""
    monkeypatch.setattr(environment, "_gpu", lambda: ("NVIDIA H200", 139.8 * GIB))
    monkeypatch.setattr(environment, "driver_seen", lambda: None)
    monkeypatch.setattr(environment, "installed_vllm", lambda: ("vllm", "0.30.0"))
    monkeypatch.setattr(environment, "vllm_bitsandbytes", lambda: (True, ""))
    monkeypatch.setattr(environment, "_unusable_gpu", lambda gpu, seen: None)
    monkeypatch.setattr(environment, "_torch_cuda", lambda: "13.0")
    return environment.probe(True)


WANTS = Wants(gpu_recipe=True, four_bit=True, engine=Engine.COLOCATED)


def test_the_gpu_checks_environment_row_fails_with_what_to_install(monkeypatch, toolchain):
    toolchain(compiler=False, headers=False)
    row = environment_row(gpu_environment(monkeypatch), WANTS)
    assert row.status == FAIL, row
    assert "compiles its CUDA launcher at run time and this machine lacks a C compiler" in row.verdict
    assert INSTALL in row.fix


def test_the_gpu_checks_environment_row_passes_with_them(monkeypatch, toolchain):
    toolchain()
    assert environment_row(gpu_environment(monkeypatch), WANTS).status == PASS
