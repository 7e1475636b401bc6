"""Rollout engines: vLLM generation for a LoRA policy that sends only the adapter at each sync.

    selection.py        rollout_engine: which engine a config uses (none / colocated / server), engine_factory
    base.py             AdapterEngine: what both do (save the adapter, name and load each version, sync
                        record, run.json state, rollout_adapter, close)
    colocated.py        vLLM in each training process holds the (4-bit) base; adapters as LoRARequests
    shared_base.py      vllm_share_base: the trainer's 4-bit layers and embeddings become views of vLLM's weights
    server.py           the same through vLLM OpenAI servers (vllm_mode: server): adapters loaded at run time
    vllm_server_api.py  the servers' HTTP client (httpx only): load/unload adapters, token-id completions

Importing ``selection`` and ``vllm_server_api`` does not import TRL (config checks use them).
"""
