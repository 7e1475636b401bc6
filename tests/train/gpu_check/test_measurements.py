"""train/gpu_check's measurements and files: the memory budget and cap, the CPU estimate, the peak meter,
step timing, and the table written as JSON and markdown."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.helpers import REPO
from train.config import ConfigError, parse_config
from train.config.memory_model import GIB
from train.engines.base import SyncRecord
from train.gpu_check import memory, report, timing
from train.gpu_check.run import parse_on_this_machine
from train.gpu_check.timing import StepTimes, time_rollouts
from train.gpu_check.verdicts import FAIL, INFO, NOT_RUN, PASS, Row

CPU_VLLM_CONFIG = str(REPO / "configs" / "cpu-smollm2-vllm.yaml")


@pytest.fixture
def cpu_vllm(cpu_model):
    return parse_config(["--config", CPU_VLLM_CONFIG, "--output_dir", "unused"])


# ---- reading the config on this machine -------------------------------------------------------


def test_a_gpu_recipe_is_read_without_a_gpu_so_the_table_can_say_what_is_missing():
    """transformers refuses bf16 without a GPU while parsing: the check reads the recipe as its CPU variant."""
    argv = ["--config", str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml"), "--output_dir", "unused"]
    with pytest.raises(ConfigError, match="GPU recipe"):
        parse_config(argv)
    (_, training_args, model_args), gpu_recipe = parse_on_this_machine(argv, cuda=False)
    assert gpu_recipe and training_args.use_cpu and model_args.load_in_4bit
    with pytest.raises(ConfigError, match="GPU recipe"):  # with a GPU, a refusal is the config's own error
        parse_on_this_machine(argv, cuda=True)


def test_the_cpu_config_is_not_a_gpu_recipe_and_other_errors_stay_errors(cpu_model):
    (_, training_args, _), gpu_recipe = parse_on_this_machine(["--config", CPU_VLLM_CONFIG], cuda=False)
    assert not gpu_recipe and training_args.use_cpu
    qwen = str(REPO / "configs" / "qwen2.5-1.5b-qlora-vllm.yaml")
    with pytest.raises(ConfigError, match="GPU recipe"):  # the first error, as train/grpo.py reports it
        parse_on_this_machine(["--config", qwen, "--num_generations", "3"], cuda=False)


# ---- budget and cap ---------------------------------------------------------------------------


def test_on_cpu_the_cap_is_the_budget_and_says_it_is_not_enforced(cpu_vllm):
    _, training_args, _ = cpu_vllm
    budget = memory.apply_cap(2.5, training_args, gpu=False, device_bytes=24 * GIB)
    assert budget.bytes == 2.5 * GIB and budget.source == "--memory-cap 2.5 GiB"
    assert budget.enforcement.startswith("not enforced on CPU")
    assert training_args.vllm_gpu_memory_utilization == 0.3  # untouched
    whole = memory.apply_cap(None, training_args, gpu=False, device_bytes=24 * GIB)
    assert whole.bytes == 24 * GIB and "RAM" in whole.source


@pytest.mark.parametrize("cap", [0.0, -1.0, 30.0])
def test_a_cap_that_is_not_a_smaller_budget_is_refused(cpu_vllm, cap):
    _, training_args, _ = cpu_vllm
    with pytest.raises(ConfigError, match="--memory-cap"):
        memory.apply_cap(cap, training_args, gpu=False, device_bytes=24 * GIB)


def test_on_a_gpu_the_cap_sets_torchs_fraction_and_scales_vllms_pool(cpu_vllm, monkeypatch):
    """The arithmetic of the GPU path (no GPU here: torch's setter is recorded, not called)."""
    fractions = []
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", fractions.append)
    _, training_args, _ = cpu_vllm
    budget = memory.apply_cap(14.5, training_args, gpu=True, device_bytes=139.8 * GIB)
    assert fractions == [pytest.approx((14.5 - 0.9) / 139.8)]  # torch's share leaves room for the CUDA context
    # vLLM sizes its pool as utilization x the device's memory: 0.3 of the cap, as on a 14.5 GiB card
    assert training_args.vllm_gpu_memory_utilization * 139.8 == pytest.approx(0.3 * 14.5)
    assert budget.vllm_utilization == (0.3, pytest.approx(0.3 * 14.5 / 139.8))
    assert "set_per_process_memory_fraction(0.0973) (14.5 GiB less the CUDA context's 0.9 GiB)" in budget.enforcement


def test_make_gpu_checks_cap_with_the_cuda_context_fits_a_t4(cpu_vllm, monkeypatch):
    """A T4 with ECC offers 14.75 GiB (15_835_660_288): what torch may allocate under the Makefile's cap,
    plus the CUDA context, must fit it (torch's fraction used to be the whole cap, 0.9 GiB over with the context)."""
    import re

    fractions = []
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", fractions.append)
    (cap,) = re.findall(r"--memory-cap ([\d.]+)", (REPO / "Makefile").read_text())
    _, training_args, _ = cpu_vllm
    device = 139.8 * GIB  # the H200 the check runs on, answering for a 16 GB card
    budget = memory.apply_cap(float(cap), training_args, gpu=True, device_bytes=device)
    assert fractions[0] * device + memory.CUDA_CONTEXT <= budget.bytes <= memory.T4_TOTAL_BYTES


def test_the_cpu_estimate_holds_vllms_own_weights_and_kv_cache_and_no_cuda_context(cpu_vllm, monkeypatch):
    _, training_args, model_args = cpu_vllm
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "2")
    found = memory.estimate(training_args, model_args, gpu=False, device_bytes=24 * GIB)
    assert found.parts["CUDA context"] == 0.0
    assert found.parts["vLLM pool"] == pytest.approx(found.base_bytes + 2 * GIB)  # vLLM's layout of the base
    assert found.base_bytes > found.parts["weights"]  # 4-bit: fp32 block scales on vLLM's side
    on_gpu = memory.estimate(training_args, model_args, gpu=True, device_bytes=16 * GIB)
    assert on_gpu.parts["vLLM pool"] == pytest.approx(0.3 * 16 * GIB)


