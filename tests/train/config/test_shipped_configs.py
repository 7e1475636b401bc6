"""Every shipped config parses and passes pre-flight, up to the checks that need its machine; every accelerate
config (configs/accelerate/) parses as accelerate reads it."""

from pathlib import Path

import pytest
import torch

from tests.helpers import REPO
from train.config import ConfigError, parse_config, resolve_run

CONFIGS = sorted((REPO / "configs").glob("*.yaml"))
GPU_RECIPE = r"this is a GPU recipe"
ACCELERATE_CONFIGS = sorted((REPO / "configs" / "accelerate").glob("*.yaml"))


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
        resolve_run(script_args, training_args, model_args)  # a CPU config passes every check here
    else:
        with pytest.raises(ConfigError, match=rf"{GPU_RECIPE} \(use_cpu is false\).*configs/cpu-smollm2.yaml"):
            resolve_run(script_args, training_args, model_args)


@pytest.mark.parametrize("path", ACCELERATE_CONFIGS, ids=lambda p: p.name)
def test_every_accelerate_config_parses(path):
    """accelerate's own loader reads each file (unknown keys are an error there); DeepSpeed ones build a plugin."""
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.utils import DeepSpeedPlugin, DistributedType

    config = load_config_from_file(str(path))
    assert config.num_processes >= 2 and config.main_process_port
    if config.distributed_type == DistributedType.DEEPSPEED:
        plugin = DeepSpeedPlugin(**config.deepspeed_config)  # what accelerate builds (DeepSpeed itself not needed)
        stage = plugin.deepspeed_config["zero_optimization"]["stage"]
        assert stage == config.deepspeed_config["zero_stage"] and f"zero{stage}" in path.name
    assert "train/grpo.py" in path.read_text() or "multi-node" in path.name  # each file says how it is launched


def test_the_deepspeed_and_ddp_configs_exist():
    names = {p.name for p in ACCELERATE_CONFIGS}
    assert {
        "cpu-2proc.yaml",
        "ddp.yaml",
        "multi-node-ddp.yaml",
        "deepspeed-zero2.yaml",
        "deepspeed-zero3.yaml",
    } <= names
