"""Training rollouts as Inspect logs (train/artifacts/rollout_log.py): the format, the recorder's intervals,
atomic files, and the adapter each sample came from. The audit that re-judges them: tests/evals/test_rollout_audit.py."""

import math
import pathlib

import pytest
from inspect_ai.log import read_eval_log

import rewards
from tests.helpers.rollouts import COMPLETIONS, FORMAT, PAID, PROMPT, G, batch, tear
from train.artifacts.rollout_log import RolloutRecorder, build_log, rollouts_from_batch


def test_log_format_groups_scores_and_metadata(tmp_path):
    rollouts = batch(3, COMPLETIONS, {"correctness": PAID, "format": FORMAT})
    log = build_log(rollouts, G, {"verifier_fingerprint": rewards.verifier_fingerprint()})
    path = tmp_path / "r.eval"
    from inspect_ai.log import write_eval_log

    write_eval_log(log, str(path))
    back = read_eval_log(str(path))
    assert back.eval.model == "none/none" and back.eval.config.epochs == G
    ids = sorted({s.id for s in back.samples})
    assert ids == ["p0@3", "p1@3"]
    assert sorted(s.epoch for s in back.samples if s.id == "p0@3") == [1, 2, 3, 4]
    first = next(s for s in back.samples if s.id == "p0@3" and s.epoch == 1)
    assert first.scores["train_correctness"].value == 1.0 and first.output.completion == "ANSWER: 5"
    assert first.metadata == {
        "step": 3,
        "group": 0,
        "advantage": 0.5,
        "completion_length": 10,
        "truncated": True,
        "max_completion_length": 64,
    }
    assert first.target == "5" and first.input == "What is 2+3?"  # the problem; the full prompt is in messages
    assert [m.role for m in first.messages] == ["system", "user", "assistant"]
    metrics = {(r.name, m): v.value for r in back.results.scores for m, v in r.metrics.items()}
    assert metrics[("train_correctness", "mean")] == pytest.approx(5 / 8)
    assert metrics[("train_correctness", "pass@4")] == pytest.approx(1.0)
    assert back.eval.metadata["first_step"] == 3 and back.eval.metadata["verifier_fingerprint"]


def test_none_reward_is_recorded_unscored(tmp_path):
    (rollout,) = batch(1, ["ANSWER: 1"] * 4, {"correctness": [None, 1.0, 0.0, float("nan")]})[:1]
    log = build_log([rollout], G, {})
    assert math.isnan(log.samples[0].scores["train_correctness"].value)


def test_recorder_writes_one_file_per_interval_and_never_overwrites(tmp_path):
    recorder = RolloutRecorder(tmp_path, every_steps=2, num_generations=G, metadata={})
    for step in range(1, 6):
        recorder.add(batch(step, COMPLETIONS[:4], {"correctness": PAID[:4]}))
    recorder.flush()
    assert [p.name for p in recorder.written] == [
        "rollouts-step000001-000002.eval",
        "rollouts-step000003-000004.eval",
        "rollouts-step000005-000005.eval",
    ]
    assert len(read_eval_log(str(recorder.written[0])).samples) == 8
    resumed = RolloutRecorder(tmp_path, every_steps=2, num_generations=G, metadata={})
    resumed.add(batch(5, COMPLETIONS[:4], {"correctness": PAID[:4]}))
    resumed.flush()
    assert resumed.written[0].name == "rollouts-step000005-000005-2.eval"
    assert len(list(tmp_path.glob("*.eval"))) == 4


def test_a_crash_mid_write_leaves_no_eval_file(tmp_path, monkeypatch):
    import train.artifacts.rollout_log

    def dies_half_way(log, location, format="auto"):
        real_write(log, location, format=format)
        tear(pathlib.Path(location))
        raise KeyboardInterrupt  # the process dies before the write returns

    real_write = train.artifacts.rollout_log.write_eval_log
    monkeypatch.setattr(train.artifacts.rollout_log, "write_eval_log", dies_half_way)
    recorder = RolloutRecorder(tmp_path, every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, COMPLETIONS, {"correctness": PAID}))
    with pytest.raises(KeyboardInterrupt):
        recorder.flush()
    assert list(tmp_path.glob("*.eval")) == []  # readers (inspect view, the audit) see nothing torn
    assert [p.name for p in tmp_path.iterdir()] == [".rollouts-step000001-000001.eval.partial"]

    monkeypatch.setattr(train.artifacts.rollout_log, "write_eval_log", real_write)
    path = recorder.flush()  # the buffer was kept: the retry writes the whole interval
    assert read_eval_log(str(path)).status == "success" and len(read_eval_log(str(path)).samples) == 8
    assert not (tmp_path / ".rollouts-step000001-000001.eval.partial").exists()


def test_each_rollout_records_the_adapter_version_that_generated_it(tmp_path):
    """vLLM engines pass the adapter name (e.g. verigrpo-<run>-v3) for the batch; it lands in every sample."""
    n = len(COMPLETIONS)
    rollouts = rollouts_from_batch(
        ids=[f"p{i // G}" for i in range(n)],
        answers=["5"] * n,
        prompts=[PROMPT] * n,
        completions=COMPLETIONS,
        rewards={"correctness": PAID},
        advantages=[0.0] * n,
        lengths=None,
        max_completion_length=64,
        terminated=None,
        num_generations=G,
        step=3,
        extra={"adapter": "verigrpo-0123abcd-v3"},
    )
    recorder = RolloutRecorder(tmp_path, every_steps=1, num_generations=G, metadata={})
    recorder.add(rollouts)
    back = read_eval_log(str(recorder.flush()))
    assert {s.metadata["adapter"] for s in back.samples} == {"verigrpo-0123abcd-v3"} and len(back.samples) == n
    assert all(s.metadata["max_completion_length"] == 64 for s in back.samples)
