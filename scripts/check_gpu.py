"""Will a recipe fit this GPU (or a smaller card's memory), how fast does it train, are its rollouts on-policy?

    python scripts/check_gpu.py --config configs/qwen2.5-1.5b-qlora-vllm.yaml --memory-cap 14.5   # make gpu-check
    python scripts/check_gpu.py --config configs/cpu-smollm2-vllm.yaml --steps 2                  # on CPU

Prints a table (environment, memory, GRPO steps, rollout speed, on-policy), each row with a verdict and,
when it fails, what to change; writes it as gpu-check.json and gpu-check.md in --out; exits 1 when a
check did not pass, 2 on a config error. The checks are train/gpu_check/ (see run.py).
"""

import sys

import train.grpo  # noqa: F401 - sets the OpenMP spin count before torch loads (see train/grpo.py)
from train.gpu_check.run import cli

if __name__ == "__main__":  # vLLM's engine may re-import this module in a child process
    sys.exit(cli())
