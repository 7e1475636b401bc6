"""``python train/grpo.py --help``: the project's own options first, in a screenful, without importing TRL.

TRL's parser lists ~190 GRPOConfig/ModelConfig keys (1,357 lines, 19 s to import): useful as a
reference, useless as a first answer. This page shows ``--config``, every ScriptArguments key with
its help, and the TRL keys a run usually sets, each with the value the given ``--config`` file sets
(not TRL's default, which the config usually overrides). ``--help-all`` still prints TRL's list.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from train.config.arguments import ScriptArguments
from train.config.recipe_base import resolve_recipe

# the TRL keys (GRPOConfig / ModelConfig) a run usually sets, with one line each
COMMON_TRL_KEYS = {
    "model_name_or_path": "base model: a local checkpoint directory or a Hub id",
    "load_in_4bit": "train a LoRA adapter on a 4-bit (bitsandbytes nf4) base",
    "use_peft": "train a LoRA adapter instead of every weight",
    "lora_r": "LoRA rank",
    "output_dir": "where checkpoints, run.json and rollouts/ go",
    "max_steps": "optimizer steps (>= 1)",
    "per_device_train_batch_size": "completions per step per device (prompts x num_generations)",
    "num_generations": "completions per prompt (the GRPO group)",
    "max_completion_length": "tokens per completion",
    "temperature": "sampling temperature (> 0)",
    "learning_rate": "optimizer learning rate",
    "reward_weights": "one weight per reward_funcs entry (>= 0)",
    "save_steps": "steps between checkpoints (checkpoint-N)",
    "eval_strategy": "steps: held-out evals of the policy every eval_steps (docs/training.md); no: none",
    "eval_steps": "steps between held-out evals (with eval_strategy: steps)",
    "seed": "seed for sampling, dropout and data order",
    "resume_from_checkpoint": "continue <output_dir>/checkpoint-N exactly (true: the latest in output_dir)",
    "use_vllm": "generate rollouts with vLLM",
}


CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SCRIPT_HELP_TAIL = (
    "Every other --KEY VALUE is a key of train/grpo.py's config (python train/grpo.py --help; --help-all for every "
    "TRL key)."
)


def print_help(text: str) -> None:
    """Print ``text`` and exit 0, quietly when the reader has gone (``--help | head``: no BrokenPipeError)."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        sys.stdout = None  # nothing left to flush at exit
    raise SystemExit(0)


def script_help(doc: str, argv: list[str]) -> None:
    """A script that passes its arguments to the trainer's parser answers ``-h``/``--help`` with its own ``doc``
    (and exits) before that parser, which would print train/grpo.py's page, sees them."""
    if "-h" in argv or "--help" in argv:
        print_help(f"{doc.strip()}\n\n{SCRIPT_HELP_TAIL}")


def shipped_configs() -> list[str]:
    """Every recipe in configs/ (the base: files they extend are not run on their own)."""
    return sorted(f"configs/{path.name}" for path in CONFIGS.glob("*.yaml"))


def _config_values(config: str | None) -> dict:
    if config is None:
        return {}
    return resolve_recipe(config)  # a base: chain merged in, as training reads it


def _default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _row(name: str, text: str, value, source: str) -> str:
    flag = f"  --{name}"
    return f"{flag:<32s} {text} [{source}: {value!r}]" if source else f"{flag:<32s} {text}"


def project_help(config: str | None = None) -> str:
    values = _config_values(config)
    source = f"{config}" if config else "default"
    lines = [
        "usage: python train/grpo.py --config FILE.yaml [--KEY VALUE ...] [--help-all]",
        "",
        "Train a policy with GRPO (TRL) on the shared verifier. Every key of the YAML file can be",
        "overridden on the command line, e.g. --max_steps 2. Bad values are refused (exit 2) before",
        "any model loads.",
        "",
        f"  {'--config FILE':<30s} the run's YAML config (configs/cpu-smollm2.yaml: the CPU default); shipped:",
        *(f"  {'':<30s} {name}" for name in shipped_configs()),
        f"  {'--help-all':<30s} every key TRL accepts (GRPOConfig, ModelConfig; long)",
        "",
        "data, rewards and prompt (train/config/arguments.py):",
    ]
    for f in dataclasses.fields(ScriptArguments):
        value = values.get(f.name, _default(f))
        lines.append(_row(f.name, f.metadata.get("help", ""), value, source if f.name in values else "default"))
    lines += ["", "common training keys (TRL GRPOConfig / ModelConfig; --help-all for all):"]
    for name, text in COMMON_TRL_KEYS.items():
        lines.append(_row(name, text, values.get(name), source if name in values else ""))
    return "\n".join(lines)
