"""The server engine in real runs: a bad URL stops the trainer before any model loads; slow (``make test-slow``):
a real CPU vLLM server on 127.0.0.1 started by a fixture, two training steps through it, a 4-bit policy through
a 4-bit server, the on-policy check, and a server killed mid-run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO
from tests.helpers.vllm_server import VLLMServerProcess
from train.config.vllm_install import installed_vllm
from train.engines.vllm_server_api import adapter_name

SERVER_CONFIG = "configs/cpu-smollm2-vllm-server.yaml"


def run_training(*argv: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "train/grpo.py", *argv], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env
    )


def test_a_bad_server_url_stops_the_run_before_any_model_loads(tmp_path, dead_url):
    url = dead_url
    out = tmp_path / "run"
    result = run_training(
        "--config", SERVER_CONFIG, "--vllm_server_urls", url, "--vllm_server_timeout", "2", "--output_dir", str(out),
    )  # fmt: skip
    assert result.returncode == 3, result.stderr[-3000:]
    assert f"error: vLLM server(s) {url} not ready after 2 s (vllm_server_timeout)" in result.stderr
    assert "is unreachable" in result.stderr
    assert "Loading weights" not in result.stderr and not out.exists()


@pytest.mark.slow
def test_a_run_survives_a_restarted_server_and_stops_naming_the_step_when_it_stays_down(tmp_path):
    """A real training run against the stub server (tests/helpers/stub_vllm_server.py): the stub restarts after
    step 1's rollouts (losing the runtime-loaded adapter, as vLLM does) and the run goes on; it goes down for good
    after step 2's, and the run stops at step 3's sync with the URL and the step, checkpoints 1-2 complete."""
    import threading

    from tests.helpers.stub_vllm_server import StubServer

    stub = StubServer()
    out = tmp_path / "run"
    done = threading.Event()

    def rollouts() -> int:
        return sum(1 for path, body in list(stub.requests) if path == "/v1/completions" and body["prompt"][0] != "O")

    def restart_then_stop() -> None:
        for action in (stub.restart, stub.close):
            wanted = rollouts() + 1
            while rollouts() < wanted and not done.wait(0.2):
                pass
            if done.is_set():
                return
            time.sleep(0.5)  # the answer is on its way: act between this step's rollouts and the next sync
            action()

    watcher = threading.Thread(target=restart_then_stop, daemon=True)
    watcher.start()
    try:
        result = run_training(
            "--config", SERVER_CONFIG, "--vllm_server_urls", stub.url, "--max_steps", "4", "--save_steps", "1",
            "--output_dir", str(out), "--max_completion_length", "8", "--dataset_size", "16",
            "--vllm_server_retries", "1", "--log_rollouts", "false",
        )  # fmt: skip
    finally:
        done.set()
        watcher.join(timeout=10)
        try:
            stub.close()
        except OSError:
            pass
    assert result.returncode == 3, result.stderr[-3000:]
    assert stub.restarts == 1
    assert "no longer knows adapter" in result.stderr  # the restart, recovered from
    error = next(line for line in result.stderr.splitlines() if line.startswith("error: "))
    assert error.startswith(f"error: vLLM server {stub.url} is unreachable (loading adapter verigrpo-"), error
    assert "-v3 from" in error and "[the run stopped in training step 3 (2 completed)" in error, error
    assert sorted(p.name for p in out.glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2"]
    assert not (out / "run.json").exists()


# ---- slow: a real vLLM server ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory):
    """The CPU vLLM server (small model, --enable-lora) on a free port; torn down after the module."""
    if not installed_vllm() or not (REPO / "models/smollm2-135m-instruct/config.json").is_file():
        problem = "vLLM's CPU build and the prepared CPU model are needed (make setup)"
        if os.environ.get("VERIGRPO_REQUIRE_VLLM") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    server = VLLMServerProcess(tmp_path_factory.mktemp("vllm") / "server.log")
    try:
        server.start()
        print(f"vLLM server {server.url} answered after {server.start_seconds:.0f} s")
        yield server
    finally:
        server.stop()


def rollout_samples(run_dir):
    from inspect_ai.log import read_eval_log

    return [s for path in sorted((run_dir / "rollouts").glob("*.eval")) for s in read_eval_log(str(path)).samples]


@pytest.mark.slow
def test_two_steps_through_a_vllm_server(vllm_server, tmp_path):
    """The documented command (docs/) against a real server: rollouts on-policy, adapters versioned in run.json and logs."""
    out = tmp_path / "run"
    result = run_training(
        "--config", SERVER_CONFIG, "--vllm_server_urls", vllm_server.url, "--max_steps", "2", "--save_steps", "1",
        "--output_dir", str(out), "--max_completion_length", "32", "--dataset_size", "16",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:] + vllm_server.log_tail()
    assert "[verigrpo] 2 steps" in result.stdout
    steps = [e for e in json.loads((out / "log_history.json").read_text()) if "grad_norm" in e]
    assert len(steps) == 2
    # vLLM's logprobs of the sampled tokens vs the trainer's, fp32 on both sides: the rollouts are on-policy
    assert all(e["sampling/sampling_logp_difference/mean"] < 1e-3 for e in steps), steps
    run = json.loads((out / "run.json").read_text())
    engine = run["rollout_engine"]
    assert engine["mode"] == "server" and engine["servers"] == [vllm_server.url]
    tag = engine["run_tag"]
    assert engine["adapter_versions_loaded"] == 2 and engine["rollout_adapter"] == adapter_name(tag, 2)
    for step in (1, 2):
        checkpoint = out / f"checkpoint-{step}"
        assert (checkpoint / "adapter_model.safetensors").is_file()
        assert json.loads((checkpoint / "run.json").read_text())["rollout_engine"]["rollout_adapter"] == adapter_name(
            tag, step
        )
    samples = rollout_samples(out)
    assert len(samples) == 16  # 2 steps x 8 completions
    assert {(s.metadata["step"], s.metadata["adapter"]) for s in samples} == {
        (1, adapter_name(tag, 1)),
        (2, adapter_name(tag, 2)),
    }
    assert list((out / "vllm-adapters").iterdir()) == []  # the last version's files go at the end


@pytest.mark.slow
def test_a_4bit_policy_rolls_out_through_a_4bit_server(tmp_path):
    """The GPU recipes' path: the server quantizes the base in flight (bitsandbytes, bf16), the trainer loads
    it 4-bit the same way; two steps, rollouts within the 4-bit tolerance of the trainer's logprobs."""
    if not installed_vllm():
        pytest.skip("vLLM's CPU build is needed")
    server = VLLMServerProcess(tmp_path / "server.log", four_bit=True)
    out = tmp_path / "run"
    try:
        server.start()
        result = run_training(
            "--config", SERVER_CONFIG, "--vllm_server_urls", server.url, "--load_in_4bit", "true",
            "--dtype", "bfloat16", "--bnb_4bit_quant_type", "nf4", "--use_bnb_nested_quant", "true",
            "--max_steps", "2", "--output_dir", str(out), "--max_completion_length", "32", "--dataset_size", "16",
        )  # fmt: skip
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr[-3000:] + server.log_tail()
    steps = [e for e in json.loads((out / "log_history.json").read_text()) if "grad_norm" in e]
    # bf16 kernels on both sides differ by ~0.03-0.05 per token (scripts/check_on_policy.py: 4-bit tolerance 0.08)
    assert len(steps) == 2 and all(e["sampling/sampling_logp_difference/mean"] < 0.08 for e in steps), steps
    assert json.loads((out / "run.json").read_text())["config"]["model"]["load_in_4bit"] is True


