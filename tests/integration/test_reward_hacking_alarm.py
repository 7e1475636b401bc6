"""One real tiny CPU run whose correctness reward is deliberately lenient (it pays any completion that states a result,
``= n``, right or wrong) and weighs as much as length_parity, and which records its loss batches: the reward-hacking alarm
(train/guards/reward_hacking.py) re-judges the rollout log at the first save and warns, and step 2 replays from
checkpoint-1 to the logged loss and grad norm, exactly (train/replay.py); its counterfactual with the real verifier
shows what the lenient reward paid for and a different loss, and with the run's own lenient reward equals the replay
(slow). The same alarm with stop_on_reward_hacking stops the run (slow)."""

import re

import pytest

import rewards
from problems.math_domain import MATH
from tests.helpers.training import length_parity, tiny_run
from train.guards.reward_hacking import RewardHacking
from train.replay import main, replay


def lenient_correctness(completions, **kwargs):
    """A broken correctness reward: 1.0 for any completion that states a result (``= n``), right answer or not.
    (Not "any digit": that pays every completion of a group alike, and a group-normalized advantage ignores it.)"""
    return [float(bool(re.search(r"=\s*-?\d", rewards.common.completion_text(c)))) for c in completions]


@pytest.fixture(scope="module")
def lenient_run(cpu_model, tmp_path_factory):
    """(run dir, what it printed, its result): 2 steps, checkpoints 1 and 2, replay batches recorded; the lenient
    correctness reward weighs 1.0 (as length_parity), so what it pays moves the advantages. The exploit pre-flight
    would refuse that reward before the model loads (its job): off here, since this test is about what a run does."""
    import contextlib
    import io

    run = tmp_path_factory.mktemp("lenient") / "run"
    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
        patch.setitem(MATH.rewards, "length_parity", length_parity)
        patch.setitem(MATH.rewards, "correctness", lenient_correctness)
        result = tiny_run(
            run, "--log_replay_batches", "true", "--reward_weights", "1.0", "1.0", "0.0", "--exploit_probe", "false"
        )
    return run, printed.getvalue(), result


def test_a_lenient_reward_raises_the_alarm_with_its_evidence(lenient_run):
    run, printed, result = lenient_run
    warnings = [line for line in printed.splitlines() if "WARNING reward-hacking alarm" in line]
    assert warnings, printed[-3000:]
    paid_rejected, paid = map(int, re.search(r"the reward paid (\d+) of (\d+) paid completions", warnings[0]).groups())
    assert 0 < paid_rejected <= paid <= 4
    assert "math_verifier rejects" in warnings[0] and warnings[0].endswith("set stop_on_reward_hacking: true to stop")
    alarms = [e["guards/reward_hacking_alarms"] for e in result["log_history"] if "guards/reward_hacking_alarms" in e]
    assert alarms and alarms[0] == 1
    assert result["global_step"] == 2  # without the key the run trains on


def verifier_rejects(run, step: int) -> set[tuple[str, int]]:
    """(sample id, epoch) of the step's rollouts the lenient reward paid and the real correctness reward rejects,
    judged here from the rollout log directly (not through TRL or the replay)."""
    from inspect_ai.log import read_eval_log

    from problems.domains import reward_funcs
    from records.run_manifest import read_run_manifest

    (correctness,) = reward_funcs(["correctness"], think=read_run_manifest(run)["config"]["script"]["think"])
    samples = [
        sample
        for path in sorted((run / "rollouts").glob("*.eval"))
        for sample in read_eval_log(str(path)).samples
        if sample.metadata["step"] == step
    ]
    verdicts = correctness(
        completions=[[{"role": "assistant", "content": s.output.completion}] for s in samples],
        answer=[s.target for s in samples],
    )
    return {
        (s.id, s.epoch)
        for s, verdict in zip(samples, verdicts)
        if s.scores["train_correctness"].value == 1.0 and verdict == 0.0
    }


def test_a_replayed_step_equals_the_logged_loss_and_grad_norm(lenient_run, capsys, monkeypatch):
    """The replay is exact; its counterfactual with the real verifier (correctness as it is, not the lenient one the
    run trained with) changes exactly the rewards the lenient reward paid and the verifier rejects, and the loss."""
    run, _, result = lenient_run
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)  # the run's config names it
    assert sorted(p.name for p in (run / "replay").iterdir()) == ["step-000001.pt", "step-000002.pt"]
    (logged,) = [e for e in result["log_history"] if e.get("step") == 2 and "loss" in e]
    assert logged["grad_norm"] > 0  # a step that learned something
    assert main([str(run), "--step", "2", "--counterfactual"]) == 0
    out = capsys.readouterr().out
    assert f"step 2 loss: replayed {logged['loss']!r}, logged {logged['loss']!r} (equal)" in out
    assert f"step 2 grad_norm: replayed {logged['grad_norm']!r}, logged {logged['grad_norm']!r} (equal)" in out
    rejected = verifier_rejects(run, 2)
    assert rejected, "the lenient reward paid nothing the verifier rejects at step 2: the test shows nothing"
    changed = re.findall(r"^    (\S+@2) #(\d) correctness: 1 -> 0   '.*'$", out, re.M)
    assert {(sample, int(epoch)) for sample, epoch in changed} == rejected
    assert f"rewards changed: {len(rejected)} of 4 completions" in out
    assert not re.search(r"^    \S+ #\d (length_parity|format):", out, re.M)  # the other rewards are as they were
    (line,) = [line for line in out.splitlines() if line.startswith("  loss: counterfactual")]
    assert f"replayed {logged['loss']!r} (differs by" in line, out  # the lenient pay moved the loss


@pytest.mark.slow  # another replay (~40 s on a busy machine); the default suite runs the verifier's counterfactual
def test_with_the_runs_own_reward_the_counterfactual_is_the_replay(lenient_run, monkeypatch):
    run, _, _ = lenient_run
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    monkeypatch.setitem(MATH.rewards, "correctness", lenient_correctness)  # the reward the run paid with
    result = replay(run, 2, counterfactual=True)
    counterfactual = result["counterfactual"]
    assert counterfactual["changed_rewards"] == [] and counterfactual["changed_advantages"] == []
    assert counterfactual["loss"] == result["replayed"]["loss"] == result["logged"]["loss"]
    assert counterfactual["grad_norm"] == result["replayed"]["grad_norm"] == result["logged"]["grad_norm"]


# slow (~1 min quiet, 1.3 min measured on a busy machine: another tiny run); the default suite sees the alarm warn above
@pytest.mark.slow
def test_with_the_key_the_alarm_stops_the_run_at_its_first_save(tmp_path, cpu_model, monkeypatch, capsys):
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    monkeypatch.setitem(MATH.rewards, "correctness", lenient_correctness)
    run = tmp_path / "run"
    with pytest.raises(RewardHacking, match=r"stopped the run at step 1: the reward paid \d+ of \d+ paid") as caught:
        tiny_run(run, "--max_steps", "3", "--stop_on_reward_hacking", "true", "--exploit_probe", "false")
    assert "math_verifier rejects" in str(caught.value) and "scripts/audit_rollouts.py" in str(caught.value)
    assert (run / "checkpoint-1" / "adapter_model.safetensors").is_file() and not (run / "checkpoint-2").exists()
    assert "[verigrpo] WARNING reward-hacking alarm: the reward paid" in capsys.readouterr().out
