"""Which checkpoint a run names as best, and how ``verigrpo/<run>@best`` finds it (train/guards/best_checkpoint.py;
the real run with held-out evals: tests/integration/test_held_out_eval.py)."""

import json

import pytest
from transformers import TrainerState

from evals.providers.checkpoint_model import CheckpointError, resolve_run_dir
from train.guards.best_checkpoint import BEST_JSON, NoBestCheckpoint, best_record, score_key, summary_lines


def state(best_step, best_value, last_step):
    return TrainerState(global_step=last_step, best_global_step=best_step, best_metric=best_value)


def run_dir_with(tmp_path, *steps):
    for step in steps:
        (tmp_path / f"checkpoint-{step}").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("saved", "best", "last", "checkpoint"),
    [
        ((2, 4, 6), 4, 6, "checkpoint-4"),
        ((2, 4), 5, 5, "."),  # the best eval is the last step: the final save in the run directory
        ((2, 4), 3, 6, None),  # evaluated at step 3, saved at 2 and 4: nothing holds the best weights
    ],
)
def test_the_record_names_the_saved_checkpoint_of_the_best_eval(tmp_path, saved, best, last, checkpoint):
    record = best_record(
        run_dir_with(tmp_path, *saved), state(best, 0.5, last), "math_verifier", "eval_correct/accuracy"
    )
    assert (record["best_step"], record["checkpoint"], record["last_step"]) == (best, checkpoint, last)
    assert record["comparisons"] == []  # no step-0 eval log here
    assert summary_lines(record)[-1] == "no paired comparison: step 0 was not evaluated (eval_on_start: true)"


def test_a_run_without_held_out_evals_has_no_best(tmp_path):
    with pytest.raises(NoBestCheckpoint, match="no held-out eval ran"):
        best_record(tmp_path, TrainerState(global_step=3), "math_verifier", "eval_correct/accuracy")


@pytest.mark.parametrize(
    ("headline", "key"), [("eval_correct/accuracy", "correct"), ("eval_fraction/mean", "fraction")]
)
def test_the_score_key_is_the_headline_metric_s_score(headline, key):
    assert score_key(headline) == key


def test_the_summary_prints_the_paired_difference_as_the_demo_does():
    comparison = {
        "label": "best (step 4)", "step": 4, "n": 20, "before": 0.3, "after": 0.55, "difference": 0.25,
        "low": 0.02, "high": 0.45, "p_value": 0.031, "verdict": "better", "only_after": 7, "only_before": 2,
    }  # fmt: skip
    record = {
        "metric": "eval_correct/accuracy", "best_step": 4, "best_value": 0.55, "checkpoint": "checkpoint-4",
        "last_step": 6, "comparisons": [comparison],
    }  # fmt: skip
    first, second = summary_lines(record)
    assert first == "best held-out correct/accuracy 0.550 at step 4 (checkpoint-4; --model verigrpo/<run>@best)"
    assert second == (
        "best (step 4) vs step 0 on the same 20 held-out problems: 0.300 -> 0.550, difference +0.250 (95% CI +0.020 "
        "to +0.450, Newcombe; McNemar mid-p 0.031; 7 problems gained, 2 lost): better"
    )


def test_at_best_resolves_to_the_recorded_checkpoint_and_old_names_are_unchanged(tmp_path):
    (tmp_path / "run").mkdir()
    run = run_dir_with(tmp_path / "run", 2, 4)
    (run / BEST_JSON).write_text(json.dumps({"best_step": 4, "checkpoint": "checkpoint-4"}))
    assert resolve_run_dir(f"{run}@best") == (run / "checkpoint-4").resolve()
    assert str(resolve_run_dir(str(run))) == str(run)  # a plain run directory: as before
    assert str(resolve_run_dir(f"{run}/checkpoint-2")) == f"{run}/checkpoint-2"


def test_at_best_during_a_run_reads_the_newest_trainer_state(tmp_path):
    run = run_dir_with(tmp_path, 2, 4)
    (run / "checkpoint-4" / "trainer_state.json").write_text(json.dumps({"best_model_checkpoint": "x/checkpoint-2"}))
    assert resolve_run_dir(f"{run}@best") == run / "checkpoint-2"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (None, "no best_checkpoint.json and no best checkpoint"),
        ({"best_step": 3, "checkpoint": None}, r"the best eval \(step 3\) has no saved checkpoint"),
    ],
)
def test_at_best_without_a_saved_best_says_why(tmp_path, record, message):
    if record is not None:
        (tmp_path / BEST_JSON).write_text(json.dumps(record))
    with pytest.raises(CheckpointError, match=message):
        resolve_run_dir(f"{tmp_path}@best")
