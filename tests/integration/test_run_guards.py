"""The run guards on real CPU training runs with vLLM rollouts (train/guards/, docs/training.md "Watching a run").

Real runs in subprocesses: vLLM initialises torch.distributed and binds threads for the whole process.
"""

import json

import pytest

from tests.helpers import REPO
from tests.helpers.training import LENGTH_PARITY_REWARDS, run_script
from train.guards.on_policy import BAND_METRIC, GAP_METRIC

CPU_VLLM_CONFIG = str(REPO / "configs" / "cpu-smollm2-vllm.yaml")
FP32 = ("--load_in_4bit", "false", "--dtype", "float32", "--use_bnb_nested_quant", "false")
IS_MEAN = "sampling/importance_sampling_ratio/mean"


def history_of(checkpoint) -> list[dict]:
    return json.loads((checkpoint / "trainer_state.json").read_text())["log_history"]


# slow (~3 min on a quiet 2-core machine: vLLM loads the fp32 base, 2 steps + the step the guard stops in); the
# default suite sees the guard calibrate and log on the CPU default (tests/integration/test_adapter_engine.py)
@pytest.mark.slow
@pytest.mark.usefixtures("needs_vllm")
def test_a_stale_adapter_stops_the_run_at_the_first_check_and_skews_the_importance_ratios(tmp_path):
    """The engine loads adapter v1 and then silently no more (tests/helpers/stale_adapter_run.py). Checks every 2
    steps: step 0 calibrates (fp32: ~1e-5), step 1 trains on-policy, step 2's rollouts come from the stale v1, and
    the check after step 2 stops the run with exit code 4 and the guard's paragraph."""
    out = tmp_path / "run"
    argv = [
        "tests/helpers/stale_adapter_run.py", "--config", CPU_VLLM_CONFIG, *FP32, "--max_steps", "4",
        "--on_policy_check_steps", "2", "--output_dir", str(out), "--save_steps", "1",
        "--max_completion_length", "24", "--dataset_size", "16", "--temperature", "1.0", "--log_rollouts", "false",
        *LENGTH_PARITY_REWARDS,
    ]  # fmt: skip
    result = run_script(argv, timeout=1200)
    assert result.returncode == 4, result.stderr[-4000:]
    assert "the on-policy guard stopped the run at step 2" in result.stderr
    assert "on_policy_check_steps: 0" in result.stderr  # the key that turns it off
    assert not (out / "checkpoint-3").exists()
    first, second = [e for e in history_of(out / "checkpoint-2") if "loss" in e]
    # the step-0 check (logged with step 1): fp32 vLLM and the policy agree
    assert first[GAP_METRIC] < 1e-3 and first[BAND_METRIC] == 1e-3
    # TRL's importance-sampling ratios from the engine's logprobs: ~1 while synced, not once the adapter is stale
    # (measured: synced within 2.4e-4 of 1; stale min 0.64, mean 1.08, max 1.89)
    for stat in ("min", "mean", "max"):
        assert abs(first[f"sampling/importance_sampling_ratio/{stat}"] - 1) < 1e-3, first
    assert first["sampling/sampling_logp_difference/max"] < 1e-3
    assert second["sampling/sampling_logp_difference/mean"] > 0.01, second
    assert (
        second["sampling/importance_sampling_ratio/min"] < 0.9 < 1.1 < second["sampling/importance_sampling_ratio/max"]
    )
