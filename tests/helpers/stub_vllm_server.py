"""A stub of vLLM's OpenAI server (standard library only) for the server engine's tests, and to run by hand.

It answers the requests ``train/engines/vllm_server_api.py`` sends as vllm 0.30 does (shapes read in
``vllm/entrypoints/openai/models/serving.py`` and ``serve/engine/serving.py``): ``/v1/models`` lists the base
(with ``max_model_len``) and every loaded adapter (``parent``: the base); loading an adapter remembers it,
unloading one it does not know answers 404 "The lora adapter '<name>' cannot be found.", and a completion
for a model it does not know answers 404 "The model `<name>` does not exist.". ``restart()`` closes it and
starts a fresh one on the same port, which, like a restarted vLLM server, has lost every runtime-loaded
adapter; ``close()`` leaves it down.

By hand (a server that a training run can use, then restart with Ctrl-C and start again)::

    python -m tests.helpers.stub_vllm_server --port 8000
"""

from __future__ import annotations

import argparse
import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BASE = "base"


class StubServer:
    """An HTTP server that records JSON requests and answers like vLLM (or fails as told).

    Like a vLLM server started with or without its flags: ``logprobs_mode`` shapes the top logprobs of a text
    prompt (the logprobs-mode probe; a log-softmax over fixed logits, after temperature or not); ``lora`` is
    "runtime" (VLLM_ALLOW_RUNTIME_LORA_UPDATING and --enable-lora), "no-runtime" (no adapter endpoints: 404)
    or "disabled" (endpoints without --enable-lora: 500); an adapter directory that exists is checked for
    its rank against ``max_lora_rank``; ``dev_mode`` serves /server_info; ``max_model_len`` is listed with the base.
    """

    LOGITS = (2.0, 1.2, 0.7, 0.1, -0.5, -1.3)

    def __init__(
        self,
        *,
        status: int = 200,
        delay: float = 0.0,
        logprobs_mode: str = "processed_logprobs",
        lora: str = "runtime",
        max_lora_rank: int = 16,
        dev_mode: bool = False,
        max_model_len: int | None = 512,
        port: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        self.requests: list[tuple[str, dict | None]] = []
        self.status, self.delay = status, delay
        self.logprobs_mode, self.lora, self.max_lora_rank, self.dev_mode = logprobs_mode, lora, max_lora_rank, dev_mode
        self.max_model_len = max_model_len
        self.adapters: dict[str, str] = {}  # loaded at run time: name -> path (lost on restart)
        self.restarts = 0
        self.host = host
        self._start(port)

    def _start(self, port: int) -> None:
        self.server = ThreadingHTTPServer((self.host, port), self._handler())
        self.port = self.server.server_address[1]
        self.url = f"http://{self.host}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def restart(self) -> None:
        """Down and up again on the same port, without the adapters loaded before (as a restarted vLLM server)."""
        self.close()
        self.adapters = {}
        self.restarts += 1
        for _ in range(50):  # the port is ours again at once (SO_REUSEADDR); retry briefly if not
            try:
                self._start(self.port)
                return
            except OSError:
                time.sleep(0.1)
        self._start(self.port)

    def _handler(self):
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, code: int, payload) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, code: int, message: str, kind: str) -> None:
                self._answer(code, {"error": {"message": message, "type": kind, "param": None, "code": code}})

            def do_GET(self):
                stub.requests.append((self.path, None))
                if self.path.startswith("/server_info"):
                    if not stub.dev_mode:
                        return self._answer(404, {"detail": "Not Found"})
                    config = {"model_config": {"logprobs_mode": stub.logprobs_mode}, "lora_config": None}
                    return self._answer(200, {"vllm_config": config, "vllm_env": {}})
                base = {"id": BASE, "root": "/models/base", "parent": None, "max_model_len": stub.max_model_len}
                loaded = [{"id": name, "root": path, "parent": BASE} for name, path in stub.adapters.items()]
                self._answer(200, {"object": "list", "data": [base, *loaded]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append((self.path, body))
                time.sleep(stub.delay)
                if stub.status != 200:
                    self._answer(stub.status, {"error": {"message": f"stub says {stub.status}"}})
                elif self.path == "/v1/completions":
                    if isinstance(body["prompt"], str):
                        return self._answer(200, stub.probe(body))
                    if body["model"] != BASE and body["model"] not in stub.adapters:
                        return self._error(404, f"The model `{body['model']}` does not exist.", "NotFoundError")
                    self._answer(200, stub.completions(body))
                elif "lora_adapter" in self.path and stub.lora != "runtime":
                    if stub.lora == "no-runtime":
                        return self._answer(404, {"detail": "Not Found"})
                    message = "LoRA is not enabled. Use --enable-lora to enable LoRA."
                    self._answer(500, {"error": {"message": message, "type": "InternalServerError", "code": 500}})
                elif self.path == "/v1/load_lora_adapter" and stub.adapter_problem(body):
                    code, message = stub.adapter_problem(body)
                    self._answer(code, {"error": {"message": message, "code": code}})
                elif self.path == "/v1/unload_lora_adapter" and body["lora_name"] not in stub.adapters:
                    self._error(404, f"The lora adapter '{body['lora_name']}' cannot be found.", "NotFoundError")
                else:
                    if self.path == "/v1/load_lora_adapter":
                        stub.adapters[body["lora_name"]] = body["lora_path"]
                    elif self.path == "/v1/unload_lora_adapter":
                        stub.adapters.pop(body["lora_name"])
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")

        return Handler

    def adapter_problem(self, body: dict) -> tuple[int, str] | None:
        """vLLM's answers to an adapter it cannot load (only for directories that exist: the paths of the
        other tests are placeholders)."""
        config = Path(body["lora_path"], "adapter_config.json")
        if body["lora_path"].startswith("/unreadable/"):
            return 404, f"Loading lora {body['lora_name']} failed: No adapter found for {body['lora_path']}"
        if config.is_file() and json.loads(config.read_text())["r"] > self.max_lora_rank:
            rank = json.loads(config.read_text())["r"]
            return 500, f"LoRA rank {rank} is greater than max_lora_rank {self.max_lora_rank}."
        return None

    def probe(self, body: dict) -> dict:
        """One token's top-5 logprobs as ``logprobs_mode`` returns them at the request's temperature."""
        scale = 1 / body["temperature"] if self.logprobs_mode.startswith("processed") else 1.0
        scaled = [v * scale for v in self.LOGITS]
        norm = math.log(sum(math.exp(v) for v in scaled))
        values = scaled if self.logprobs_mode.endswith("logits") else [v - norm for v in scaled]
        top = {f"token_id:{i}": value for i, value in enumerate(values[:5])}
        return {"choices": [{"index": 0, "text": "", "logprobs": {"top_logprobs": [top]}}]}

    @staticmethod
    def completions(body: dict) -> dict:
        """Completion j of prompt p is [p[0], 100 + j], logprob -(j+1)/10 per token."""
        choices = []
        for prompt in body["prompt"]:
            for j in range(body["n"]):
                tokens = [prompt[0], 100 + j]
                choices.append(
                    {
                        "index": len(choices),
                        "text": "",
                        "token_ids": tokens,
                        "prompt_token_ids": prompt,
                        "logprobs": {
                            "tokens": [f"token_id:{t}" for t in tokens],
                            "token_logprobs": [-(j + 1) / 10] * 2,
                        },
                    }
                )
        return {"choices": choices}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--max-model-len", type=int, default=512)
    args = parser.parse_args()
    stub = StubServer(port=args.port, host=args.host, max_model_len=args.max_model_len)
    print(f"stub vLLM server on {stub.url} (Ctrl-C stops it)", flush=True)
    try:
        stub.thread.join()
    except KeyboardInterrupt:
        stub.close()


if __name__ == "__main__":
    main()
