"""A step of a run with vLLM rollouts replays exactly without starting an engine (train/replay.py): the recorded batch
holds the sampling logprobs and the importance-sampling ratios TRL's loss took from the engine.

The run trains in a subprocess (vLLM initialises torch.distributed and binds threads for the whole process); the
replay builds the trainer with the engine off, here in the test's process.
"""

import pytest
import torch

from problems.math_domain import MATH
from tests.helpers import CPU_CONFIG
from tests.helpers.training import LENGTH_PARITY_REWARDS, length_parity, run_script
from train.replay import main


# slow (~2 min on a quiet 2-core machine: vLLM loads the 4-bit base, 2 steps, then a ~35 s replay); the default
# suite replays a run without vLLM (tests/integration/test_reward_hacking_alarm.py)
@pytest.mark.slow
@pytest.mark.usefixtures("needs_vllm")
def test_a_vllm_run_replays_exactly_without_an_engine(tmp_path, monkeypatch, capsys):
    """The CPU default config (4-bit, where vLLM's logprobs differ from the trainer's) with --use_vllm true and TRL's
    default importance-sampling correction: step 2 replays to the logged loss and grad norm, and its counterfactual
    with the run's own rewards changes nothing."""
    out = tmp_path / "run"
    argv = [
        "tests/helpers/length_parity_run.py", "--config", CPU_CONFIG, "--use_vllm", "true", "--max_steps", "2",
        "--output_dir", str(out), "--save_steps", "1", "--per_device_train_batch_size", "4", "--num_generations", "4",
        "--max_completion_length", "24", "--dataset_size", "16", "--temperature", "1.0", "--log_replay_batches", "true",
        *LENGTH_PARITY_REWARDS,
    ]  # fmt: skip
    result = run_script(argv, timeout=1500)
    assert result.returncode == 0, result.stderr[-4000:]
    entries = torch.load(out / "replay" / "step-000002.pt", weights_only=False)
    ratios = torch.cat([entry["inputs"]["importance_sampling_ratio"].flatten() for entry in entries])
    assert not torch.all(ratios == 1), ratios  # the correction weighs this step's loss: the replay must apply it
    assert all("sampling_per_token_logps" in entry["inputs"] for entry in entries)

    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    assert main([str(out), "--step", "2", "--counterfactual"]) == 0
    printed = capsys.readouterr().out
    logged = [line for line in printed.splitlines() if line.startswith("step 2 ")]
    assert logged[0].startswith("step 2 loss: replayed") and logged[0].endswith("(equal)"), printed
    assert logged[1].startswith("step 2 grad_norm: replayed") and logged[1].endswith("(equal)"), printed
    assert "step 2 had vLLM rollouts: replayed without an engine" in printed
    assert "rewards changed: 0 of 4 completions" in printed
    assert "advantages changed: 0 of 4 completions" in printed
    counterfactual = [line for line in printed.splitlines() if line.startswith(("  loss:", "  grad_norm:"))]
    assert len(counterfactual) == 2 and all(line.endswith("(equal)") for line in counterfactual), printed
