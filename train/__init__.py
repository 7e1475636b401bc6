"""Training: ``python train/grpo.py --config configs/X.yaml`` runs TRL's GRPOTrainer on the shared verifier.

The folders are the stages of a run, in order:

    config/      what a config may hold and every check before a model loads (arguments, parsing,
                 validation, machine pre-flight, --help)
    data/        training rows from the problem sources, with the prompt the evals use
    engines/     vLLM rollouts for a LoRA policy that send only the adapter (colocated, or vLLM servers)
    artifacts/   what a run leaves: run.json and the model card, rollout logs, held-out evals, the curve
    trainer.py   RecordingGRPOTrainer: GRPOTrainer that owns the rollout engine, records every scored batch,
                 runs the held-out evals and generates on CPU with the cpu/ kernels
    grpo.py      the entry point: parse -> check and resolve the run once (config/resolved.py) -> run.py
    run.py       a resolved run built (data, exploit pre-flight, held-out eval, engine, trainer, guards) and
                 trained, saved and summarised
    gpu_check/   scripts/check_gpu.py (make gpu-check): does a recipe fit this machine, how fast, on-policy?
    trl_seams.py every private TRL name verigrpo relies on, in one module, each pinned by a test
    vllm_seams.py every private vLLM (and vllm-bnb-plugin) name verigrpo relies on, in one module, each pinned by a test
"""

from cpu.bnb_seams import quiet_missing_hub_kernel  # noqa: E402 - bitsandbytes warns on import that an optional Hub kernel is absent

quiet_missing_hub_kernel()
