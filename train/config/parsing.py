"""``--config file.yaml`` plus command-line overrides -> (ScriptArguments, GRPOConfig, ModelConfig).

TRL's ``TrlParser`` does the parsing; unknown keys in the YAML or on the command line are errors. A recipe's
``base:`` chain (``train/config/recipe_base.py``) is merged first, so TRL reads one resolved mapping.
Its ValueErrors become ``ConfigError`` paragraphs that name the key and the fix. ``-h``/``--help``
prints the project's own page (``train/config/cli_help.py``) without importing TRL.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from train.config.arguments import ConfigError, ScriptArguments, grpo_config_class, model_config_class
from train.config.cli_help import project_help
from train.config.distributed_checks import check_launcher
from train.config.machine_checks import gpu_recipe_refusal
from train.config.recipe_base import resolved_copy


def _config_path(argv: list[str]) -> str | None:
    for index, arg in enumerate(argv):
        if arg == "--config" and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--config="):
            return arg.split("=", 1)[1]
    return None


def parse_config(argv: list[str] | None = None):
    """(ScriptArguments, GRPOConfig, ModelConfig) from ``--config file.yaml`` plus CLI overrides.

    ``-h``/``--help`` prints the project's own options (train/config/cli_help.py) and exits;
    ``--help-all`` prints TRL's full list.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    config = _config_path(argv)
    if config is not None and not Path(config).is_file():
        raise ConfigError(
            f"--config: {config} does not exist (resolved: {Path(config).resolve()}). "
            "The bundled configs are in configs/ (the CPU default: configs/cpu-smollm2.yaml)."
        )
    if "-h" in argv or "--help" in argv:
        print(project_help(config))
        raise SystemExit(0)
    check_launcher()  # before TrainingArguments, which fails with a traceback when DeepSpeed is chosen but absent
    from trl import TrlParser

    parser = TrlParser((ScriptArguments, grpo_config_class(), model_config_class()))
    if "--help-all" in argv:
        parser.parse_args_and_config(args=["--help"])  # argparse prints everything and exits 0
    try:
        if config is None:
            return parser.parse_args_and_config(args=argv)
        with tempfile.TemporaryDirectory(prefix="verigrpo-config-") as directory:
            return parser.parse_args_and_config(args=_with_config(argv, resolved_copy(config, directory)))
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(explain(str(exc))) from None


def _with_config(argv: list[str], path: str) -> list[str]:
    """``argv`` with its ``--config FILE`` (or ``--config=FILE``) as ``--config path``, the form TRL reads."""
    out, skip = [], False
    for index, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--config" and index + 1 < len(argv):
            out += ["--config", path]
            skip = True
        elif arg.startswith("--config="):
            out += ["--config", path]
        else:
            out.append(arg)
    return out


def explain(message: str) -> str:
    """A TRL or transformers ValueError about the config, as one paragraph with the fix."""
    if "Unknown arguments from config file" in message:
        return f"{message.split('. Please')[0]}. Remove or rename them; `python train/grpo.py --help` lists every key."
    if "not used by the HfArgumentParser" in message:
        unknown = message.split(": ", 1)[1]
        return f"unknown command-line option(s) {unknown}. `python train/grpo.py --help` lists every key."
    if "must be divisible by num_generations" in message:
        return (
            f"{message} Each optimizer step needs whole groups of completions: make per_device_train_batch_size "
            "x gradient_accumulation_steps (or generation_batch_size) a multiple of num_generations."
        )
    if "doesn't support bf16/gpu" in message:  # transformers' TrainingArguments, which says "assign use_cpu"
        return gpu_recipe_refusal("bf16: true", "add `--bf16 false --use_cpu true`")
    return f"invalid configuration: {message}"
