"""HTTP client for vLLM's OpenAI-compatible servers: load/unload LoRA adapters, token-id completions.

The server engine (``train/engines/server.py``) plugs this into TRL; this module needs only httpx, so
config validation and the CLI's error handling import it without TRL. Request and response shapes are
checked against vllm 0.27.1 (``entrypoints/openai/completion/protocol.py``, ``entrypoints/serve/lora/``):
prompts as token ids, ``logprobs=0`` (the sampled token's logprob), ``return_token_ids`` (prompt and
completion ids per choice; choices are prompt-major), ``/v1/load_lora_adapter`` (a new integer id per
name) and ``/v1/unload_lora_adapter``. Every failure is a ``ServerError`` that names the server's URL.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from train.engines.vllm_lora import VLLM_LORA_RANKS, max_lora_rank

logger = logging.getLogger(__name__)
ADAPTER_PREFIX = "verigrpo"
LOGPROBS_MODE = "processed_logprobs"  # after temperature: what TRL's importance-sampling correction expects
# The logprobs-mode probe: two one-token completions of this prompt on the base model, top-5 logprobs at two
# temperatures. processed_logprobs are log_softmax(logits / T), so the gap between two tokens' logprobs scales
# with 1/T; raw_logprobs do not change with T; the *_logits modes are not normalised (their top-5 "probabilities"
# sum past 1). Greedy requests and prompt_logprobs cannot tell the modes apart (vLLM returns unscaled values for
# both), and batched prompt_logprobs can kill a CPU engine, so the probe samples one token, one request at a time.
PROBE_PROMPT = "Once upon a time, in a small village by the sea, there lived a"
PROBE_TEMPERATURES = (1.0, 0.5)


def server_flags(lora_rank: int | None = None) -> str:
    """What each server must run with (in every error that says a server is misconfigured): ``--max-lora-rank``
    is ``lora_r`` rounded up to a rank vLLM accepts (``train/engines/vllm_lora.py``)."""
    rank = max_lora_rank(lora_rank) if lora_rank else f"<lora_r rounded up to one of {VLLM_LORA_RANKS}>"
    return (
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True python -m vllm.entrypoints.openai.api_server --model <base> "
        f"--enable-lora --max-lora-rank {rank} --logprobs-mode {LOGPROBS_MODE}"
    )


SERVER_FLAGS = server_flags()


def not_an_endpoint(detail: str) -> bool:
    """Whether a 404's body is the web framework's (no such route: ``{"detail":"Not Found"}``), not vLLM's answer
    about an adapter or a model it does not know (``The lora adapter 'x' cannot be found.``)."""
    return "cannot be found" not in detail and "does not exist" not in detail and "No adapter found" not in detail


class ServerError(RuntimeError):
    """A vLLM server was unreachable, too slow, or answered with an error; the message names its URL.
    ``status`` and ``detail`` are the HTTP status and body of an error answer (None and "" otherwise)."""

    def __init__(self, message: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.status, self.detail = status, detail


def normalize_url(url: str) -> str:
    """``http(s)://host:port[/prefix]`` without a trailing slash or ``/v1``; ValueError says what is wrong."""
    text = str(url).strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"vllm_server_urls: {url!r} is not an http(s) URL with a host (e.g. http://127.0.0.1:8000)")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"vllm_server_urls: {url!r} has an invalid port") from None
    if parts.query or parts.fragment:
        raise ValueError(f"vllm_server_urls: {url!r} must not carry a query or fragment")
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    netloc = parts.hostname if port is None else f"{parts.hostname}:{port}"
    if ":" in parts.hostname:  # IPv6 literal
        netloc = f"[{parts.hostname}]" + ("" if port is None else f":{port}")
    return f"{parts.scheme}://{netloc}{path}"


def adapter_name(run_tag: str, version: int) -> str:
    """The name an adapter version is loaded under: unique per run (the tag) and per sync (one per optimizer step)."""
    return f"{ADAPTER_PREFIX}-{run_tag}-v{version}"


def new_run_tag() -> str:
    """8 hex characters: two runs (or a run and its resume) sharing a server never reuse a name."""
    return uuid.uuid4().hex[:8]


