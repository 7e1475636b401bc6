"""GRPO training with TRL on the shared verifier: ``python train/grpo.py --config X.yaml``.

- ``grpo``: the entry point: TrlParser -> validate -> build_trainer -> train
- ``config``: ``ScriptArguments`` (data, rewards, think, prompt) and every pre-flight check
- ``cli_help``: ``--help``: ``--config`` and the project's options first, with the config's values
- ``machine_checks``: machine pre-flight: device, vLLM build/version, 4-bit matching, GPU memory estimate
- ``data``: training rows {prompt, answer | tests, id} from the domain table's sources and prompt builders
- ``adapter_engine``: colocated vLLM holds the (4-bit) base; each optimizer step loads the new LoRA adapter
- ``server_engine``: the same through vLLM OpenAI servers (``vllm_mode: server``): adapters loaded at run time
- ``vllm_server_api``: the servers' HTTP client (httpx): load/unload adapters, token-id completions, errors naming
  the URL
- ``manifest``: run.json (config, versions, git commit, verifier fingerprint) and the model card in every checkpoint
- ``rollouts``: every rollout as an Inspect .eval log (``RolloutRecorder``, atomic files, one per interval)
- ``recording_trainer``: the GRPOTrainer subclass that hands each scored batch to the recorder
"""