@pytest.mark.slow
def test_a_real_server_without_processed_logprobs_is_refused_before_any_model_loads(tmp_path):
    """vLLM's default logprobs mode (raw, before temperature) would bias TRL's importance-sampling correction
    without an error: the pool's start check finds it with its two-temperature probe and names the flag."""
    if not installed_vllm():
        pytest.skip("vLLM's CPU build is needed")
    server = VLLMServerProcess(tmp_path / "server.log", logprobs_mode=None)
    out = tmp_path / "run"
    try:
        server.start()
        result = run_training("--config", SERVER_CONFIG, "--vllm_server_urls", server.url, "--output_dir", str(out))
    finally:
        server.stop()
    assert result.returncode == 3, result.stderr[-3000:] + server.log_tail()
    assert f"error: vLLM server {server.url} does not run as this run needs: it returns raw_logprobs" in result.stderr
    assert "add --logprobs-mode processed_logprobs" in result.stderr
    assert "Loading weights" not in result.stderr and not out.exists()


@pytest.mark.slow
def test_the_server_scores_tokens_as_the_policy_does(vllm_server, tmp_path):
    report_path = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "scripts/check_on_policy.py", "--config", SERVER_CONFIG, "--vllm_server_urls",
         vllm_server.url, "--max_steps", "1", "--output_dir", str(tmp_path / "run"), "--json", str(report_path)],
        cwd=REPO, capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert report_path.is_file(), result.stderr[-3000:] + vllm_server.log_tail()
    report = json.loads(report_path.read_text())
    print(json.dumps(report))
    assert report["engine"] == "server" and report["precision"] == "fp32" and report["tolerance_mean"] == 1e-3
    assert report["steps"] == 1 and report["adapter_versions"] == [1, 2]
    assert report["synced_vs_policy"]["mean"] <= 1e-3, report
    assert report["stale_vs_policy"]["mean"] > 2e-3, report
    assert report["ok"] and result.returncode == 0


@pytest.mark.slow
def test_a_server_killed_mid_run_stops_training_and_keeps_completed_checkpoints(tmp_path):
    if not installed_vllm():
        pytest.skip("vLLM's CPU build is needed")
    server = VLLMServerProcess(tmp_path / "server.log")
    out = tmp_path / "run"
    try:
        server.start()
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        trainer = subprocess.Popen(
            [sys.executable, "train/grpo.py", "--config", SERVER_CONFIG, "--vllm_server_urls", server.url,
             "--max_steps", "6", "--save_steps", "1", "--output_dir", str(out), "--max_completion_length", "32",
             "--dataset_size", "32", "--vllm_server_retries", "1"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 1800
        while not (out / "checkpoint-1" / "run.json").is_file() and trainer.poll() is None:
            assert time.monotonic() < deadline, "no checkpoint-1 within 30 min"
            time.sleep(1)
        server.stop()  # the whole process group, mid-run
        stdout, stderr = trainer.communicate(timeout=900)
    finally:
        server.stop()
    assert trainer.returncode == 3, stderr[-3000:]
    assert f"error: vLLM server {server.url}" in stderr, stderr[-3000:]
    assert not (out / "run.json").exists()  # the run did not finish, and does not pretend to
    from safetensors.torch import load_file

    completed = sorted(out.glob("checkpoint-*"))
    assert completed and completed[0].name == "checkpoint-1"
    for checkpoint in completed:  # every checkpoint written before the failure is complete and loads
        assert load_file(str(checkpoint / "adapter_model.safetensors"))
        state = json.loads((checkpoint / "trainer_state.json").read_text())
        assert json.loads((checkpoint / "run.json").read_text())["global_step"] == state["global_step"]
