"""``--config file.yaml`` plus command-line overrides -> (ScriptArguments, GRPOConfig, ModelConfig).

TRL's ``TrlParser`` does the parsing; unknown keys in the YAML or on the command line are errors. A recipe's
``base:`` chain (``train/config/recipe_base.py``) is merged first, so TRL reads one resolved mapping.
Its ValueErrors become ``ConfigError`` paragraphs that name the key and the fix; so do argparse's errors (a value
of the wrong type names the file or the command line, the key and the type, without argparse's usage dump). Options
are never abbreviated (``--max_step`` is not ``--max_steps``). Every key's range is checked on the parsed values,
before any dataclass is built, so all bad values are named at once; ``max_steps: -1`` (TRL's "train
num_train_epochs", an unbounded run) is refused. ``-h``/``--help`` prints the project's own page
(``train/config/cli_help.py``) without importing TRL.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import yaml

from train.config.arguments import (
    GRPO_BOUNDS,
    MODEL_BOUNDS,
    SCRIPT_BOUNDS,
    ConfigError,
    ScriptArguments,
    grpo_config_class,
    model_config_class,
    out_of_range,
    refuse,
)
from train.config.cli_help import print_help, project_help
from train.config.cpu_dtype import resolve_cpu_dtype
from train.config.distributed_checks import check_launcher
from train.config.inspect_task import command_line_conflict
from train.config.machine_checks import gpu_recipe_refusal
from train.config.output_dir import resolve_resume
from train.config.recipe_base import resolve_recipe, resolved_copy


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
    if config is not None:
        resolve_recipe(config)  # a file that is not YAML (a tab), or a bad base: chain, in one line before TRL loads
    if "-h" in argv or "--help" in argv:
        print_help(project_help(config))
    check_launcher()  # before TrainingArguments, which fails with a traceback when DeepSpeed is chosen but absent
    parser = checked_parser(config, argv)
    if "--help-all" in argv:
        parser.parse_args_and_config(args=["--help"])  # argparse prints everything and exits 0
    try:
        if config is None:
            parsed = parser.parse_args_and_config(args=argv)
        else:
            with tempfile.TemporaryDirectory(prefix="verigrpo-config-") as directory:
                parsed = parser.parse_args_and_config(args=_with_config(argv, resolved_copy(config, directory)))
    except ConfigError:
        raise
    except ValueError as exc:
        raise ConfigError(explain(str(exc))) from None
    script_args, training_args, model_args = parsed[:3]
    conflict = command_line_conflict(argv)  # --inspect_task beside --dataset (train/config/inspect_task.py)
    if conflict:
        raise ConfigError(conflict)
    resolve_resume(training_args)  # resume_from_checkpoint: true/latest -> output_dir's latest checkpoint
    bundled_inputs_from_the_repository(config, argv, script_args, model_args)
    # dtype: auto on CPU becomes what this CPU computes natively, before any check or loader reads it; the reason is
    # kept for the start-up line (train/grpo.py prints it)
    model_args.cpu_dtype_line = resolve_cpu_dtype(model_args, training_args)
    return parsed


REPOSITORY = Path(__file__).resolve().parents[2]
BUNDLED_CONFIGS = REPOSITORY / "configs"
INPUT_PATH_KEYS = ("model_name_or_path", "dataset_path", "eval_dataset_path")  # what a run reads (not output_dir)


def bundled_inputs_from_the_repository(config: str | None, argv: list[str], *parsed) -> None:
    """A bundled config (in this checkout's configs/) names what it reads from the repository root
    (``model_name_or_path: models/smollm2-135m-instruct``): when the working directory is elsewhere and the path is not
    there, it is read from the repository, as the config means it. A path given on the command line, or in a config of
    your own, stays relative to the working directory; output_dir always is (runs/ where you run)."""
    if config is None or BUNDLED_CONFIGS not in Path(config).resolve().parents:
        return
    for holder in parsed:
        for key in INPUT_PATH_KEYS:
            value = getattr(holder, key, None)
            on_command_line = any(a == f"--{key}" or a.startswith(f"--{key}=") for a in argv)
            if not isinstance(value, str) or not value or on_command_line or Path(value).is_absolute():
                continue
            if not Path(value).exists() and (REPOSITORY / value).exists():
                setattr(holder, key, str(REPOSITORY / value))


UNBOUNDED_STEPS = (
    "max_steps must be >= 1, got -1: TRL reads -1 as 'train num_train_epochs over the dataset', a run whose length "
    "nobody chose and this check cannot bound. Give the number of optimizer steps, e.g. --max_steps 20"
)
ARGPARSE_TYPE_ERROR = re.compile(r"argument --(\w+)(?:/[^:]*)?: invalid (\w+) value: (.*)")
ARGPARSE_BOOL_ERROR = re.compile(r"argument --(\w+)(?:/[^:]*)?: Truthy value expected: got (.*?) but")
TYPE_NAMES = {"int": "an integer", "float": "a number", "string_to_bool": "true or false"}


def _config_keys(config: str | None) -> dict:
    """The config file's own keys (not its ``base:`` chain): where a value came from."""
    try:
        loaded = yaml.safe_load(Path(config).read_text()) if config else None
    except (OSError, yaml.YAMLError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def argparse_message(message: str, config: str | None, argv: list[str]) -> str:
    """argparse's one-line error as the project's paragraph: where the value was set, the key, the type it needs."""
    match = ARGPARSE_TYPE_ERROR.match(message)
    boolean = ARGPARSE_BOOL_ERROR.match(message)
    if match:
        key, kind, value = match.groups()
    elif boolean:
        key, kind, value = boolean.group(1), "string_to_bool", repr(boolean.group(2))
    else:
        return (
            f"{message.rstrip('.')}. `python train/grpo.py --help` lists the project's keys, --help-all every TRL key."
        )
    on_command_line = any(a == f"--{key}" or a.startswith(f"--{key}=") for a in argv)
    if on_command_line:
        where = "on the command line"
    elif key in _config_keys(config):
        where = f"in {config}"
    else:
        where = f"in the base: chain of {config}"
    need = TYPE_NAMES.get(kind, f"a {kind}")
    return f"{key}: {value} is not {need} (set {where}). Give {key} {need}."


def checked_parser(config: str | None, argv: list[str]):
    """TRL's parser with no abbreviated options, argparse's errors as ConfigError and every range checked at once."""
    from trl import TrlParser

    class CheckedParser(TrlParser):
        def error(self, message: str):  # argparse's error(): usage dump + exit 2; ours: one paragraph
            raise ConfigError(argparse_message(message, config, argv))

        def parse_known_args(self, args=None, namespace=None):
            parsed, rest = super().parse_known_args(args, namespace)
            problems = out_of_range(parsed, SCRIPT_BOUNDS + GRPO_BOUNDS + MODEL_BOUNDS)
            if getattr(parsed, "max_steps", None) == -1:
                problems.append(UNBOUNDED_STEPS)
            refuse(problems)
            return parsed, rest

    return CheckedParser((ScriptArguments, grpo_config_class(), model_config_class()), allow_abbrev=False)


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
