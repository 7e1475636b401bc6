"""Training rollouts as Inspect logs: the format, the recorder's intervals, re-scoring and the audit."""

import json
import math
import pathlib
import subprocess
import sys

import pytest
from conftest import BIN, REPO
from inspect_ai.log import read_eval_log

import rewards
from evals.rollout_audit import audit_logs
from evals.scoring import checkpoint_verifier_mismatch
from train.rollouts import RolloutRecorder, build_log, rollouts_from_batch

PROMPT = [{"role": "system", "content": "sys"}, {"role": "user", "content": "What is 2+3?"}]
G = 4


def batch(step: int, completions: list[str], rewards_: dict[str, list], answer: str = "5", prompt_id: str = "p"):
    n = len(completions)
    return rollouts_from_batch(
        ids=[f"{prompt_id}{i // G}" for i in range(n)],
        answers=[answer] * n,
        prompts=[PROMPT] * n,
        completions=[[{"role": "assistant", "content": c}] for c in completions],
        rewards=rewards_,
        advantages=[0.5 - i % 2 for i in range(n)],
        lengths=[10 + i for i in range(n)],
        max_completion_length=64,
        terminated=[i % 3 != 0 for i in range(n)],
        num_generations=G,
        step=step,
    )


# 8 completions = 2 groups; training paid 5 of them, 3 of those with \boxed{}
COMPLETIONS = [
    "ANSWER: 5",
    "\\boxed{5}",
    "ANSWER: 4",
    "\\boxed{5}",
    "so \\boxed{5}",
    "ANSWER: 5",
    "no idea",
    "ANSWER: 6",
]
PAID = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]
FORMAT = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0]


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


@pytest.fixture
def run_dir(tmp_path):
    recorder = RolloutRecorder(tmp_path / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, COMPLETIONS, {"correctness": PAID, "format": FORMAT}))
    recorder.add(batch(2, COMPLETIONS, {"correctness": PAID, "format": FORMAT}, prompt_id="q"))
    recorder.flush()
    return tmp_path


def test_audit_with_the_training_verifier_finds_no_disagreement(run_dir):
    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")))
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (16, 10, 0, 0)


def test_audit_with_a_different_scorer_counts_exactly(run_dir):
    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")), spec, window=1)
    assert [(w.first_step, w.paid, w.paid_rejected) for w in audit.windows] == [(1, 5, 3), (2, 5, 3)]
    assert all("\\boxed" in ex.completion for ex in audit.paid_rejected) and len(audit.paid_rejected) == 6
    assert audit.total.paid_rejected_rate == pytest.approx(0.6)


def test_audit_cli_gates_on_fail_above(run_dir):
    script = [sys.executable, REPO / "scripts" / "audit_rollouts.py", str(run_dir)]
    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    ok = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert "all" in ok.stdout and (run_dir / "rollouts-audit.png").is_file()
    bad = subprocess.run(
        script + ["--scorer", spec, "--fail-above", "0.5"], capture_output=True, text=True, timeout=300
    )
    assert bad.returncode == 1 and "FAIL: 60.00% of paid completions" in bad.stdout
    assert "[paid but rejected]" in bad.stdout and "boxed answers are not accepted here" in bad.stdout
    lenient = subprocess.run(
        script + ["--scorer", spec, "--fail-above", "0.7"], capture_output=True, text=True, timeout=300
    )
    assert lenient.returncode == 0


