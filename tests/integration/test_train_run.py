"""A real GRPO run on CPU (the small model, 4-bit + LoRA, 2 steps with held-out evals): real gradients, loadable
checkpoints, its rollouts and evals as Inspect logs, the curve, and a resume (slow: tests/integration/test_resume.py
resumes a real run in CI); and one real step on code problems, rewarded through the sandbox. The first run is made once
and read by the tests after it (module-scoped: a real run takes minutes on 2 cores); the resume, which adds a step to
it, comes last."""

import contextlib
import io
import json
import math

import pytest

import rewards
from problems.math_domain import MATH
from records.run_manifest import read_run_manifest
from tests.helpers import REPO
from tests.helpers.training import EVALS_ON, HELD_OUT_PROBLEMS, HELD_OUT_TOKENS, length_parity, tiny_run
from train.artifacts import curve
from train.config import parse_config
from train.grpo import main


@pytest.fixture(scope="module")
def run_with_evals(cpu_model, tmp_path_factory):
    """(run dir, its result, what it printed): 2 steps, checkpoints 1 and 2, held-out evals at steps 0, 1 and 2."""
    run = tmp_path_factory.mktemp("train") / "run"
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setitem(MATH.rewards, "length_parity", length_parity)
        result = tiny_run(run, *EVALS_ON)
    return run, result, printed.getvalue()


def held_out_entries(history):
    return [entry for entry in history if "eval_correct/accuracy" in entry]


def training_entries(history):
    return [entry for entry in history if "grad_norm" in entry]


def test_two_real_grpo_steps_learn_and_save(run_with_evals, cpu_model):
    run, result, _ = run_with_evals
    steps = [e for e in result["log_history"] if "grad_norm" in e]
    assert result["global_step"] == 2 and len(steps) == 2
    assert any(float(e["grad_norm"]) > 0 for e in steps)  # reward variance -> a real gradient
    assert all(not math.isnan(float(e["loss"])) for e in steps)
    assert "rewards/correctness/mean" in steps[0] and "rewards/format_reward/mean" in steps[0]

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


def test_the_adapter_trains_in_the_dtype_this_cpu_computes(run_with_evals):
    """TRL's bf16 QLoRA adapter where the CPU has native bf16; float32 where it would emulate it (cpu/lora_dtype.py)."""
    from safetensors import safe_open

    from cpu.capability import detect

    run, _, printed = run_with_evals
    with safe_open(run / "adapter_model.safetensors", framework="pt") as saved:
        dtypes = {saved.get_slice(name).get_dtype() for name in saved.keys()}
    emulates = not detect().native_bf16
    assert dtypes == ({"F32"} if emulates else {"BF16"})
    assert ("[verigrpo] LoRA adapter in float32" in printed) == emulates


def test_held_out_evals_are_inspect_logs_of_the_policy_in_memory_and_are_drawn(run_with_evals):
    """train/artifacts/held_out.py: the Inspect task ``inspect eval`` runs (``math_verified``) on the policy in memory at
    step 0 and after each step, each eval an Inspect log under ``<output_dir>/evals/``, its accuracy logged with the
    trainer's metrics and drawn by the curve; the best checkpoint by it kept and named."""
    from inspect_ai.log import read_eval_log

    from evals.providers.checkpoint_model import resolve_run_dir

    run, result, printed = run_with_evals
    assert result["global_step"] == 2 and len(training_entries(result["log_history"])) == 2
    # no Inspect banner inside the progress bar (Inspect prints it once per process, at its first model: a worker that
    # evaluated before would not show it either way; tests/records/test_inspect_seams.py checks it in a fresh process)
    assert "hooks enabled" not in printed and "inspect_ai v" not in printed

    logs = sorted((run / "evals").glob("*.eval"))
    assert [p.name for p in logs] == [f"held-out-step00000{step}.eval" for step in (0, 1, 2)]
    assert not [p for p in (run / "evals").iterdir() if p.suffix != ".eval"]  # no temporary folder left
    evals = held_out_entries(result["log_history"])
    assert [entry["step"] for entry in evals] == [0, 1, 2]
    for step, path, entry in zip((0, 1, 2), logs, evals):
        log = read_eval_log(str(path))
        assert log.status == "success" and log.eval.task == "math_verified"
        assert str(log.eval.model) == f"verigrpo-policy/{run}@step-{step}"
        assert log.eval.metadata["training_step"] == step and log.eval.model_args["greedy"] is True
        assert log.eval.task_args["split"] == "test" and log.eval.task_args["limit"] == HELD_OUT_PROBLEMS
        assert len(log.samples) == HELD_OUT_PROBLEMS
        # the logged accuracy is the log's, and each sample is scored by the project's verifier
        (correct,) = [score for score in log.results.scores if score.name == "correct"]
        assert entry["eval_correct/accuracy"] == correct.metrics["accuracy"].value
        assert entry["eval_samples"] == HELD_OUT_PROBLEMS and entry["eval_runtime"] > 0
        for sample in log.samples:
            assert sample.output.usage.output_tokens <= HELD_OUT_TOKENS
            verdict = rewards.grade(sample.output.completion, sample.target)
            expected = "C" if verdict.correct else "I"
            assert sample.scores["math_verifier"].value["correct"] == expected, sample.output.completion

    # the curve: the held-out series at the eval steps, with the log history's values, beside the reward
    history = json.loads((run / "log_history.json").read_text())
    ((label, steps, values, problems),) = curve.held_out_points(history)
    assert (label, steps, problems) == ("held-out accuracy", [0, 1, 2], HELD_OUT_PROBLEMS)
    assert values == [entry["eval_correct/accuracy"] for entry in evals]
    figure = curve.figure(run)
    (drawn,) = [line for line in figure.axes[0].get_lines() if line.get_marker() == "D"]
    assert list(drawn.get_xdata()) == [0, 1, 2] and list(drawn.get_ydata()) == values
    (legend,) = figure.legends
    assert f"held-out accuracy (greedy, {HELD_OUT_PROBLEMS} problems)" in [
        text.get_text() for text in legend.get_texts()
    ]

    # the best checkpoint by held-out accuracy (train/guards/best_checkpoint.py): the first of the highest trained
    # evals, kept, named by best_checkpoint.json and verigrpo/<run>@best; the summary ends with the best and the last
    # checkpoint against step 0, paired on the same problems
    accuracy = {entry["step"]: entry["eval_correct/accuracy"] for entry in evals}
    best = max((1, 2), key=lambda step: (accuracy[step], -step))
    record = json.loads((run / "best_checkpoint.json").read_text())
    assert (record["best_step"], record["best_value"], record["checkpoint"]) == (
        best,
        accuracy[best],
        f"checkpoint-{best}",
    )
    assert resolve_run_dir(f"{run}@best") == (run / f"checkpoint-{best}").resolve()
    compared = {c["step"]: c for c in record["comparisons"]}
    assert sorted(compared) == sorted({best, 2})
    for step, c in compared.items():
        assert (c["n"], c["before"], c["after"]) == (HELD_OUT_PROBLEMS, accuracy[0], accuracy[step])
        assert c["low"] <= c["difference"] <= c["high"] and 0 <= c["p_value"] <= 1
    printed = printed.splitlines()
    assert printed[-1].startswith("[verigrpo] last (step 2) vs step 0 on the same 4 held-out problems: ")
    assert any(
        line.startswith(f"[verigrpo] best held-out correct/accuracy {accuracy[best]:.3f} at step {best}")
        for line in printed
    )


