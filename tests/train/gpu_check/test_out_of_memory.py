"""The GPU check's table survives every way a GPU reports running out of memory (issue #40, 4).

vLLM's sleep-mode allocator (``cumem_allocator.cpp``) reports a failed ``cuMemCreate`` at wake-up as a plain
``RuntimeError("CUDA Error: out of memory at ...")`` from its C extension, and torch reports some allocation failures
as ``RuntimeError("CUDA error: out of memory")`` (``torch.AcceleratorError``), not ``torch.OutOfMemoryError``: the
check must turn each into the memory row's out-of-memory verdict, and let any other RuntimeError through.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

import train.grpo
from train.config.memory_model import GIB
from train.engines.base import SyncRecord
from train.gpu_check import report
from train.gpu_check.run import CHECKS, _fill, _train_and_measure
from train.gpu_check.verdicts import FAIL, MemoryInputs, not_run

WAKE_UP_OOM = "CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:119"  # vLLM's C extension's text


class SleepingLLM:
    """A sleep-mode vLLM whose allocator cannot map the weights back (a GPU's failure, raised as vLLM raises it)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def wake_up(self, tags=None):
        raise self.error


class Engine:
    def __init__(self, llm) -> None:
        self.llm = llm
        self.sync_record = SyncRecord()
        self.closed = False

    def generate(self, *args, **kwargs):
        self.llm.wake_up(["weights"])  # TRL wakes a sleeping engine before it generates


class Trainer:
    def __init__(self, engine) -> None:
        self.rollout_engine = engine
        self.state = SimpleNamespace(log_history=[])

    def add_callback(self, callback) -> None:
        pass

    def train(self):
        self.rollout_engine.generate([[1, 2]], None, 2)

    def close_rollout_engine(self) -> None:
        self.rollout_engine.closed = True


INPUTS = MemoryInputs(budget=14.5 * GIB, budget_source="--memory-cap 14.5", gpu=False, estimate=None, parts={})
OPTS = SimpleNamespace(steps=1, speed_rounds=1)


def run_with(monkeypatch, error: BaseException, while_loading: bool = False):
    engine = Engine(SleepingLLM(error))

    def build_trainer(*args):
        if while_loading:
            engine.llm.wake_up(["weights"])
        return Trainer(engine), None, None

    monkeypatch.setattr(train.grpo, "build_trainer", build_trainer)
    training_args = SimpleNamespace(learning_rate=1e-3)
    return _train_and_measure(None, training_args, None, INPUTS, False, OPTS, {}, 1e-5), engine


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError(WAKE_UP_OOM),
        RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported"),
        RuntimeError("CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY"),
        torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"),
    ],
    ids=["vllm-cumem-wake-up", "torch-runtime-error", "driver-api", "torch-oom"],
)
@pytest.mark.parametrize("while_loading", [False, True], ids=["while-training", "while-loading"])
def test_an_out_of_memory_raised_as_runtime_error_gives_the_table_its_verdict(monkeypatch, error, while_loading):
    rows, engine = run_with(monkeypatch, error, while_loading)
    memory = rows["memory"]
    assert memory.status == FAIL and memory.verdict.startswith("does not fit: out of memory")
    assert str(error).splitlines()[0] in memory.measured + str(memory.data["out_of_memory"])
    assert engine.closed or while_loading
    table = report.text(_fill(rows, not_run, "another check failed"), "GPU check: test")
    assert "does not fit: out of memory" in table and "Traceback" not in table
    assert [row.check for row in _fill(rows, not_run, "x")] == list(CHECKS)


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("CUDA error: an illegal memory access was encountered"),
        RuntimeError("Expected all tensors to be on the same device"),
        RuntimeError("the vLLM server said: out of memory"),  # not a CUDA report: not this GPU's memory
        ValueError("CUDA error: out of memory"),
    ],
)
def test_other_errors_are_not_taken_for_an_out_of_memory(monkeypatch, error):
    from train.gpu_check.run import cuda_out_of_memory

    assert cuda_out_of_memory(error) is None
    with pytest.raises(type(error)):
        run_with(monkeypatch, error)


def test_the_first_line_of_the_report_is_the_verdicts_text():
    from train.gpu_check.run import cuda_out_of_memory

    assert cuda_out_of_memory(RuntimeError(WAKE_UP_OOM + "\nmore")) == WAKE_UP_OOM
    assert cuda_out_of_memory(torch.OutOfMemoryError("CUDA out of memory.\nTried")) == "CUDA out of memory."
