"""Which engine generates a run's rollouts, decided in one place from the config (no TRL import).

A leaf module (it imports nothing from verigrpo): the config checks and the engines all ask it, and
``train/engines/factory.py`` builds the engine it names, so no import runs in a circle.

A LoRA policy with ``use_vllm`` never goes through TRL's own vLLM weight sync (which merges the adapter
and, on a 4-bit base, re-quantizes it): it rolls out on an adapter engine, colocated in each training
process or on vLLM OpenAI servers. Anything else is TRL's own generation.
"""

from __future__ import annotations

from enum import Enum


class Engine(str, Enum):
    NONE = "none"  # no adapter engine: TRL generates (transformers, or vLLM with TRL's full-weight sync)
    COLOCATED = "colocate"  # train/engines/colocated.py: vLLM in each training process
    SERVER = "server"  # train/engines/server.py: vLLM OpenAI servers that load each adapter at run time


def rollout_engine(training_args, model_args) -> Engine:
    """The engine for TRL's GRPOConfig (``use_vllm``, ``vllm_mode``) and ModelConfig (``use_peft``)."""
    if not (training_args.use_vllm and model_args.use_peft):
        return Engine.NONE
    return Engine.SERVER if training_args.vllm_mode == "server" else Engine.COLOCATED
