"""A CPU vLLM OpenAI server for tests: the small model with runtime LoRA loading, on a free local port.

``server_command(port)`` is the command docs/scaling-out.md and the header of
configs/cpu-smollm2-vllm-server.yaml show (with port 8000; tests/train/engines/test_server_engine.py checks the
config's copy). ``VLLMServerProcess`` starts it in its own process group, waits a bounded time for
``/v1/models`` to answer, and always tears the whole group down; its log is kept for failure messages.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.helpers import REPO

MODEL = "models/smollm2-135m-instruct"  # relative: the command as docs/scaling-out.md and the config header show it
START_TIMEOUT_S = 900  # measured ~30 s quiet; generous for a loaded 2-core machine
SERVER_ENV = {"VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True", "VLLM_CPU_KVCACHE_SPACE": "1"}


def server_command(
    port: int,
    python: str = "python",
    four_bit: bool = False,
    logprobs_mode: str | None = "processed_logprobs",
    model: str = MODEL,
    max_model_len: int = 512,
) -> list[str]:
    """fp32 by default; ``four_bit``: vLLM quantizes the base in flight (bitsandbytes works in bf16 on CPU);
    ``logprobs_mode=None`` leaves the flag out (vLLM's default, raw_logprobs: a misconfigured server); ``model`` and
    ``max_model_len``: another base (the tool model) and room for longer sequences (a tool run's)."""
    precision = ["--dtype", "bfloat16", "--quantization", "bitsandbytes"] if four_bit else ["--dtype", "float32"]
    mode = ["--logprobs-mode", logprobs_mode] if logprobs_mode else []
    return [
        python, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--host", "127.0.0.1",
        "--port", str(port), *precision, "--enable-lora", "--max-lora-rank", "16", "--max-loras", "2",
        "--max-model-len", str(max_model_len), *mode,
    ]  # fmt: skip


def free_port() -> int:
    """A port nothing listens on now (the kernel's pick); the server binds it moments later."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class VLLMServerProcess:
    def __init__(
        self,
        log_path: Path,
        four_bit: bool = False,
        logprobs_mode: str | None = "processed_logprobs",
        model: str = MODEL,
        max_model_len: int = 512,
    ) -> None:
        self.four_bit, self.logprobs_mode = four_bit, logprobs_mode
        self.model, self.max_model_len = model, max_model_len
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.start_seconds: float | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no server log)"

    def start(self) -> VLLMServerProcess:
        env = {
            **os.environ,
            **SERVER_ENV,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_CPU_OMP_THREADS_BIND": "0-1" if (os.cpu_count() or 1) >= 2 else "0",
            "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
        }
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                server_command(
                    self.port, sys.executable, self.four_bit, self.logprobs_mode, self.model, self.max_model_len
                ),
                cwd=REPO,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: teardown reaches the engine core too
            )
        deadline = started + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the vLLM server exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/v1/models", timeout=5).status_code == 200:
                    self.start_seconds = time.monotonic() - started
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"the vLLM server did not answer within {START_TIMEOUT_S} s:\n{self.log_tail()}")

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it after 30 s; idempotent."""
        if self.process is None:
            return
        for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 30)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        try:  # stragglers of the group (the engine core) after the leader exited
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
