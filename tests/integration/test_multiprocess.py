"""Multi-process training with accelerate: two CPU processes (DDP over gloo), the documented command (docs/scaling-out.md).

Checks what must happen once, not once per process: one set of checkpoints, one run.json, rollout
logs holding every completion of every step exactly once (gathered from both processes), and a
resume from the last checkpoint that adds only the new step. The accelerate configs for GPUs and
DeepSpeed are shipped and parse-tested in tests/train/config/test_shipped_configs.py (not run: no GPUs, no
DeepSpeed on these machines).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest

import rewards
from tests.helpers import BIN, REPO
from tests.helpers.vllm_server import free_port


def accelerate_launch(*train_args: str, timeout: int = 2400) -> subprocess.CompletedProcess:
    """The documented command (docs/): accelerate launch --config_file configs/accelerate/cpu-2proc.yaml train/grpo.py ..."""
    command = [
        str(BIN / "accelerate"), "launch", "--config_file", "configs/accelerate/cpu-2proc.yaml",
        "--main_process_port", str(free_port()), "train/grpo.py", *train_args,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env)


SERVER_CONFIG = "configs/cpu-smollm2-vllm-server.yaml"


def rollouts_answered(stub) -> int:
    return sum(
        1 for path, body in list(stub.requests) if path == "/v1/completions" and isinstance(body["prompt"], list)
    )


@pytest.mark.slow
def test_two_processes_check_the_servers_once_and_both_stop_on_a_refusal(tmp_path):
    """The start checks run on the main process only (one probe per server, not one per process) and every
    process stops on the verdict, before any model loads."""
    from tests.helpers.stub_vllm_server import StubServer

    stub = StubServer(logprobs_mode="raw_logprobs")  # like a server started without --logprobs-mode
    out = tmp_path / "run"
    try:
        result = accelerate_launch(
            "--config", SERVER_CONFIG, "--vllm_server_urls", stub.url, "--output_dir", str(out), timeout=900
        )  # fmt: skip
    finally:
        stub.close()
    assert result.returncode != 0
    assert f"error: vLLM server {stub.url} does not run as this run needs: it returns raw_logprobs" in result.stderr
    probes = [body["temperature"] for path, body in stub.requests if path == "/v1/completions"]
    loads = [path for path, _ in stub.requests if path == "/v1/load_lora_adapter"]
    assert probes == [1.0, 0.5] and len(loads) == 1, stub.requests  # one process asked
    assert "Loading weights" not in result.stderr and not out.exists()


@pytest.mark.slow
def test_two_processes_stop_promptly_when_the_main_process_fails(tmp_path):
    """Only the main process talks to the servers; when a server goes down it fails alone while the other process
    waits in a collective. The launcher must end the run (exit non-zero, the error with the step) long before
    ddp_timeout (3600 s here)."""
    import threading
    import time

    from tests.helpers.stub_vllm_server import StubServer

    stub = StubServer()
    out = tmp_path / "run"
    stopped: list[float] = []

    def stop_after_first_rollouts() -> None:
        while rollouts_answered(stub) < 1 and not stopped:
            time.sleep(0.2)
        time.sleep(0.5)
        stub.close()
        stopped.append(time.monotonic())

    watcher = threading.Thread(target=stop_after_first_rollouts, daemon=True)
    watcher.start()
    result = accelerate_launch(
        "--config", SERVER_CONFIG, "--vllm_server_urls", stub.url, "--per_device_train_batch_size", "4",
        "--max_completion_length", "8", "--dataset_size", "16", "--max_steps", "3", "--output_dir", str(out),
        "--vllm_server_retries", "1", "--log_rollouts", "false", timeout=1800,
    )  # fmt: skip
    ended = time.monotonic()
    if not stopped:
        stopped.append(ended)
        stub.close()
    assert result.returncode != 0, result.stderr[-3000:]
    assert f"error: vLLM server {stub.url} is unreachable" in result.stderr, result.stderr[-3000:]
    assert "[the run stopped in training step 2 (1 completed)" in result.stderr
    print(f"the launch ended {ended - stopped[0]:.0f} s after the server went down")
    assert ended - stopped[0] < 600, f"the run took {ended - stopped[0]:.0f} s to end after the server went down"


def rollout_samples(run_dir: Path):
    from inspect_ai.log import read_eval_log

    return [s for path in sorted((run_dir / "rollouts").glob("*.eval")) for s in read_eval_log(str(path)).samples]


@pytest.mark.slow
def test_two_processes_train_once_and_resume(tmp_path):
    out = tmp_path / "run"
    common = (
        "--config", "configs/cpu-smollm2.yaml", "--per_device_train_batch_size", "4", "--num_generations", "4",
        "--max_completion_length", "32",
        "--dataset_size", "16", "--save_steps", "1", "--output_dir", str(out),
    )  # fmt: skip
    result = accelerate_launch(*common, "--max_steps", "2")
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.count("[verigrpo] 2 steps") == 1  # the summary: main process only

    run = json.loads((out / "run.json").read_text())
    assert run["global_step"] == 2
    # two processes really ran: the global generation batch is 4 completions per process x 2 processes
    assert run["config"]["training"]["generation_batch_size"] == 8
    for step in (1, 2):
        checkpoint = out / f"checkpoint-{step}"
        assert (checkpoint / "adapter_model.safetensors").is_file()
        assert json.loads((checkpoint / "run.json").read_text())["global_step"] == step
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]

    samples = rollout_samples(out)
    keys = Counter((s.metadata["step"], s.metadata["group"], s.epoch) for s in samples)
    assert max(keys.values()) == 1, "a rollout was logged twice"
    assert set(keys) == {(step, group, pos) for step in (1, 2) for group in (0, 1) for pos in (1, 2, 3, 4)}
    assert len({s.id for s in samples if s.metadata["step"] == 1}) == 2  # two prompts (one per group) per step
    # each completion's "why paid" columns were gathered in the order of its completion (rewards.reward_log)
    for sample in samples:
        verdict, paid = rewards.grade(sample.output.completion, sample.target), sample.scores["train_correctness"]
        assert (paid.answer, paid.explanation) == (verdict.answer, verdict.explanation), sample.output.completion

    # resume from the last checkpoint for one more step, still two processes: only step 3 is added
    result = accelerate_launch(*common, "--max_steps", "3", "--resume_from_checkpoint", str(out / "checkpoint-2"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert "resumed from checkpoint-2" in result.stdout
    assert json.loads((out / "run.json").read_text())["global_step"] == 3
    samples = rollout_samples(out)
    keys = Counter((s.metadata["step"], s.metadata["group"], s.epoch) for s in samples)
    assert max(keys.values()) == 1 and len(keys) == 24
    assert {step for step, _, _ in keys} == {1, 2, 3}


@pytest.mark.slow
def test_two_processes_roll_out_through_a_vllm_server(tmp_path):
    """Both processes' prompts go to the server once (from the main process); each rollout is logged once."""
    from tests.helpers.vllm_server import VLLMServerProcess
    from train.config.vllm_install import installed_vllm

    if not installed_vllm():
        if os.environ.get("VERIGRPO_REQUIRE_VLLM") == "1":
            pytest.fail("vLLM's CPU build is needed")
        pytest.skip("vLLM's CPU build is needed")
    server = VLLMServerProcess(tmp_path / "server.log")
    out = tmp_path / "run"
    try:
        server.start()
        result = accelerate_launch(
            "--config", "configs/cpu-smollm2-vllm-server.yaml", "--vllm_server_urls", server.url,
            "--per_device_train_batch_size", "4", "--max_completion_length", "32", "--dataset_size", "16",
            "--save_steps", "1", "--max_steps", "2", "--output_dir", str(out),
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr[-4000:] + server.log_tail()
    run = json.loads((out / "run.json").read_text())
    assert run["config"]["training"]["generation_batch_size"] == 8 and run["rollout_engine"]["mode"] == "server"
    tag = run["rollout_engine"]["run_tag"]
    samples = rollout_samples(out)
    keys = Counter((s.metadata["step"], s.metadata["group"], s.epoch) for s in samples)
    assert max(keys.values()) == 1 and len(keys) == 16
    assert {(s.metadata["step"], s.metadata["adapter"]) for s in samples} == {
        (1, f"verigrpo-{tag}-v1"),
        (2, f"verigrpo-{tag}-v2"),
    }
    steps = [e for e in json.loads((out / "log_history.json").read_text()) if "grad_norm" in e]
    assert all(e["sampling/sampling_logp_difference/mean"] < 1e-3 for e in steps), steps
