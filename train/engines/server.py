"""vLLM rollouts from OpenAI-compatible vLLM servers that load each new LoRA adapter at run time.

TRL's own server mode (``trl vllm-serve``) syncs a PEFT policy by merging the adapter and pushing full
weights over NCCL: on a bitsandbytes 4-bit base that re-quantizes the weights, so the rollouts would
not come from the policy being trained (see ``train/engines/colocated.py`` for the colocated twin of this
engine; the HTTP side is ``train/engines/vllm_server_api.py``). Here the servers are plain ``vllm.entrypoints.openai.api_server`` processes holding the same
base (started with ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``). After every
optimizer step the main process saves the adapter (peft's files) under ``adapter_dir`` - a path every
server can read: shared storage when the servers run on other nodes - and POSTs
``/v1/load_lora_adapter`` to each server under a fresh name (``verigrpo-<run>-v<N>``, N counting
syncs; vLLM gives each name a new integer id, so no server keeps serving cached old weights). Rollouts are then requested from
``/v1/completions`` with ``model=<that name>``, the prompts as token ids, ``logprobs=0``,
``return_token_ids`` and ``return_tokens_as_token_ids`` (checked against vllm 0.27.1's
``entrypoints/openai/completion/protocol.py``), the unique prompts spread over the servers. The previous
adapter is then unloaded and its files removed. A server that cannot be reached, answers with an error or
does not answer within ``request_timeout`` is a ``ServerError`` naming its URL; connection failures
are retried ``retries`` times with a short back-off, nothing else is (a generation or load request that
timed out may still be running). Since each step's adapter has its own name and a server that lost it
answers 404, a rollout can never silently come from a stale adapter.

TRL's public contract this relies on (trl 1.16.0; tests/train/test_trl_seams.py checks it): the
server-mode ``generate`` of ``VLLMGeneration`` is used unchanged: it gathers the prompts, calls
``self.vllm_client.generate(prompts=..., features=..., n=..., repetition_penalty=..., temperature=...,
top_p=..., top_k=..., min_p=..., max_tokens=..., logprobs=..., structured_outputs_regex=...,
generation_kwargs=...)`` on the main process only and broadcasts the dict it returns (``prompt_ids``,
``completion_ids``, ``logprobs``, ``logprob_token_ids``); ``GRPOTrainer.__init__`` calls
``self.vllm_generation.vllm_client.get_server_info()["model_config"]["logprobs_mode"]`` on the main
process in server mode (``ServerPool.get_server_info``). What is shared with the colocated engine
(saving, naming, run.json, cleanup) is ``train/engines/base.py``.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from train.engines.base import AdapterEngine
from train.engines.choice import Engine
from train.engines.vllm_lora import lora_model_on_meta, write_probe_adapter
from train.engines.vllm_server_api import (
    ADAPTER_PREFIX,
    ServerError,
    ServerPool,
    ServerSettings,
    adapter_name,
    new_run_tag,
    normalize_url,
)

logger = logging.getLogger(__name__)


class ServerAdapterGeneration(AdapterEngine):
    """TRL's server-mode vLLM generation with adapter-only sync to vLLM's OpenAI servers (module docstring)."""

    engine = Engine.SERVER

    def __init__(self, *args, settings: ServerSettings, **kwargs) -> None:
        self.run_tag = new_run_tag()
        self.vllm_client: ServerPool | None = None
        # the directory is shared (other runs, other nodes): only this run's current adapter is removed at the end
        super().__init__(*args, settings=settings, adapter_dir=settings.adapter_dir, owns_adapter_dir=False, **kwargs)

    def start_engine(self) -> None:
        if self.mode != "server":
            raise ValueError("the server engine needs vllm_mode: server")
        if self.accelerator.is_main_process:
            self.vllm_client = connect(self.settings, self.server_timeout)
            _warn_on_other_base(self.settings.base_model, self.vllm_client.served_models)
        self.accelerator.wait_for_everyone()

    def adapter_name(self, version: int) -> str:
        return adapter_name(self.run_tag, version)  # unique per run and per sync: a server never serves a stale one

    def adapter_path(self, name: str, version: int) -> Path:
        return self.adapter_dir / name

    @property
    def saves_here(self) -> bool:
        return self.accelerator.is_main_process  # the servers load it; one copy is enough

    def load_adapter(self, name: str, version: int, path: Path) -> None:
        self.vllm_client.load(name, str(path.resolve()))  # on every server; then the previous one is unloaded

    def engine_facts(self) -> dict:
        return {
            "servers": [normalize_url(u) for u in self.settings.urls],
            "served_models": self.vllm_client.served_models if self.vllm_client else None,
            "adapter_dir": str(self.adapter_dir),
            "run_tag": self.run_tag,
        }

    def prompt_logprobs(self, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
        """Per-token logprobs under the adapter the servers serve now (the on-policy check; main process)."""
        return self.vllm_client.prompt_logprobs(prompt_ids, completion_ids)

    def release(self) -> None:
        """Unload this run's last adapter from the servers (they outlive the run) and close the connections.

        Also after a failure: a server that cannot unload is then a warning, so the error that stopped the
        run stays the one reported.
        """
        if self.vllm_client is None:
            return
        try:
            self.vllm_client.unload_current()
        except ServerError as exc:
            logger.warning("could not unload the last adapter: %s", exc)
        self.vllm_client.close()


def connect(settings: ServerSettings, timeout: float) -> ServerPool:
    """A pool of the configured servers once every one lists its models (ServerError naming those that do not)."""
    pool = ServerPool(settings)
    try:
        pool.wait_until_ready(timeout)
    except ServerError:
        pool.close()
        raise
    return pool


def check_servers_on_main(settings: ServerSettings, model_args, training_args, prompt_tokens=None) -> None:
    """``check_servers`` on the main process only (one probe per server, not one per training process, and one
    process writing the probe adapter); the verdict is broadcast, so every process stops on a refusal."""
    from accelerate import PartialState
    from accelerate.utils import broadcast_object_list

    state = PartialState()
    verdict: list = [None]
    failure: BaseException | None = None
    if state.is_main_process:
        try:
            check_servers(settings, model_args, training_args, prompt_tokens)
        except ServerError as exc:
            verdict, failure = [str(exc)], exc
        except BaseException as exc:  # anything else: the others must not wait for a verdict that never comes
            verdict, failure = [f"the main process failed while checking the vLLM servers: {exc!r}"], exc
    if state.num_processes > 1:
        verdict = broadcast_object_list(verdict)
    if failure is not None:
        raise failure
    if verdict[0] is not None:
        raise ServerError(verdict[0])


def check_servers(settings: ServerSettings, model_args, training_args, prompt_tokens=None) -> None:
    """Before any model loads: every server answers, holds the run's longest sequence (``prompt_tokens``: a
    callable giving the longest prompt's length, or None) and runs as this run needs (``ServerPool.check_servers``),
    checked with a probe adapter of this run's rank and targets written where the real ones will be."""
    pool = connect(settings, training_args.vllm_server_timeout)
    adapter_dir = Path(settings.adapter_dir)
    created = [p for p in (adapter_dir, *adapter_dir.parents) if not p.exists()]  # removed again if left empty
    probe_dir = adapter_dir / f"{ADAPTER_PREFIX}-probe-{new_run_tag()}"
    try:
        if any(pool.max_model_len.values()):
            prompt = prompt_tokens() if prompt_tokens is not None else 0
            pool.check_lengths(prompt, training_args.max_completion_length, tool_turns=settings.tool_turns)
        probe = _write_probe_adapter(model_args, training_args.trust_remote_code, probe_dir)
        pool.check_servers(str(probe) if probe else None)
    finally:
        pool.close()
        shutil.rmtree(probe_dir, ignore_errors=True)
        for directory in created:  # deepest first
            try:
                directory.rmdir()
            except OSError:
                break