@pytest.mark.parametrize("gpu", [False, True])
def test_with_vllm_share_base_the_estimate_counts_the_base_once(cpu_vllm, monkeypatch, gpu):
    _, training_args, model_args = cpu_vllm
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "2")
    two = memory.estimate(training_args, model_args, gpu=gpu, device_bytes=16 * GIB)
    one = memory.estimate(training_args, model_args, gpu=gpu, device_bytes=16 * GIB, share_base=True)
    assert two.parts["weights"] > 0 and one.parts["weights"] == 0.0  # the trainer holds views of vLLM's copy
    assert one.parts["vLLM pool"] == two.parts["vLLM pool"]  # vLLM still holds the base (and the KV cache)
    assert one.base_bytes == two.base_bytes > two.parts["weights"]  # vLLM's copy, with its fp32 block scales
    assert one.total < two.total


METER = """
import json
from train.gpu_check.memory import PeakMeter
meter = PeakMeter(gpu=False)
meter.start()
held = bytearray(512 * 1024**2)  # touched pages: resident
print(json.dumps(meter.stop()))
"""


# the meter's process started by a parent holding 1 GiB: Linux keeps ru_maxrss across execve, VmHWM starts afresh
FROM_A_LARGE_PARENT = """
import subprocess, sys
held = bytearray(1024**3)
sys.stdout.write(subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True, check=True).stdout)
"""


@pytest.mark.parametrize("parent", ["small", "large"])
def test_the_cpu_peak_meter_sees_memory_the_process_touched_after_it_started(parent):
    """In a fresh process: the peak RSS is a process-long high-water mark, which this test process set long ago;
    the process's own, not one inherited from the parent that started it."""
    command = [sys.executable, "-c", METER] if parent == "small" else [sys.executable, "-c", FROM_A_LARGE_PARENT, METER]
    result = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
    assert 0.9 * 512 * 1024**2 <= result["run"] <= 1.5 * 512 * 1024**2
    assert result["peak"] >= result["peak_rss"] == pytest.approx(result["rss_before_model"] + result["run"])


def sampling_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name == "gpu-check-memory"]


def test_no_sampling_thread_runs_while_the_trainer_and_vllm_are_built(monkeypatch):
    """vLLM captures CUDA graphs while it loads, and a CUDA call from another thread during a capture can invalidate
    it: the GPU check's meter samples from a thread only after build_trainer returned (here it refuses at once)."""
    import train.grpo
    from train.gpu_check.run import _train_and_measure

    seen = []

    def build_trainer(*args):
        seen.append(len(sampling_threads()))
        raise ConfigError("stop here")

    monkeypatch.setattr(train.grpo, "build_trainer", build_trainer)
    rows = _train_and_measure(None, None, None, None, False, None, {}, None)
    assert seen == [0] and "stop here" in rows["GRPO steps"].fix


