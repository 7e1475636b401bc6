"""Which engine generates a run's rollouts, decided in one place from the config (no TRL import).

A LoRA policy with ``use_vllm`` never goes through TRL's own vLLM weight sync (which merges the adapter
and, on a 4-bit base, re-quantizes it): it rolls out on an adapter engine, colocated in each training
process or on vLLM OpenAI servers. Anything else is TRL's own generation.
"""

from __future__ import annotations

from enum import Enum
from functools import partial


class Engine(str, Enum):
    NONE = "none"  # no adapter engine: TRL generates (transformers, or vLLM with TRL's full-weight sync)
    COLOCATED = "colocate"  # train/engines/colocated.py: vLLM in each training process
    SERVER = "server"  # train/engines/server.py: vLLM OpenAI servers that load each adapter at run time


def rollout_engine(training_args, model_args) -> Engine:
    """The engine for TRL's GRPOConfig (``use_vllm``, ``vllm_mode``) and ModelConfig (``use_peft``)."""
    if not (training_args.use_vllm and model_args.use_peft):
        return Engine.NONE
    return Engine.SERVER if training_args.vllm_mode == "server" else Engine.COLOCATED


def engine_factory(script_args, training_args, model_args, prompt_tokens=None):
    """What ``GRPOTrainer.__init__`` should build its vLLM generation object with (an adapter engine class with
    its settings bound), or None for TRL's own generation. Imports TRL only for an adapter engine.

    For the server engine the servers must answer first, and run as the engine assumes: a wrong URL, a
    server that is down or one started without the flags it needs stops the run here, before any model is
    loaded (``ServerError``). The servers are checked from the main process only; ``prompt_tokens`` (a callable:
    the longest prompt's length) is asked only where a server reports its ``--max-model-len``.
    """
    engine = rollout_engine(training_args, model_args)
    if engine is Engine.COLOCATED:
        from train.engines.colocated import AdapterSyncGeneration, engine_settings

        settings = engine_settings(
            model_args, training_args, share_base=script_args.vllm_share_base, adapter_root=script_args.adapter_root
        )
        return partial(AdapterSyncGeneration, settings=settings)
    if engine is Engine.SERVER:
        from train.engines.server import ServerAdapterGeneration, check_servers_on_main, server_settings

        settings = server_settings(script_args, training_args, model_args)
        check_servers_on_main(settings, model_args, training_args, prompt_tokens)
        return partial(ServerAdapterGeneration, settings=settings)
    return None
