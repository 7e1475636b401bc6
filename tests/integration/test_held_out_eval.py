"""Held-out evals while training (train/artifacts/held_out.py): a real tiny GRPO run on CPU with
``eval_strategy: steps`` runs the Inspect task ``inspect eval`` runs (``math_verified``) on the policy in memory
at step 0 and after each step, writes each eval as an Inspect log under ``<output_dir>/evals/``, logs its
accuracy with the trainer's metrics, and the curve draws it; without the key there are no evals; and a
seeded run with evals trains exactly as without them."""

import json

import pytest

import rewards
from problems.math_domain import MATH
from tests.helpers.training import length_parity, tiny_run
from train.artifacts import curve

PROBLEMS, EVAL_TOKENS = 4, 16
EVALS_ON = (
    "--eval_strategy", "steps", "--eval_steps", "1", "--eval_on_start", "true",
    "--eval_problems", str(PROBLEMS), "--eval_max_tokens", str(EVAL_TOKENS), "--per_device_eval_batch_size", "4",
)  # fmt: skip


def held_out_entries(history):
    return [entry for entry in history if "eval_correct/accuracy" in entry]


def training_entries(history):
    return [entry for entry in history if "grad_norm" in entry]


def test_a_run_with_held_out_evals_writes_inspect_logs_and_draws_them(tmp_path, cpu_model, monkeypatch, capsys):
    from inspect_ai.log import read_eval_log

    from evals.providers.checkpoint_model import resolve_run_dir

    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    run = tmp_path / "run"
    result = tiny_run(run, *EVALS_ON)
    assert result["global_step"] == 2 and len(training_entries(result["log_history"])) == 2

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
        assert log.eval.task_args["split"] == "test" and log.eval.task_args["limit"] == PROBLEMS
        assert len(log.samples) == PROBLEMS
        # the logged accuracy is the log's, and each sample is scored by the project's verifier
        (correct,) = [score for score in log.results.scores if score.name == "correct"]
        assert entry["eval_correct/accuracy"] == correct.metrics["accuracy"].value
        assert entry["eval_samples"] == PROBLEMS and entry["eval_runtime"] > 0
        for sample in log.samples:
            assert sample.output.usage.output_tokens <= EVAL_TOKENS
            verdict = rewards.grade(sample.output.completion, sample.target)
            expected = "C" if verdict.correct else "I"
            assert sample.scores["math_verifier"].value["correct"] == expected, sample.output.completion

    # the curve: the held-out series at the eval steps, with the log history's values, beside the reward
    history = json.loads((run / "log_history.json").read_text())
    ((label, steps, values, problems),) = curve.held_out_points(history)
    assert (label, steps, problems) == ("held-out accuracy", [0, 1, 2], PROBLEMS)
    assert values == [entry["eval_correct/accuracy"] for entry in evals]
    figure = curve.figure(run)
    (drawn,) = [line for line in figure.axes[0].get_lines() if line.get_marker() == "D"]
    assert list(drawn.get_xdata()) == [0, 1, 2] and list(drawn.get_ydata()) == values
    (legend,) = figure.legends
    assert f"held-out accuracy (greedy, {PROBLEMS} problems)" in [text.get_text() for text in legend.get_texts()]

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
        assert (c["n"], c["before"], c["after"]) == (PROBLEMS, accuracy[0], accuracy[step])
        assert c["low"] <= c["difference"] <= c["high"] and 0 <= c["p_value"] <= 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].startswith("[verigrpo] last (step 2) vs step 0 on the same 4 held-out problems: ")
    assert any(
        line.startswith(f"[verigrpo] best held-out correct/accuracy {accuracy[best]:.3f} at step {best}")
        for line in printed
    )


def test_without_the_key_there_are_no_evals(tmp_path, cpu_model, monkeypatch):
    """``eval_steps`` alone does not evaluate (transformers' rule: ``eval_strategy`` turns evaluation on)."""
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    result = tiny_run(tmp_path / "run", "--max_steps", "1", "--eval_steps", "1")
    assert result["global_step"] == 1
    assert not (tmp_path / "run" / "evals").exists()
    assert not [key for entry in result["log_history"] for key in entry if key.startswith("eval_")]
    assert curve.held_out_points(result["log_history"]) == []


@pytest.mark.slow
def test_held_out_evals_do_not_change_what_a_seeded_run_trains(tmp_path, cpu_model, monkeypatch):
    """What the eval should guarantee: same completions, same rewards and gradients as the run without evals."""
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    with_evals = tiny_run(tmp_path / "on", *EVALS_ON)
    without = tiny_run(tmp_path / "off")
    keys = ("reward", "grad_norm", "entropy", "num_tokens", "completions/mean_length")
    on, off = training_entries(with_evals["log_history"]), training_entries(without["log_history"])
    assert [[e[k] for k in keys] for e in on] == [pytest.approx([e[k] for k in keys], rel=1e-5) for e in off]

    from inspect_ai.log import read_eval_log

    for step in (1, 2):
        name = f"rollouts/rollouts-step00000{step}-00000{step}.eval"
        texts = [[s.output.completion for s in read_eval_log(str(tmp_path / r / name)).samples] for r in ("on", "off")]
        assert texts[0] == texts[1]
