"""A real GRPO run on CPU: the small model, 4-bit + LoRA, 2 steps, real gradients, a loadable checkpoint."""

import json
import math

import pytest

import rewards
from problems.math_domain import MATH
from records.run_manifest import read_run_manifest
from tests.helpers import REPO
from tests.helpers.training import length_parity, tiny_run
from train.config import parse_config
from train.grpo import main


def test_two_real_grpo_steps_learn_and_save(tmp_path, cpu_model, monkeypatch):
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    result = tiny_run(tmp_path / "run")
    steps = [e for e in result["log_history"] if "grad_norm" in e]
    assert result["global_step"] == 2 and len(steps) == 2
    assert any(float(e["grad_norm"]) > 0 for e in steps)  # reward variance -> a real gradient
    assert all(not math.isnan(float(e["loss"])) for e in steps)
    assert "rewards/correctness/mean" in steps[0] and "rewards/format_reward/mean" in steps[0]

    run = tmp_path / "run"
    for directory in (run, run / "checkpoint-1", run / "checkpoint-2"):
        assert (directory / "adapter_model.safetensors").is_file(), directory
        assert (directory / "adapter_config.json").is_file()
        assert (directory / "tokenizer.json").is_file() and (directory / "chat_template.jinja").is_file()
        manifest = read_run_manifest(directory)
        assert manifest["verifier_fingerprint"] == rewards.verifier_fingerprint()
        assert manifest["config"]["training"]["max_steps"] == 2
        assert manifest["packages"]["trl"] == "1.16.0"
    assert json.loads((run / "adapter_config.json").read_text())["base_model_name_or_path"] == str(cpu_model.resolve())
    assert (run / "log_history.json").is_file()

    # every rollout is in an Inspect log: one per save here (save_steps 1), G completions per prompt
    logs = sorted((run / "rollouts").glob("*.eval"))
    assert [p.name for p in logs] == ["rollouts-step000001-000001.eval", "rollouts-step000002-000002.eval"]
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(logs[0]))
    assert log.status == "success" and len(log.samples) == 4 and {s.epoch for s in log.samples} == {1, 2, 3, 4}
    assert {"train_length_parity", "train_correctness", "train_format"} <= set(log.samples[0].scores)
    assert log.samples[0].metadata["step"] == 1 and log.samples[0].metadata["completion_length"] <= 24
    # why each reward was paid: the reward function's own verdict, carried through TRL's log_extra
    for sample in log.samples:
        verdict, paid = rewards.grade(sample.output.completion, sample.target), sample.scores["train_correctness"]
        assert (paid.answer, paid.explanation) == (verdict.answer, verdict.explanation), sample.output.completion
        assert paid.metadata["reason"] == verdict.reason.value and sample.scores["train_format"].explanation
        assert sample.messages[-1].text == sample.output.completion and sample.total_time > 0
    assert log.eval.metadata["verifier_fingerprint"] == rewards.verifier_fingerprint()
    assert result["rollout_logs"] == [str(p) for p in logs]

    from peft import AutoPeftModelForCausalLM

    model = AutoPeftModelForCausalLM.from_pretrained(run)  # loads the base from the adapter config, any cwd
    assert model.active_adapter == "default"

    # resume from the saved step: continues at step 2 and stops at 3
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    resumed = tiny_run(run, "--max_steps", "3", "--resume_from_checkpoint", str(run / "checkpoint-2"))
    assert resumed["global_step"] == 3
    assert [e["step"] for e in resumed["log_history"] if "grad_norm" in e][-1] == 3
    assert (run / "rollouts" / "rollouts-step000003-000003.eval").is_file()  # appended, nothing overwritten
    assert len(list((run / "rollouts").glob("*.eval"))) == 3


CODE_CONFIG = str(REPO / "configs" / "cpu-smollm2-code.yaml")


@pytest.mark.usefixtures("needs_sandbox")
def test_a_real_grpo_step_on_code_problems_rewards_through_the_sandbox(tmp_path, cpu_model):
    script_args, training_args, model_args = parse_config(
        ["--config", CODE_CONFIG, "--output_dir", str(tmp_path / "code"), "--max_steps", "1", "--save_steps", "1"]
        + ["--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "48"]
        + ["--dataset_size", "4"]
    )
    result = main(script_args, training_args, model_args)
    (step,) = [e for e in result["log_history"] if "grad_norm" in e]
    assert 0.0 <= step["rewards/code_tests/mean"] <= 1.0

    from inspect_ai.log import read_eval_log

    (log_path,) = (tmp_path / "code" / "rollouts").glob("*.eval")
    log = read_eval_log(str(log_path))
    assert len(log.samples) == 4 and "train_code_tests" in log.samples[0].scores
    # the rollout's target is the problem's test spec, so `inspect score` can re-grade it
    assert rewards.parse_test_spec(log.samples[0].target).total >= 1
