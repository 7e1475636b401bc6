"""Any step of a default run replays (train/replay.py): the per-step record is on by default (``log_replay_batches``),
and step N replays from the nearest checkpoint before it by re-running the recorded steps between, exactly on a seeded
CPU run. A 3-step run saving every 2 steps: step 3 replays from checkpoint-2, step 2 from the start (re-running step
1), step 1 from the start."""

import pytest
import torch

from tests.helpers.training import length_parity, tiny_run
from train.replay import ReplayError, main, replay, start_of

# slow: three CPU GRPO steps and three replays (several minutes on a loaded 2-core machine)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    from problems.math_domain import MATH

    run = tmp_path_factory.mktemp("replay") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(MATH.rewards, "length_parity", length_parity)
        result = tiny_run(run, "--max_steps", "3", "--save_steps", "2")  # no log_replay_batches: the default records
    return run, result


def logged(result, step):
    (entry,) = [e for e in result["log_history"] if e.get("step") == step and "loss" in e]
    return entry


def test_every_step_is_recorded_by_default(default_run):
    run, _ = default_run
    assert sorted(p.name for p in (run / "replay").iterdir()) == [f"step-00000{n}.pt" for n in (1, 2, 3)]
    assert sorted(p.name for p in run.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-3"]
    assert start_of(run, 3) == (2, run / "checkpoint-2") and start_of(run, 2) == (0, None)


@pytest.mark.parametrize(("step", "start"), [(3, 2), (2, 0), (1, 0)])
def test_a_step_replays_exactly_from_the_nearest_checkpoint_before_it(default_run, step, start, monkeypatch):
    from problems.math_domain import MATH

    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    run, result = default_run
    replayed = replay(run, step)
    assert replayed["from"] == start
    want = logged(result, step)
    assert (replayed["replayed"]["loss"], replayed["replayed"]["grad_norm"]) == (want["loss"], want["grad_norm"])


def test_a_missing_record_between_is_named(default_run, tmp_path, monkeypatch, capsys):
    import shutil

    run, _ = default_run
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    (copy / "replay" / "step-000001.pt").unlink()
    with pytest.raises(ReplayError, match=r"step-000001.pt not found: .*the steps from the nearest checkpoint"):
        replay(copy, 2)
    assert main([str(copy), "--step", "2"]) == 2
    assert "step-000001.pt not found" in capsys.readouterr().err
    assert torch.load(run / "replay" / "step-000002.pt", weights_only=False)  # the original is intact