def longest_prompt_tokens(dataset, model_args, trust_remote_code: bool = False, tokenizer=None, tools=None) -> int:
    """The longest prompt of ``dataset`` in tokens, as TRL renders it (the tokenizer's chat template with the
    generation prompt and, in a tool run, the tools' schemas; or the text itself): what a server's --max-model-len
    must hold besides the completion. ``tokenizer``: the run's own (a tool run's carries its tool template)."""
    if tokenizer is None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(
            model_args.model_name_or_path, revision=model_args.model_revision, trust_remote_code=trust_remote_code
        )
    longest = 0
    for prompt in dataset["prompt"]:
        if isinstance(prompt, str):
            ids = tokenizer(prompt)["input_ids"]
        else:
            ids = tokenizer.apply_chat_template(
                prompt, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=True
            )["input_ids"]
        longest = max(longest, len(ids))
    return longest


def _write_probe_adapter(model_args, trust_remote_code: bool, directory: Path) -> Path | None:
    """The zero adapter ``check_servers`` loads (train/engines/vllm_lora.py), or None when the architecture
    cannot be built here (a Hub model that is not cached, offline): then the first sync checks the servers'
    LoRA flags."""
    from trl import get_peft_config

    lora_config, path, revision = get_peft_config(model_args), model_args.model_name_or_path, model_args.model_revision
    try:
        model = lora_model_on_meta(path, lora_config, revision=revision, trust_remote_code=trust_remote_code)
    except Exception as exc:  # a pre-check only: loading the model reports its own errors
        logger.warning(
            "no probe adapter for the vLLM servers (%s): their LoRA flags are checked at the first sync", exc
        )
        return None
    return write_probe_adapter(model, directory)


def _warn_on_other_base(base_model: str | None, served: dict[str, list[str]]) -> None:
    """A server holding another base would roll out another policy; TRL's sampling metrics would show it late."""
    if not base_model:
        return
    name = Path(base_model).name
    for url, models in served.items():
        if not any(Path(m).name == name for m in models):
            logger.warning(
                "vLLM server %s serves %s, not %s: rollouts come from the policy only if it holds the same base "
                "weights (start it with --model %s)",
                url,
                models,
                base_model,
                base_model,
            )


def server_settings(script_args, training_args, model_args) -> ServerSettings:
    """The server engine's settings from the config (adapter_dir defaults to <output_dir>/vllm-adapters)."""
    adapter_dir = script_args.vllm_adapter_dir or str(Path(training_args.output_dir) / "vllm-adapters")
    return ServerSettings(
        urls=tuple(normalize_url(u) for u in script_args.vllm_server_urls),
        adapter_dir=str(Path(adapter_dir).resolve()),
        request_timeout=script_args.vllm_server_request_timeout,
        retries=script_args.vllm_server_retries,
        base_model=model_args.model_name_or_path,
        lora_rank=model_args.lora_r,
        tool_turns=bool(script_args.tools),
    )
