"""What ``train/grpo.py --config X.yaml`` accepts, and every check that can fail before a model loads.

The package's public names are re-exported here (``from train.config import parse_config, validate``).
"""

from train.config.arguments import ConfigError, ScriptArguments, check_line_lengths, parse_config, validate

__all__ = ["ConfigError", "ScriptArguments", "check_line_lengths", "parse_config", "validate"]


def __getattr__(name: str):
    if name == "CheckedGRPOConfig":  # a training_args.bin pickled before the config became a package
        from train.config.arguments import _grpo_config_class

        return _grpo_config_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
