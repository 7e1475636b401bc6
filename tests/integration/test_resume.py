"""Resume is exact: a run killed after checkpoint-2 and resumed matches a straight run step for step.

Both runs are real tiny CPU GRPO runs (4-bit + LoRA, 3 steps, 4 completions of <= 24 tokens, same
seed). Compared per step: the sample ids and completions in the rollout logs (identical), the
rewards (identical: same completions, same deterministic rewards), the loss and grad norm (within
TOLERANCE), and the dtype of every saved adapter tensor and optimizer state (the fresh run trains
the QLoRA adapter in bf16, or in fp32 on a CPU that emulates bf16; a resume used to switch dtype).
"""

import os

os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as train/grpo.py sets it: must precede torch's import

import pytest  # noqa: E402
import torch  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

import train.trainer  # noqa: E402
from cpu.capability import detect  # noqa: E402
from problems.math_domain import MATH  # noqa: E402
from tests.helpers import MODEL  # noqa: E402
from tests.helpers.training import length_parity, tiny_run  # noqa: E402

# loss / grad_norm: the same computation in a fresh process (same threads, same inputs); measured
# differences were 0.0, the margin covers summation-order noise across machines
TOLERANCE = 1e-5


class Killed(BaseException):
    """Stands for a SIGKILL right after checkpoint-2 is on disk (nothing after it runs)."""


def steps_of(history):
    return {e["step"]: e for e in history if "grad_norm" in e}


def rollouts_by_step(run_dir):
    by_step = {}
    for path in sorted((run_dir / "rollouts").glob("*.eval")):
        for sample in read_eval_log(str(path)).samples:
            by_step.setdefault(sample.metadata["step"], []).append(
                (sample.id, sample.epoch, sample.output.completion, sample.scores["train_length_parity"].value)
            )
    return {step: sorted(rows) for step, rows in by_step.items()}


def dtypes(checkpoint):
    adapter = {t.dtype for t in load_file(checkpoint / "adapter_model.safetensors").values()}
    optimizer = torch.load(checkpoint / "optimizer.pt", weights_only=True)
    states = {t.dtype for s in optimizer["state"].values() for k, t in s.items() if k != "step"}
    return adapter, states


# slow (three real runs): CI runs this (and the shorter resume in tests/integration/test_train_run.py)
@pytest.mark.slow
@pytest.mark.ci
@pytest.mark.usefixtures("cpu_model")
def test_killed_and_resumed_run_matches_a_straight_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(MATH.rewards, "length_parity", length_parity)
    straight = tiny_run(tmp_path / "straight", "--max_steps", "3")

    original_on_save = train.trainer.RolloutFlushCallback.on_save

    def on_save_then_die(self, args, state, control, **kwargs):
        original_on_save(self, args, state, control, **kwargs)  # checkpoint-2 and its rollouts are written
        if state.global_step == 2:
            raise Killed

    monkeypatch.setattr(train.trainer.RolloutFlushCallback, "on_save", on_save_then_die)
    run = tmp_path / "interrupted"
    with pytest.raises(Killed):
        tiny_run(run, "--max_steps", "3")
    monkeypatch.setattr(train.trainer.RolloutFlushCallback, "on_save", original_on_save)
    capsys.readouterr()
    resumed = tiny_run(run, "--max_steps", "3", "--resume_from_checkpoint", str(run / "checkpoint-2"))
    out = capsys.readouterr().out

    # the summary counts what this process did, and every log the run holds
    assert "[verigrpo] 1 step (resumed from checkpoint-2) in " in out
    assert "reward over the run's 3 steps" in out
    assert "rollouts: 3 Inspect logs in" in out and "(1 new)" in out
    card = (run / "README.md").read_text()  # our model card, not TRL's "[None](https://huggingface.co/None)"
    assert "[None]" not in card and f"A fine-tuned version of the local checkpoint `{MODEL.resolve()}`" in card
    assert "| steps | 3 (max_steps 3) |" in card

    # the same data, the same samples, the same rewards, step for step
    expected, got = rollouts_by_step(tmp_path / "straight"), rollouts_by_step(run)
    assert sorted(got) == sorted(expected) == [1, 2, 3]
    for step in (1, 2, 3):
        assert [r[:2] for r in got[step]] == [r[:2] for r in expected[step]], f"sample ids differ at step {step}"
        assert all(sid.endswith(f"@{step}") for sid, *_ in got[step])
        assert got[step] == expected[step], f"completions or rewards differ at step {step}"

    a, b = steps_of(straight["log_history"]), steps_of(resumed["log_history"])
    assert sorted(a) == sorted(b) == [1, 2, 3]
    for step in (1, 2, 3):
        assert b[step]["reward"] == a[step]["reward"], step
        assert b[step]["loss"] == pytest.approx(a[step]["loss"], abs=TOLERANCE), step
        assert b[step]["grad_norm"] == pytest.approx(a[step]["grad_norm"], abs=TOLERANCE), step

    # the resumed process trained the adapter in the fresh run's dtypes, optimizer state too (TRL's bf16 QLoRA adapter,
    # float32 on a CPU that emulates bf16: cpu/lora_dtype.py)
    assert (
        dtypes(tmp_path / "straight" / "checkpoint-3") == dtypes(run / "checkpoint-3") == dtypes(run / "checkpoint-2")
    )
    assert dtypes(run / "checkpoint-3")[0] == {torch.bfloat16 if detect().native_bf16 else torch.float32}
    straight_adapter = load_file(tmp_path / "straight" / "checkpoint-3" / "adapter_model.safetensors")
    resumed_adapter = load_file(run / "checkpoint-3" / "adapter_model.safetensors")
    assert straight_adapter.keys() == resumed_adapter.keys()
    worst = max((straight_adapter[k].float() - resumed_adapter[k].float()).abs().max().item() for k in straight_adapter)
    assert worst <= TOLERANCE, f"adapters differ by {worst}"
