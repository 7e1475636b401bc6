"""A run directory for the ``verigrpo/`` provider with no weights in it: run.json as training writes it and an
adapter_config.json naming the real base. The provider reads only these until it first generates
(evals/providers/checkpoint_model.py), so a test that never generates gets a run in milliseconds; one that tries to
load its weights fails (there is no adapter_model.safetensors), which is how a test sees that none were loaded."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import CPU_CONFIG, MODEL


def unloaded_run(directory: Path, *overrides: str) -> Path:
    """``directory`` made a run of the CPU config (``overrides``: more command-line keys, e.g. max_completion_length)."""
    from train.artifacts.manifest import build_manifest, write_manifest
    from train.config import parse_config

    script_args, training_args, model_args = parse_config(
        ["--config", CPU_CONFIG, "--output_dir", str(directory), *overrides]
    )
    model_args.model_name_or_path = str(MODEL)  # absolute, as training writes it
    directory.mkdir(parents=True, exist_ok=True)
    adapter = {"base_model_name_or_path": str(MODEL), "peft_type": "LORA", "r": 8, "target_modules": ["q_proj"]}
    (directory / "adapter_config.json").write_text(json.dumps(adapter))
    write_manifest(build_manifest(script_args, training_args, model_args), directory, 1)
    return directory