@dataclass(frozen=True)
class ServerSettings:
    """The servers and how patiently to talk to them."""

    urls: tuple[str, ...]
    adapter_dir: str  # where adapter versions are written; every server must be able to read it
    request_timeout: float = 600.0  # seconds for one request (a generation of a whole batch share)
    retries: int = 3  # extra attempts after a connection failure (never after a timeout or an HTTP error)
    base_model: str | None = None  # recorded, and compared with what each server serves
    lora_rank: int | None = None  # the adapter's rank: the servers' --max-lora-rank must hold it
    tool_turns: bool = False  # a tool run: TRL's tool loop asks again after each tool result (check_lengths)


def completion_payload(
    prompts: list[list[int]],
    *,
    model: str,
    n: int,
    repetition_penalty: float,
    temperature: float,
    top_p: float,
    top_k: int,
    min_p: float | None,
    max_tokens: int,
    logprobs: int | None,
    structured_outputs_regex: str | None = None,
    generation_kwargs: dict | None = None,
) -> dict:
    """The ``/v1/completions`` body for token-id prompts that returns token ids and per-token logprobs."""
    body = {
        "model": model,
        "prompt": [list(map(int, p)) for p in prompts],
        "n": n,
        "repetition_penalty": repetition_penalty,
        "temperature": temperature,
        "top_p": top_p,
        "top_k": top_k,
        "min_p": 0.0 if min_p is None else min_p,
        "max_tokens": max_tokens,
        "logprobs": 0 if logprobs is None else logprobs,
        "return_token_ids": True,
        "return_tokens_as_token_ids": True,
        "skip_special_tokens": False,
    }
    if structured_outputs_regex is not None:
        body["structured_outputs"] = {"regex": structured_outputs_regex}
    body.update(generation_kwargs or {})
    return body


def parse_completions(response: dict, num_prompts: int, n: int, url: str) -> dict:
    """TRL's generate() dict from a ``/v1/completions`` response: choices are prompt-major (index order)."""
    choices = sorted(response.get("choices") or [], key=lambda c: c["index"])
    if len(choices) != num_prompts * n:
        raise ServerError(f"vLLM server {url} returned {len(choices)} completions for {num_prompts} prompts x n={n}")
    prompt_ids, completion_ids, logprobs, logprob_ids = [], [], [], []
    for index, choice in enumerate(choices):
        tokens, lp = choice.get("token_ids"), choice.get("logprobs")
        if tokens is None or lp is None or choice.get("prompt_token_ids") is None:
            raise ServerError(
                f"vLLM server {url} returned completions without token ids or logprobs: it ignores "
                "return_token_ids/logprobs (vLLM too old?). verigrpo needs vLLM >= 0.26."
            )
        if len(lp["token_logprobs"]) != len(tokens):
            raise ServerError(f"vLLM server {url}: {len(tokens)} tokens but {len(lp['token_logprobs'])} logprobs")
        if index % n == 0:
            prompt_ids.append(choice["prompt_token_ids"])
        completion_ids.append(tokens)
        logprobs.append([[value] for value in lp["token_logprobs"]])
        logprob_ids.append([[token] for token in tokens])
    return {
        "prompt_ids": prompt_ids,
        "completion_ids": completion_ids,
        "logprobs": logprobs,
        "logprob_token_ids": logprob_ids,
    }


