"""The engine object ``GRPOTrainer.__init__`` builds for the rollout engine the config chose (``choice.py``).

Apart from the choice because it imports the engines, which import the choice back: kept in one direction
(config checks and engines -> ``choice``; ``factory`` -> engines).
"""

from __future__ import annotations

from functools import partial

from train.engines.choice import Engine, rollout_engine


def engine_factory(script_args, training_args, model_args, prompt_tokens=None, engine: Engine | None = None):
    """What ``GRPOTrainer.__init__`` should build its vLLM generation object with (an adapter engine class with
    its settings bound), or None for TRL's own generation. Imports TRL only for an adapter engine.

    For the server engine the servers must answer first, and run as the engine assumes: a wrong URL, a
    server that is down or one started without the flags it needs stops the run here, before any model is
    loaded (``ServerError``). The servers are checked from the main process only; ``prompt_tokens`` (a callable:
    the longest prompt's length) is asked only where a server reports its ``--max-model-len``. ``engine``: the one the
    run resolved (``RunPlan.engine``; None: the config's).
    """
    if engine is None:
        engine = rollout_engine(training_args, model_args)
    if engine is Engine.COLOCATED:
        # lazy: colocated imports TRL + torch (~10 s); train/grpo.py --help must not (tests/test_script_help.py)
        from train.engines.colocated import AdapterSyncGeneration, engine_settings

        settings = engine_settings(
            model_args, training_args, share_base=script_args.vllm_share_base, adapter_root=script_args.adapter_root
        )
        return partial(AdapterSyncGeneration, settings=settings)
    if engine is Engine.SERVER:
        # lazy: server imports TRL + torch (~10 s); train/grpo.py --help must not (tests/test_script_help.py)
        from train.engines.server import ServerAdapterGeneration, check_servers_on_main, server_settings

        settings = server_settings(script_args, training_args, model_args)
        check_servers_on_main(settings, model_args, training_args, prompt_tokens)
        return partial(ServerAdapterGeneration, settings=settings)
    return None
