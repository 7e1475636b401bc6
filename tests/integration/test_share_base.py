"""``vllm_share_base: true`` on the real engine: vLLM's CPU build with the 4-bit small model (configs/cpu-smollm2-vllm.yaml).

Each run is a subprocess (vLLM initialises torch.distributed and binds threads for the whole process). The probe
(tests/helpers/share_base_probe.py) rebinds the trainer ``train/grpo.py`` builds to the engine's vLLM and records
where every shared weight points, the trainer's logprobs before and after, vLLM's weights and base-model prompt
logprobs before and after a trainer eval forward and after a real optimizer step, and the on-policy check. The
training run goes through ``train/grpo.py`` with the key on: two steps, then a resume from the last checkpoint (slow).
"""

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO

CPU_VLLM_CONFIG = str(REPO / "configs" / "cpu-smollm2-vllm.yaml")
LAYERS_4BIT = 30 * 7  # SmolLM2-135M: 30 blocks x (q, k, v, o, gate, up, down)


def run(*argv: str, timeout: int = 1200) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    return subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    out = tmp_path_factory.mktemp("share-probe") / "probe.json"
    result = run("-m", "tests.helpers.share_base_probe", "--json", str(out))
    assert out.is_file(), result.stderr[-4000:]
    return json.loads(out.read_text())


# slow (make test-slow): the probe loads vLLM and the trainer and takes a real step (~1.3 min on 2 quiet cores),
# an opt-in feature's end-to-end check; its refusals and rebinding rules are in the default suite
# (tests/train/config/test_share_base_checks.py, tests/train/engines/test_share_base_views.py)
pytestmark = [pytest.mark.usefixtures("needs_vllm"), pytest.mark.slow]


def test_every_shared_weight_lies_inside_vllms_tensor_at_its_shard_offset(probe):
    views = probe["views"]
    assert probe["shared"]["layers_4bit"] == LAYERS_4BIT and probe["shared"]["not_shared"] == {}
    assert [v["kind"] for v in views].count("embedding") == 1  # the tied head is the embedding's own tensor
    for v in views:
        assert v["ptr"] == v["vllm_ptr"] + v["offset"], v
        assert v["offset"] + v["nbytes"] <= v["vllm_nbytes"], v
        if v["kind"] == "4bit":  # a shard's own bytes: from one offset of vLLM's to the next
            bounds = v["offsets_attr"]
            assert v["offset"] in bounds[:-1] and v["offset"] + v["nbytes"] == bounds[bounds.index(v["offset"]) + 1]
            assert not v["state_is_vllms"] and v["fast_path_off"]
        assert not v["inference"] and not v["requires_grad"]
    fused = {v["vllm_name"] for v in views if v["offset"] > 0}
    assert any("qkv_proj" in n for n in fused) and any("gate_up_proj" in n for n in fused)
    # the trainer's own copy is gone: its 4-bit bytes, constants and embeddings (weak references to them died)
    assert probe["kept"] == [] and probe["shared"]["freed_bytes"] >= probe["shared"]["shared_bytes"]


def test_the_trainers_logprobs_are_identical_before_and_after_sharing(probe):
    assert probe["policy_after"] == probe["policy_before"]


def test_vllm_is_unchanged_by_a_trainer_eval_forward_and_by_an_optimizer_step(probe):
    assert probe["vllm_weights_same_after_eval"] and probe["vllm_weights_same_after_step"]
    before, after_eval, after_step = probe["vllm_base_logprobs"]
    assert after_eval == before and after_step == before
    assert probe["problems_after_eval"] == [] and probe["problems_after_step"] == []
    # the step did train: LoRA moved, the optimizer holds LoRA tensors only, nothing in the graph was an inference one
    # (LoRA's B matrices: A gets no gradient while B is still zero, so half the LoRA tensors move in a first step)
    assert probe["global_step"] == 1 and probe["lora_tensors_moved"] >= probe["lora_tensors"] // 2 > 0
    assert probe["optimizer_requires_grad"] and probe["inference_tensors_in_trainer"] == 0
    shared = {v["ptr"] for v in probe["views"]}
    assert not shared & set(probe["optimizer_ptrs"])


def test_the_on_policy_check_still_separates_the_synced_adapter_from_the_stale_one(probe):
    report = probe["on_policy"]  # scripts/check_on_policy.py's check, at lr 1e-3 as its own test takes it
    assert report["adapter_versions"] == [1, 2] and report["steps"] == 1
    assert report["synced_vs_policy"]["mean"] <= report["tolerance_mean"], report
    assert report["stale_vs_policy"]["mean"] > 2 * report["tolerance_mean"], report
    assert report["ok"]


# two vLLM loads and three steps: ~5 min on 2 loaded cores
def test_two_steps_and_a_resume_train_with_sharing_on(tmp_path):
    out = tmp_path / "run"
    common = [
        "train/grpo.py", "--config", CPU_VLLM_CONFIG, "--vllm_share_base", "true", "--output_dir", str(out),
        "--save_steps", "1", "--max_completion_length", "24", "--dataset_size", "16",
        "--per_device_train_batch_size", "4", "--temperature", "1.0", "--log_rollouts", "false",
    ]  # fmt: skip
    first = run(*common, "--max_steps", "2")
    assert first.returncode == 0, first.stderr[-4000:]
    assert "[verigrpo] 2 steps" in first.stdout
    facts = json.loads((out / "checkpoint-2" / "run.json").read_text())["rollout_engine"]["shared_base"]
    assert facts["layers_4bit"] == LAYERS_4BIT and facts["freed_bytes"] >= facts["shared_bytes"] > 0

    resumed = run(*common, "--max_steps", "3", "--resume_from_checkpoint", str(out / "checkpoint-2"))
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert (out / "checkpoint-3" / "adapter_model.safetensors").is_file()
    state = json.loads((out / "checkpoint-3" / "trainer_state.json").read_text())
    assert state["global_step"] == 3
