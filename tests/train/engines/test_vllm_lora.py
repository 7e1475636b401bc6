"""What vLLM can serve of a LoRA adapter (train/engines/vllm_lora.py): the rank table against the installed vLLM
and TRL's copy, the colocated engine's and the servers' max_lora_rank, and the probe adapter the server
engine loads at start."""

import ast
import importlib.util
import json
import typing
from pathlib import Path

import pytest
from peft import LoraConfig, PeftModel
from safetensors.torch import load_file

from tests.helpers.training import tiny_llama_dir
from train.engines.vllm_lora import VLLM_LORA_RANKS, lora_model_on_meta, max_lora_rank, write_probe_adapter
from train.engines.vllm_server_api import server_flags


@pytest.mark.usefixtures("needs_vllm")
def test_the_rank_table_is_the_installed_vllms():
    from vllm.config.lora import MaxLoRARanks

    assert VLLM_LORA_RANKS == typing.get_args(MaxLoRARanks)


def test_the_rank_table_and_rounding_are_trls():
    """TRL 1.16 keeps the same table in trl.experimental (read from its source: importing it loads vLLM)."""
    path = Path(importlib.util.find_spec("trl").origin).parent / "experimental/async_grpo/async_grpo_trainer.py"
    tree = ast.parse(path.read_text())
    (table,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VLLM_LORA_RANKS" for t in node.targets)
    ]
    assert ast.literal_eval(table) == VLLM_LORA_RANKS


@pytest.mark.parametrize(("rank", "served"), [(1, 1), (2, 8), (8, 8), (12, 16), (17, 32), (257, 320), (512, 512)])
def test_max_lora_rank_rounds_up_and_the_server_command_says_it(rank, served):
    assert max_lora_rank(rank) == served
    assert f"--max-lora-rank {served} " in server_flags(rank)


def test_ranks_above_512_have_no_max_lora_rank():
    with pytest.raises(ValueError, match="above 512"):
        max_lora_rank(513)


def test_the_colocated_engine_asks_vllm_for_the_rounded_rank_and_keeps_the_adapters():
    from train.config import parse_config
    from train.engines.colocated import engine_settings

    _, training_args, model_args = parse_config(["--config", "configs/cpu-smollm2-vllm.yaml", "--lora_r", "12"])
    assert engine_settings(model_args, training_args).max_lora_rank == 16 and model_args.lora_r == 12


def test_the_probe_adapter_has_the_runs_rank_and_targets_and_loads_in_peft(tmp_path):
    """Zero weights for one module, peft's own files: a real peft model on the same architecture loads it."""
    from transformers import AutoModelForCausalLM

    model_dir = tiny_llama_dir(tmp_path / "model")
    lora = LoraConfig(r=12, lora_alpha=24, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM")
    probe = write_probe_adapter(lora_model_on_meta(str(model_dir), lora), tmp_path / "probe")
    config = json.loads((probe / "adapter_config.json").read_text())
    assert config["r"] == 12 and sorted(config["target_modules"]) == ["q_proj", "v_proj"]
    weights = load_file(str(probe / "adapter_model.safetensors"))
    assert sorted(weights) == [
        "base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight",
        "base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight",
    ]
    assert weights[sorted(weights)[0]].shape == (12, 16) and not any(w.any() for w in weights.values())
    model = PeftModel.from_pretrained(AutoModelForCausalLM.from_config(_config(model_dir)), str(probe))
    assert model.peft_config["default"].r == 12


def _config(model_dir):
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(model_dir)