def logprobs_mode_from_probe(at_t1: dict[str, float], at_low: dict[str, float]) -> tuple[str, str]:
    """(mode, evidence) from the top logprobs of one token at temperature 1 and at PROBE_TEMPERATURES[1].

    >>> import math
    >>> logits = {"a": 2.0, "b": 1.0, "c": 0.0}
    >>> def log_softmax(scaled):
    ...     norm = math.log(sum(math.exp(v) for v in scaled.values()))
    ...     return {k: v - norm for k, v in scaled.items()}
    >>> raw = log_softmax(logits)
    >>> logprobs_mode_from_probe(raw, log_softmax({k: v / 0.5 for k, v in logits.items()}))[0]
    'processed_logprobs'
    >>> logprobs_mode_from_probe(raw, raw)[0]
    'raw_logprobs'
    >>> logprobs_mode_from_probe(logits, {k: v / 0.5 for k, v in logits.items()})[0]
    'logits'
    """
    low = PROBE_TEMPERATURES[1]
    mass = sum(math.exp(min(v, 50.0)) for v in at_t1.values())
    if mass > 1.0 + 1e-3:
        return "logits", f"its top-5 'probabilities' sum to {mass:.3g}, so they are not logprobs"
    common = sorted(set(at_t1) & set(at_low), key=lambda token: -at_t1[token])
    if not common:
        return "unknown", "the two probe answers share no token"
    best = common[0]
    ratios = sorted(
        (at_low[best] - at_low[t]) / (at_t1[best] - at_t1[t])
        for t in common[1:]
        if at_t1[best] - at_t1[t] > 0.05 and math.isfinite(at_low[t])
    )
    if not ratios:
        return "unknown", "the probe's top tokens are too close to compare"
    ratio = ratios[len(ratios) // 2]
    evidence = f"logprob gaps {ratio:.2f}x wider at temperature {low} than at 1; after temperature: {1 / low:g}x"
    return ("processed_logprobs" if abs(ratio - 1 / low) < abs(ratio - 1.0) else "raw_logprobs"), evidence


class VLLMServer:
    """One vLLM OpenAI-compatible server: bounded requests, errors that name the URL."""

    def __init__(self, url: str, request_timeout: float, retries: int) -> None:
        self.url = normalize_url(url)
        self.retries = retries
        self.request_timeout = request_timeout
        self._http = httpx.Client(
            base_url=self.url, timeout=httpx.Timeout(request_timeout, connect=min(10.0, request_timeout))
        )

    def request(self, method: str, path: str, what: str, body: dict | None = None, retries: int | None = None):
        """JSON (or text) of a 2xx answer; ServerError otherwise. Only connection failures are retried."""
        attempts = 1 + (self.retries if retries is None else retries)
        for attempt in range(attempts):
            try:
                response = self._http.request(method, path, json=body)
                break
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                if attempt + 1 == attempts:
                    raise ServerError(
                        f"vLLM server {self.url} is unreachable ({what}: {type(exc).__name__}: {exc}; {attempts} "
                        f"attempt(s)). Check that it is running and that this machine can reach it, or fix "
                        "vllm_server_urls."
                    ) from None
                time.sleep(min(2.0**attempt, 10.0))
            except httpx.TimeoutException:
                raise ServerError(
                    f"vLLM server {self.url} did not answer within {self.request_timeout:.0f} s ({what}). It is "
                    "overloaded or stuck; if it is just slow, raise vllm_server_request_timeout, and with several "
                    "training processes ddp_timeout with it (the others wait for the main process meanwhile; "
                    "pre-flight says how far)."
                ) from None
            except httpx.HTTPError as exc:
                raise ServerError(f"vLLM server {self.url}: {what} failed: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            detail = response.text[:500]
            hint = ""
            if response.status_code == 404 and "lora_adapter" in path and not_an_endpoint(detail):
                hint = f" The server has no runtime LoRA endpoints: start it as {SERVER_FLAGS}."
            raise ServerError(
                f"vLLM server {self.url}: {what} failed with HTTP {response.status_code}: {detail}.{hint}",
                status=response.status_code,
                detail=detail,
            )
        if "json" in response.headers.get("content-type", ""):
            return response.json()
        return response.text

    def models(self) -> list[dict]:
        return self.request("GET", "/v1/models", "listing models", retries=0)["data"]

    def adapters(self) -> list[str]:
        """The LoRA adapters the server serves now (``/v1/models`` lists each with its base as ``parent``)."""
        return [m["id"] for m in self.request("GET", "/v1/models", "listing models")["data"] if m.get("parent")]

    def server_info(self) -> dict | None:
        """vLLM's configuration from ``/server_info`` (only with VLLM_SERVER_DEV_MODE=1 on the server), else None."""
        try:
            info = self.request("GET", "/server_info?config_format=json", "reading /server_info", retries=0)
        except ServerError as exc:
            if exc.status == 404:
                return None
            raise
        return info if isinstance(info, dict) and isinstance(info.get("vllm_config"), dict) else None

    def top_logprobs(self, model: str, temperature: float) -> dict[str, float]:
        """The top-5 logprobs of one sampled token after PROBE_PROMPT (keys ``token_id:N``)."""
        body = {
            "model": model,
            "prompt": PROBE_PROMPT,
            "max_tokens": 1,
            "temperature": temperature,
            "top_p": 1.0,
            "top_k": 0,
            "min_p": 0.0,
            "repetition_penalty": 1.0,
            "logprobs": 5,
            "seed": 0,
            "return_tokens_as_token_ids": True,
        }
        what = f"probing its logprobs mode at temperature {temperature}"
        try:
            return self.request("POST", "/v1/completions", what, body, retries=0)["choices"][0]["logprobs"][
                "top_logprobs"
            ][0]
        except (KeyError, IndexError, TypeError):
            raise ServerError(f"vLLM server {self.url}: {what}: the answer has no top logprobs") from None

    def load_adapter(self, name: str, path: str) -> None:
        self.request(
            "POST",
            "/v1/load_lora_adapter",
            f"loading adapter {name} from {path}",
            {"lora_name": name, "lora_path": path},
        )

    def unload_adapter(self, name: str) -> None:
        self.request("POST", "/v1/unload_lora_adapter", f"unloading adapter {name}", {"lora_name": name})

    def complete(self, body: dict) -> dict:
        return self.request("POST", "/v1/completions", f"generating with {body.get('model')}", body, retries=0)

    def close(self) -> None:
        self._http.close()


class ServerPool:
    """All servers, seen as the ``vllm_client`` TRL's server-mode generate() talks to."""

    def __init__(self, settings: ServerSettings) -> None:
        if not settings.urls:
            raise ValueError("vllm_server_urls is empty: name at least one vLLM server")
        self.settings = settings
        self.servers = [VLLMServer(u, settings.request_timeout, settings.retries) for u in settings.urls]
        self.adapter: str | None = None  # the adapter every server serves now
        self.adapter_path: str | None = None  # ... and where its files are (to load it again after a restart)
        self.max_model_len: dict[str, int | None] = {}  # each server's --max-model-len (from /v1/models)
        self.served_models: dict[str, list[str]] = {}  # each server's base models (their checkpoints)
        self.base_ids: dict[str, list[str]] = {}  # ... and the names requests use for them
        self._threads = ThreadPoolExecutor(max_workers=len(self.servers), thread_name_prefix="vllm-server")

    def _each(self, func) -> list:
        """func(server) on every server concurrently; the first ServerError (in URL order) is raised."""
        futures = [self._threads.submit(func, server) for server in self.servers]
        results, first_error = [], None
        for future in futures:
            try:
                results.append(future.result())
            except ServerError as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error
        return results

    def wait_until_ready(self, timeout: float) -> None:
        """Every server lists its models within ``timeout`` seconds, else ServerError naming those that did not."""
        deadline = time.monotonic() + timeout
        pending = list(self.servers)
        last: dict[str, str] = {}
        while pending:
            for server in list(pending):
                try:
                    models = server.models()
                except ServerError as exc:
                    last[server.url] = str(exc)
                    continue
                # base models only (a loaded adapter is listed with its parent)
                bases = [m for m in models if not m.get("parent")]
                self.served_models[server.url] = [m.get("root") or m["id"] for m in bases]
                self.base_ids[server.url] = [m["id"] for m in bases]
                self.max_model_len[server.url] = min((m["max_model_len"] for m in bases if m.get("max_model_len")),
                                                     default=None)  # fmt: skip
                pending.remove(server)
            if pending and time.monotonic() >= deadline:
                reasons = "; ".join(last.get(s.url, "no answer") for s in pending)
                raise ServerError(
                    f"vLLM server(s) {', '.join(s.url for s in pending)} not ready after {timeout:.0f} s "
                    f"(vllm_server_timeout): {reasons}"
                )
            if pending:
                time.sleep(1.0)

    def check_servers(self, probe_adapter: str | None) -> None:
        """Every server runs as the engine assumes, else a ServerError naming the URL and the flags to add.

        Its logprobs mode (read from ``/server_info`` in vLLM's dev mode, else the probe above), and, by
        loading and unloading ``probe_adapter`` (``train/engines/vllm_lora.py``: a zero adapter of this run's
        rank and targets in the adapter directory), runtime LoRA loading, ``--enable-lora``, a
        ``--max-lora-rank`` that holds the rank, and that the server reads the adapter directory. Without a
        probe adapter only the logprobs mode is checked (the first sync then checks the rest). Call after
        ``wait_until_ready``.
        """
        self._each(lambda server: self._check_server(server, probe_adapter))

    def _check_server(self, server: VLLMServer, probe_adapter: str | None) -> None:
        problems = []
        mode, evidence = self.logprobs_mode(server)
        if mode == "unknown":  # a probe that cannot tell is not evidence of a wrong flag
            logger.warning("vLLM server %s: could not tell its logprobs mode (%s)", server.url, evidence)
        elif mode != LOGPROBS_MODE:
            problems.append(
                f"it returns {mode} ({evidence}), not {LOGPROBS_MODE} (after temperature), which TRL's "
                f"importance-sampling correction assumes: add --logprobs-mode {LOGPROBS_MODE}"
            )
        if probe_adapter:
            name = f"{ADAPTER_PREFIX}-probe-{new_run_tag()}"
            try:
                server.load_adapter(name, probe_adapter)
            except ServerError as exc:
                problems.append(self._lora_problem(exc, probe_adapter))
            else:
                server.unload_adapter(name)
        if problems:
            raise ServerError(
                f"vLLM server {server.url} does not run as this run needs: {'; '.join(problems)}. Start it as "
                f"{server_flags(self.settings.lora_rank)}."
            )

    def check_lengths(self, prompt_tokens: int, completion_tokens: int, tool_turns: bool = False) -> None:
        """Every server's ``--max-model-len`` (from ``/v1/models``) holds the longest request; otherwise a rollout
        request fails mid-run (HTTP 400). A request is the prompt and ``max_completion_length`` new tokens; in a tool
        run (``tool_turns``) TRL's tool loop sends, after a tool result, the conversation so far (up to
        ``max_completion_length`` past the prompt, results included) and asks for ``max_completion_length`` new tokens
        again. Call after ``wait_until_ready``."""
        budget = completion_tokens * (2 if tool_turns else 1)
        needed = prompt_tokens + budget
        short = {url: n for url, n in self.max_model_len.items() if n is not None and n < needed}
        if short:
            url, limit = next(iter(short.items()))
            prompt = f"the longest prompt ({prompt_tokens} tokens) + " if prompt_tokens else ""
            completion = (
                f"2 x max_completion_length ({budget}: after a tool result TRL's tool loop sends up to "
                f"max_completion_length tokens of conversation past the prompt and asks for {completion_tokens} more)"
                if tool_turns
                else f"max_completion_length ({completion_tokens})"
            )
            raise ServerError(
                f"vLLM server {url} holds at most {limit} tokens per sequence (--max-model-len {limit}) but this run "
                f"needs {needed}: {prompt}{completion}. Start it with "
                f"--max-model-len {needed} or more, or lower max_completion_length."
                + (f" Also short: {', '.join(list(short)[1:])}." if len(short) > 1 else "")
            )

    def logprobs_mode(self, server: VLLMServer) -> tuple[str, str]:
        """(mode, how it was found): vLLM's own config in dev mode, else the two-temperature probe."""
        info = server.server_info()
        mode = ((info or {}).get("vllm_config") or {}).get("model_config", {}).get("logprobs_mode")
        if mode:
            return mode, "its /server_info says so"
        bases = self.base_ids.get(server.url) or [None]
        model = bases[0] or self.settings.base_model
        tops = [server.top_logprobs(model, temperature) for temperature in PROBE_TEMPERATURES]
        return logprobs_mode_from_probe(*tops)

    def _lora_problem(self, exc: ServerError, path: str) -> str:
        """The flag (or the storage) a failed probe-adapter load points to."""
        rank = self.settings.lora_rank
        if exc.status == 404 and "No adapter found" not in exc.detail and "cannot be found" not in exc.detail:
            return "it has no runtime LoRA endpoints: start it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"
        if "not enabled" in exc.detail:
            return "LoRA is not enabled: add --enable-lora"
        if "max_lora_rank" in exc.detail:
            return f"its --max-lora-rank is below the adapter's rank {rank}: set --max-lora-rank {max_lora_rank(rank)}"
        if exc.status == 404:
            return (
                f"it cannot read the probe adapter at {path}: vllm_adapter_dir must be storage every server reads "
                "at the same path"
            )
        return f"it could not load a probe adapter of this run's rank and targets from {path}: {exc}"

    def load(self, name: str, path: str) -> None:
        """Load adapter ``name`` on every server, then make it the one rollouts use; unload the previous one.

        A server that restarted since the last sync lost the previous adapter (runtime-loaded adapters are not
        kept): it answers the unload with 404. Then the server is asked what it serves, the current adapter
        is loaded again if it is missing, and the run goes on; a server that is down stays an error.
        """
        self._each(lambda server: server.load_adapter(name, path))
        previous, self.adapter, self.adapter_path = self.adapter, name, path
        if previous is not None:
            self._each(lambda server: self._unload_previous(server, previous))

    def _unload_previous(self, server: VLLMServer, previous: str) -> None:
        try:
            server.unload_adapter(previous)
        except ServerError as exc:
            if exc.status != 404 or not_an_endpoint(exc.detail):
                raise
            logger.warning(
                "vLLM server %s no longer knows adapter %s (restarted?); checking it serves %s", server.url, previous,
                self.adapter,
            )  # fmt: skip
            self.ensure_current(server)

    def ensure_current(self, server: VLLMServer) -> bool:
        """Load the current adapter on ``server`` if it does not serve it (a restart lost it); True if it had to."""
        if self.adapter is None or self.adapter in server.adapters():
            return False
        logger.warning("vLLM server %s lost adapter %s: loading it again from %s", server.url, self.adapter,
                       self.adapter_path)  # fmt: skip
        server.load_adapter(self.adapter, self.adapter_path)
        return True

    def unload_current(self) -> None:
        """Unload the adapter the servers serve now (at the end of a run), without retries."""
        if self.adapter is None:
            return
        name, self.adapter = self.adapter, None
        self._each(
            lambda server: server.request(
                "POST", "/v1/unload_lora_adapter", f"unloading adapter {name}", {"lora_name": name}, retries=0
            )
        )

    def generate(self, prompts, features=None, n=1, **sampling) -> dict:
        """TRL's ``VLLMClient.generate`` contract, the prompts split into one contiguous share per server."""
        if features is not None:
            raise ServerError("the vLLM server engine does not support image prompts")
        if self.adapter is None:
            raise RuntimeError("the server engine generated before its first sync: no adapter is loaded")
        prompts = list(prompts)
        count = len(self.servers)
        shares = [prompts[i * len(prompts) // count : (i + 1) * len(prompts) // count] for i in range(count)]
        adapter = self.adapter

        def ask(index: int) -> dict | None:
            share, server = shares[index], self.servers[index]
            if not share:
                return None
            body = completion_payload(share, model=adapter, n=n, **sampling)
            try:
                answer = server.complete(body)
            except ServerError as exc:
                # a server restarted since the sync does not know the adapter (404, nothing generated): load it
                # again and ask once more; if it still serves it, the 404 was something else
                if exc.status != 404 or not self.ensure_current(server):
                    raise
                answer = server.complete(body)
            return parse_completions(answer, len(share), n, server.url)

        futures = [self._threads.submit(ask, i) for i in range(count)]
        results = [f.result() for f in futures]  # a ServerError from any share is raised here
        merged = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "logprob_token_ids": [], "adapter": adapter}
        for result in results:
            for key in ("prompt_ids", "completion_ids", "logprobs", "logprob_token_ids"):
                merged[key].extend(result[key] if result else [])
        return merged

    def prompt_logprobs(self, prompt_ids: list[int], completion_ids: list[int], server: int = 0) -> list[float]:
        """Per-token logprobs of ``completion_ids`` after ``prompt_ids`` under the current adapter (temperature 1)."""
        body = {
            "model": self.adapter,
            "prompt": list(prompt_ids) + list(completion_ids),
            "max_tokens": 1,
            "temperature": 1.0,
            "prompt_logprobs": 0,
        }
        choice = self.servers[server].complete(body)["choices"][0]
        scored = choice["prompt_logprobs"][len(prompt_ids) :]
        return [entry[str(token)]["logprob"] for entry, token in zip(scored, completion_ids)]

    def get_server_info(self) -> dict:
        """What GRPOTrainer asks in server mode: the logprobs mode every server was checked to run with
        (``check_servers``, before the trainer loads anything)."""
        return {"model_config": {"logprobs_mode": LOGPROBS_MODE}}

    def reset_prefix_cache(self) -> None:
        """Nothing to reset: vLLM keys its prefix cache by adapter id, and every step's adapter has a new id."""

    def close(self) -> None:
        self._threads.shutdown(wait=False)
        for server in self.servers:
            server.close()
