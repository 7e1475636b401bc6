"""What ``train/grpo.py --config X.yaml`` accepts, and every check that can fail before a model loads.

    arguments.py       ScriptArguments (data, rewards, think, prompt, vLLM servers), the ranges of every
                       numeric key, ConfigError, CheckedGRPOConfig, CheckedModelConfig
    parsing.py         parse_config: TRL's parser on --config FILE.yaml + overrides; its errors explained
    recipe_base.py     a config's `base:` chain merged into the one mapping TRL reads (configs/base/)
    validation.py      validate: every check on the config alone (rewards, data, model, servers, quantization)
    lora_checks.py     LoRA targets resolved on the configured model; what vLLM cannot serve of an adapter
    machine_checks.py  machine pre-flight: device, the vLLM settings it can run, 4-bit matching, the estimate
                       against this GPU
    vllm_install.py    which vLLM build and bitsandbytes plugin are installed, and whether they fit each other
    memory_model.py    the GPU memory estimate by part, and the least vLLM's pool must hold (pre-flight and
                       scripts/check_gpu.py use this one)
    share_base_checks.py  vllm_share_base before loading: the combinations it refuses, the vLLM storage layouts it knows
    distributed_checks.py  accelerate's launch from its environment: DeepSpeed/FSDP with 4-bit or the adapter
                       engines, placement on multi-GPU nodes, free GPU memory, the other ranks' waits vs ddp_timeout
    cli_help.py        --help: --config and the project's options first, with the config's values
    device_capability.py  what this GPU's compute capability cannot run (bf16 in vLLM, torch's kernels)
    nvidia_driver.py   the NVIDIA driver and cards read without torch: why torch may still see no GPU
    triton_toolchain.py  whether Triton can build its CUDA launcher here (a C compiler and Python.h)
    tool_checks.py     the python tool's keys: bounds, the engines and launches it runs with; ToolSetup, the run's
                       tool resolved once (tokenizer, limits, schemas, environment; the tool itself: python_tool/)
    exploit_preflight.py  scripted cheats against the run's rewards on its own problems, before the model loads
    resolved.py        RunPlan: the run as resolved once with every check (domain and rewards from one look-up,
                       engine, held-out evals, tools), what the stages after validation read

Nothing here imports TRL until a config is parsed. The public names are re-exported here
(``from train.config import parse_config, resolve_run``).
"""

from train.config.arguments import ConfigError, ScriptArguments, grpo_config_class
from train.config.parsing import parse_config
from train.config.resolved import RunPlan, resolve_run
from train.config.validation import check_line_lengths, validate

__all__ = ["ConfigError", "RunPlan", "ScriptArguments", "check_line_lengths", "parse_config", "resolve_run", "validate"]


def __getattr__(name: str):
    if name == "CheckedGRPOConfig":  # a training_args.bin pickled before the config became a package
        return grpo_config_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