# slow: a strict duplicate of tests/integration/test_resume.py (slow, ci), whose resume from checkpoint-2 of a real run
# checks the same (3 steps, step 3 logged, its rollout log appended beside steps 1 and 2, which stay the straight run's)
# and more; CI runs both
@pytest.mark.slow
@pytest.mark.ci
def test_the_run_resumes_from_its_last_checkpoint(run_with_evals, monkeypatch):
    """Continues at step 2 and stops at 3, its rollout log appended (the exact match with a straight run:
    tests/integration/test_resume.py). ``true``: the latest checkpoint of output_dir, checkpoint-2 (as transformers'
    ``resume_from_checkpoint=True``)."""
    run, _, _ = run_with_evals
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    resumed = tiny_run(run, "--max_steps", "3", "--resume_from_checkpoint", "true")
    assert resumed["global_step"] == 3
    assert [e["step"] for e in resumed["log_history"] if "grad_norm" in e][-1] == 3
    assert (run / "rollouts" / "rollouts-step000003-000003.eval").is_file()  # appended, nothing overwritten
    assert len(list((run / "rollouts").glob("*.eval"))) == 3


CODE_CONFIG = str(REPO / "configs" / "cpu-smollm2-code.yaml")


@pytest.mark.usefixtures("needs_sandbox")
def test_a_real_grpo_step_on_code_problems_rewards_through_the_sandbox(tmp_path, cpu_model):
    """One step of the code recipe; its ``eval_steps`` without ``eval_strategy`` runs no eval."""
    script_args, training_args, model_args = parse_config(
        ["--config", CODE_CONFIG, "--output_dir", str(tmp_path / "code"), "--max_steps", "1", "--save_steps", "1"]
        + ["--per_device_train_batch_size", "4", "--num_generations", "4", "--max_completion_length", "48"]
        + ["--dataset_size", "4", "--eval_steps", "1"]
    )
    result = main(script_args, training_args, model_args)
    (step,) = [e for e in result["log_history"] if "grad_norm" in e]
    assert 0.0 <= step["rewards/code_tests/mean"] <= 1.0
    # ``eval_steps`` alone does not evaluate (transformers' rule: ``eval_strategy`` turns evaluation on)
    assert not (tmp_path / "code" / "evals").exists()
    assert not [key for entry in result["log_history"] for key in entry if key.startswith("eval_")]
    assert curve.held_out_points(result["log_history"]) == []

    from inspect_ai.log import read_eval_log

    (log_path,) = (tmp_path / "code" / "rollouts").glob("*.eval")
    log = read_eval_log(str(log_path))
    assert len(log.samples) == 4 and "train_code_tests" in log.samples[0].scores
    # the rollout's target is the problem's test spec, so `inspect score` can re-grade it
    assert rewards.parse_test_spec(log.samples[0].target).total >= 1
