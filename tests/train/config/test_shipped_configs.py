"""Every shipped config parses and passes pre-flight, up to the checks that need its machine."""

from pathlib import Path

import pytest
import torch

from tests.helpers import REPO
from train.config import ConfigError, parse_config, validate

CONFIGS = sorted((REPO / "configs").glob("*.yaml"))
GPU_RECIPE = r"this is a GPU recipe"


def test_the_configs_are_the_ones_the_readme_lists():
    readme = (REPO / "README.md").read_text()
    assert len(CONFIGS) >= 6
    for path in CONFIGS:
        assert f"configs/{path.name}" in readme, f"README does not document {path.name}"


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_config_parses_and_validates_up_to_its_machine(path: Path):
    try:
        args = parse_config(["--config", str(path)])
    except ConfigError as exc:  # bf16 recipes: transformers refuses bf16 without a GPU while parsing
        assert not torch.cuda.is_available()
        assert str(exc).startswith(GPU_RECIPE) and "configs/cpu-smollm2.yaml" in str(exc)
        args = parse_config(["--config", str(path), "--bf16", "false"])  # every key still parses
    script_args, training_args, model_args = args
    if training_args.use_cpu or torch.cuda.is_available():
        if script_args.dataset == "code":
            pytest.importorskip("pyseccomp")
        validate(script_args, training_args, model_args)  # a CPU config passes every check here
    else:
        with pytest.raises(ConfigError, match=rf"{GPU_RECIPE} \(use_cpu is false\).*configs/cpu-smollm2.yaml"):
            validate(script_args, training_args, model_args)
