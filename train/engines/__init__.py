"""Rollout engines: vLLM generation for a LoRA policy that sends only the adapter at each sync.

    choice.py           Engine, rollout_engine: which engine a config uses (none / colocated / server); a leaf module
    factory.py          engine_factory: the engine object GRPOTrainer builds for that choice
    base.py             AdapterEngine: what both do (save the adapter, name and load each version, sync
                        record, run.json state, rollout_adapter, close)
    colocated.py        vLLM in each training process holds the (4-bit) base; adapters as LoRARequests
    share_base_views.py vllm_share_base at run time: the trainer's 4-bit layers and embeddings become views of vLLM's weights
    server.py           the same through vLLM OpenAI servers (vllm_mode: server): adapters loaded at run time
    vllm_server_api.py  the servers' HTTP client (httpx only): load/unload adapters, token-id completions
    vllm_lora.py        what vLLM can serve of a LoRA policy (ranks, adapter settings, resolved targets)
    adapter_save.py     save an adapter version without asking the Hub (peft's save_embedding_layers decided here)
    adapter_storage.py  where adapter versions are written (/dev/shm, disk, adapter_root): one budget per node

Importing ``choice`` and ``vllm_server_api`` does not import TRL (config checks use them).
"""