def test_inspect_score_cli_appends_our_scorer_to_a_rollout_log(run_dir, tmp_path):
    log = sorted((run_dir / "rollouts").glob("*.eval"))[0]
    out = tmp_path / "rescored.eval"
    cmd = [BIN / "inspect", "score", str(log), "--scorer", "verigrpo/math_verifier", "--action", "append"]
    run = subprocess.run(
        cmd + ["--output-file", str(out), "--model", "none/none"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    scores = [s.scores for s in read_eval_log(str(out)).samples]
    assert all({"train_correctness", "train_format", "math_verifier"} <= set(s) for s in scores)


def test_checkpoint_trained_with_another_verifier_warns(tmp_path):
    same, other = tmp_path / "same", tmp_path / "other"
    for directory, fingerprint in ((same, rewards.verifier_fingerprint()), (other, "0123456789abcdef")):
        directory.mkdir()
        (directory / "run.json").write_text(
            json.dumps({"verifier_fingerprint": fingerprint, "verigrpo_version": "0.0"})
        )
    assert checkpoint_verifier_mismatch(f"hf/{same}") is None
    with pytest.warns(UserWarning, match="was trained with verifier 0123456789abcdef"):
        message = checkpoint_verifier_mismatch(f"vllm/base-model:{other}")
    assert message and str(other) in message
    assert checkpoint_verifier_mismatch("mockllm/model") is None


def test_code_rollouts_are_audited_with_the_unit_test_scorer(tmp_path, needs_sandbox):
    """A code run's logs hold train_code_tests and the test spec as target: the audit re-runs the tests.
    Here training "paid" a sys.exit(0) hack (as a naive exit-code reward would): the audit must flag it."""
    tests = '{"asserts": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"], "entry_point": "add"}'
    completions = [
        "```python\ndef add(a, b):\n    return a + b\n```",
        "```python\nimport sys\nsys.exit(0)\n```",
        "```python\ndef add(a, b):\n    return 0\n```",
        "no code",
    ]
    recorder = RolloutRecorder(tmp_path / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, completions, {"code_tests": [1.0, 1.0, 0.5, 0.0]}, answer=tests))
    recorder.flush()
    audit = audit_logs(sorted((tmp_path / "rollouts").glob("*.eval")))
    assert audit.scorer_name == "unit_test_scorer"
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (4, 3, 1, 0)
    (flagged,) = audit.paid_rejected
    assert "sys.exit(0)" in flagged.completion and "failed to load: SystemExit" in flagged.explanation


# ---- torn logs: never written, and survived when found ------------------------------------------


def tear(path, keep: float = 0.5):
    """What a SIGKILL during a flush leaves: the first part of a zip, no central directory."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def test_a_crash_mid_write_leaves_no_eval_file(tmp_path, monkeypatch):
    import train.rollouts

    def dies_half_way(log, location, format="auto"):
        real_write(log, location, format=format)
        tear(pathlib.Path(location))
        raise KeyboardInterrupt  # the process dies before the write returns

    real_write = train.rollouts.write_eval_log
    monkeypatch.setattr(train.rollouts, "write_eval_log", dies_half_way)
    recorder = RolloutRecorder(tmp_path, every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, COMPLETIONS, {"correctness": PAID}))
    with pytest.raises(KeyboardInterrupt):
        recorder.flush()
    assert list(tmp_path.glob("*.eval")) == []  # readers (inspect view, the audit) see nothing torn
    assert [p.name for p in tmp_path.iterdir()] == [".rollouts-step000001-000001.eval.partial"]

    monkeypatch.setattr(train.rollouts, "write_eval_log", real_write)
    path = recorder.flush()  # the buffer was kept: the retry writes the whole interval
    assert read_eval_log(str(path)).status == "success" and len(read_eval_log(str(path)).samples) == 8
    assert not (tmp_path / ".rollouts-step000001-000001.eval.partial").exists()


@pytest.fixture
def torn_run(run_dir):
    """run_dir plus a third log torn in half (as before the atomic writer)."""
    recorder = RolloutRecorder(run_dir / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(3, COMPLETIONS, {"correctness": PAID, "format": FORMAT}))
    (torn,) = [recorder.flush()]
    tear(torn)
    return run_dir, torn


def test_audit_skips_a_torn_log_and_counts_it(torn_run):
    run_dir, torn = torn_run
    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")))
    assert [s.path for s in audit.skipped] == [str(torn)] and "EOCD" in audit.skipped[0].reason
    assert len(audit.audited) == 2
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected) == (16, 10, 0)  # the readable logs, all of them


def test_audit_of_only_torn_logs_is_unusable_input(run_dir):
    from evals.rollout_audit import AuditInputError

    logs = sorted((run_dir / "rollouts").glob("*.eval"))
    for log in logs:
        tear(log)
    with pytest.raises(AuditInputError, match=r"none of the 2 rollout logs could be read: .*rollouts-step000001"):
        audit_logs(logs)


def test_audit_window_must_be_positive(run_dir):
    from evals.rollout_audit import AuditInputError

    with pytest.raises(AuditInputError, match=r"window must be >= 1 step, got 0"):
        audit_logs(sorted((run_dir / "rollouts").glob("*.eval")), window=0)


def test_audit_cli_exit_codes_torn_log_and_window(torn_run):
    run_dir, torn = torn_run
    script = [sys.executable, REPO / "scripts" / "audit_rollouts.py", str(run_dir)]
    torn_only = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert torn_only.returncode == 2, torn_only.stderr[-2000:]  # unusable input, not "reward hacking"
    assert f"warning: skipped unreadable rollout log {torn}" in torn_only.stderr
    assert "Traceback" not in torn_only.stderr
    assert "re-scored 2 of 3 rollout logs" in torn_only.stdout and "1 skipped as unreadable" in torn_only.stdout

    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    gate = subprocess.run(script + ["--scorer", spec], capture_output=True, text=True, timeout=300)
    assert gate.returncode == 1 and "FAIL: 60.00%" in gate.stdout  # the gate's verdict on what could be read

    window = subprocess.run(script + ["--window", "0"], capture_output=True, text=True, timeout=300)
    assert window.returncode == 2 and "--window: must be >= 1, got 0" in window.stderr


def test_audit_plot_shows_both_lines_when_equal_and_integer_steps(run_dir):
    from evals.rollout_audit import figure

    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")), window=1)
    assert audit.total.paid_rejected == 0 and audit.total.unpaid_accepted == 0  # both lines at 0
    fig = figure(audit)
    ax = fig.axes[0]
    first, second = ax.get_lines()
    assert list(first.get_ydata()) == list(second.get_ydata()) == [0.0, 0.0]
    # the line drawn on top is dashed and hollow: the one below shows through
    assert second.get_linestyle() == "--" and second.get_markerfacecolor() == "none"
    assert second.get_markersize() < first.get_markersize() and second.get_zorder() >= first.get_zorder()
    ticks = ax.get_xticks()
    assert len(ticks) and all(float(t).is_integer() for t in ticks)


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
