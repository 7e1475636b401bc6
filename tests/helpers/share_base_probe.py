"""One real CPU run of ``train.engines.share_base_views.share_base`` on the trainer ``train/grpo.py`` builds, with every
observation the sharing tests assert (tests/integration/test_share_base.py runs it in a subprocess: vLLM binds
threads and starts torch.distributed for the whole process).

    python -m tests.helpers.share_base_probe --json out.json [--config configs/cpu-smollm2-vllm.yaml] [KEY VALUE ...]

The trainer is built with ``vllm_share_base: false`` so that its logprobs can be taken with its own copy first;
then ``share_base`` (the function the engine calls with the key on) rebinds it to the engine's vLLM. Observed:
where every shared weight points, what was freed, the trainer's logprobs before and after, and vLLM's weights and
base-model prompt logprobs before and after a trainer eval/no-grad forward and after an optimizer step, and the
on-policy check (scripts/check_on_policy.py) after that step.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

os.environ.setdefault("GOMP_SPINCOUNT", "10000")  # as train/grpo.py sets it: before torch loads OpenMP

CONFIG = "configs/cpu-smollm2-vllm.yaml"
# one step as the on-policy check takes it (seeded: the same rollouts every run; at lr 1e-3 it moves the adapter)
STEP = ["--max_steps", "1", "--learning_rate", "1e-3", "--dataset_size", "8", "--log_rollouts", "false"]
STEP += ["--save_strategy", "no"]


def vllm_snapshot(model) -> dict:
    """Copies of everything vLLM computes with that sharing could touch: 4-bit bytes, absmax, embeddings."""
    import torch

    snap = {}
    for name, p in model.named_parameters():
        if hasattr(p, "bnb_quant_state"):
            snap[name] = p.data.clone()
            for index, state in p.bnb_quant_state.items():
                snap[f"{name}#{index}.absmax"] = state.absmax.clone()
                snap[f"{name}#{index}.dtype"] = torch.tensor([state.absmax.dtype == torch.float32, not state.nested])
        elif "embed_tokens" in name or "lm_head" in name:
            snap[name] = p.data.clone()
    return snap


def same(a: dict, b: dict) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def base_prompt_logprobs(engine, ids: list[int], prompt_len: int) -> list[float]:
    """vLLM's prompt logprobs of the base model (no adapter): what only the shared weights decide."""
    from vllm import SamplingParams

    params = SamplingParams(max_tokens=1, temperature=1.0, prompt_logprobs=0)
    raw = engine.llm._llm  # the engine's vllm.LLM, without the adapter it adds to every request
    (out,) = raw.generate([{"prompt_token_ids": ids}], sampling_params=params, use_tqdm=False)
    return [entry[token].logprob for entry, token in zip(out.prompt_logprobs[prompt_len:], ids[prompt_len:])]


def probe(argv: list[str]) -> dict:
    import torch
    from bitsandbytes.nn import Linear4bit

    from train.config import parse_config
    from train.engines.share_base_views import share_base, vllm_model
    from train.gpu_check.on_policy import COMPLETION, measure, policy_logprobs
    from train.grpo import build_trainer

    config = ["--config", CONFIG, *STEP, "--output_dir", tempfile.mkdtemp(prefix="share-probe-")]
    args = parse_config(config + argv + ["--vllm_share_base", "false"])
    trainer, _, _ = build_trainer(*args)
    engine = trainer.rollout_engine
    try:
        model, vllm = trainer.model, vllm_model(engine.llm)
        tokenizer = trainer.processing_class
        prompt_ids = tokenizer.apply_chat_template(
            trainer.train_dataset[0]["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False
        )
        completion_ids = tokenizer(COMPLETION, add_special_tokens=False)["input_ids"]
        ids = prompt_ids + completion_ids
        # bitsandbytes' CPU fast path would repack the trainer's own layers in this first eval forward (sharing turns it
        # off on the layers it shares); off here too, so both forwards compute the same way
        for module in model.modules():
            if isinstance(module, Linear4bit):
                module.support_avx512bf16_for_cpu = False
        before = policy_logprobs(model, prompt_ids, completion_ids)
        trainer_tensors = {n: (p.data_ptr(), p.untyped_storage().nbytes()) for n, p in model.named_parameters()}
        snap0, vllm0 = vllm_snapshot(vllm), base_prompt_logprobs(engine, ids, len(prompt_ids))

        start = time.perf_counter()
        shared = share_base(model, vllm)
        share_seconds = time.perf_counter() - start

        views = []
        for t in shared.tensors:
            weight = t.owner.weight
            views.append(
                {
                    "name": t.name,
                    "kind": t.kind,
                    "vllm_name": t.vllm_name,
                    "ptr": weight.data_ptr(),
                    "nbytes": weight.numel() * weight.element_size(),
                    "vllm_ptr": t.vllm_weight.data_ptr(),
                    "vllm_nbytes": t.vllm_weight.numel() * t.vllm_weight.element_size(),
                    "offset": t.offset,
                    "offsets_attr": t.vllm_weight.bnb_shard_offsets.tolist() if t.kind == "4bit" else None,
                    "inference": weight.is_inference(),
                    "requires_grad": weight.requires_grad,
                    "state_is_vllms": t.kind == "4bit"
                    and any(weight.quant_state is s for s in t.vllm_weight.bnb_quant_state.values()),
                    "fast_path_off": t.kind != "4bit" or t.owner.support_avx512bf16_for_cpu is False,
                }
            )
        after = policy_logprobs(model, prompt_ids, completion_ids)  # an eval, no-grad forward of the trainer
        snap1, vllm1 = vllm_snapshot(vllm), base_prompt_logprobs(engine, ids, len(prompt_ids))
        problems_after_eval = shared.problems()

        lora = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        # a real GRPO step (rollouts from vLLM, a backward pass, an optimizer step), then the on-policy check: vLLM
        # under the stale and the synced adapter against the trainer's policy
        trainer.train()
        on_policy = measure(trainer, engine, args[2])
        moved = sum(not torch.equal(lora[n], p) for n, p in model.named_parameters() if n in lora)
        snap2, vllm2 = vllm_snapshot(vllm), base_prompt_logprobs(engine, ids, len(prompt_ids))
        optimizer_ptrs = [p.data_ptr() for group in trainer.optimizer.param_groups for p in group["params"]]
        used = [p for p in model.parameters()]
        return {
            "shared": shared.facts(),
            "kept": shared.kept,
            "share_seconds": share_seconds,
            "views": views,
            "trainer_before": trainer_tensors,
            "policy_before": before,
            "policy_after": after,
            "vllm_weights_same_after_eval": same(snap0, snap1),
            "vllm_weights_same_after_step": same(snap0, snap2),
            "vllm_base_logprobs": [vllm0, vllm1, vllm2],
            "problems_after_eval": problems_after_eval,
            "problems_after_step": shared.problems(),
            "lora_tensors_moved": moved,
            "lora_tensors": len(lora),
            "optimizer_ptrs": optimizer_ptrs,
            "optimizer_requires_grad": all(
                p.requires_grad for g in trainer.optimizer.param_groups for p in g["params"]
            ),
            "inference_tensors_in_trainer": sum(p.is_inference() for p in used),
            "global_step": trainer.state.global_step,
            "on_policy": on_policy,
        }
    finally:
        trainer.close_rollout_engine()


def main() -> int:
    argv = sys.argv[1:]
    i = argv.index("--json")
    out = argv[i + 1]
    del argv[i : i + 2]
    report = probe(argv)
    with open(out, "w") as handle:
        json.dump(report, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