def test_the_meter_samples_from_a_thread_only_once_told():
    meter = memory.PeakMeter(gpu=False)
    meter.start()
    assert sampling_threads() == []
    meter.start_sampling()
    assert len(sampling_threads()) == 1
    meter.stop()
    assert sampling_threads() == []


# ---- timing -----------------------------------------------------------------------------------


class Clock:
    """The timing module's clock, moved only by the fake engine's work (the machine's load cannot move it)."""

    def __init__(self):
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Rollouts:
    """An engine's generate as TRL's returns it (prompt ids, completion ids, logprobs, ids), with its sync record;
    the second call re-syncs inside generate, as TRL does after a sleep-mode engine slept."""

    def __init__(self, clock: Clock):
        self.sync_record = SyncRecord(seconds=[0.3])
        self.calls = 0
        self.clock = clock

    def generate(self, prompts, images, num_generations):
        self.calls += 1
        if self.calls == 2:
            self.clock.sleep(0.05)
            self.sync_record.seconds.append(0.05)
        self.clock.sleep(0.02)
        return prompts, [[1, 2, 3], [4, 5]], None, None


def test_rollouts_are_timed_and_counted_without_the_syncs_inside_them(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(timing, "time", clock)
    engine, times = Rollouts(clock), StepTimes()
    stop = time_rollouts(engine, times)
    engine.sync_record.seconds.append(0.2)  # the step's sync, before its rollouts
    engine.generate(prompts=[[0], [0]], images=None, num_generations=2)
    engine.generate(prompts=[[0], [0]], images=None, num_generations=2)
    stop()
    assert "generate" not in vars(engine)  # the instance's own method again
    assert times.tokens == [5, 5] and times.syncs == [0.2, 0.05]  # the sync before the wrap is not the run's
    assert times.generation == pytest.approx([0.02, 0.02]), times.generation  # the inner sync's 0.05 s left out


def test_the_summary_excludes_the_first_step_and_splits_the_time():
    times = StepTimes(steps=[30.0, 10.0, 12.0], generation=[20.0, 6.0, 7.0], tokens=[300, 300, 300])
    times.syncs = [0.5, 0.5, 0.5]
    s = times.summary()
    assert s["s_per_step"] == 11.0 and s["first_step_s"] == 30.0
    assert s["rollout_tokens_per_s"] == pytest.approx(900 / 33.0)
    assert s["generation_share"] == pytest.approx(33 / 52) and s["sync_share"] == pytest.approx(1.5 / 52)
    assert s["rest_share"] == pytest.approx(1 - 34.5 / 52)
    assert StepTimes(steps=[30.0], generation=[20.0], tokens=[300]).summary()["s_per_step"] == 30.0


# ---- the table --------------------------------------------------------------------------------


def rows() -> list[Row]:
    return [
        Row("environment", "CPU x (2 cores)", PASS, "ready"),
        Row("memory", "pre-flight 4.40 GiB | measured", FAIL, "does not fit", "lower per_device_train_batch_size"),
        Row("GRPO steps", "-", NOT_RUN, "not run: an earlier check failed"),
        Row("rollout speed", "engine 3 vs 6 tokens/s", INFO, "information"),
    ]


def test_the_table_is_written_as_json_and_markdown(tmp_path: Path):
    as_json, as_markdown = report.write(rows(), "GPU check: x", tmp_path / "out", {"config": "configs/x.yaml"})
    document = json.loads(as_json.read_text())
    assert document["exit_code"] == 1 and document["config"] == "configs/x.yaml"
    assert [r["status"] for r in document["rows"]] == [PASS, FAIL, NOT_RUN, INFO]
    assert document["rows"][1]["fix"] == "lower per_device_train_batch_size"
    lines = as_markdown.read_text().splitlines()
    assert lines[0] == "# GPU check: x"
    assert (
        "| memory | FAIL | pre-flight 4.40 GiB \\| measured | does not fit | lower per_device_train_batch_size |"
        in lines
    )
    assert "2 of 4 checks did not pass: memory, GRPO steps" in lines


def test_the_exit_status_is_zero_only_when_every_check_passed_or_informed():
    assert report.exit_code([r for r in rows() if r.status in (PASS, INFO)]) == 0
    assert report.exit_code(rows()) == 1
    text = report.text(rows(), "GPU check: x")
    assert "fix: lower per_device_train_batch_size" in text and text.endswith(
        "2 of 4 checks did not pass: memory, GRPO steps"
    )
