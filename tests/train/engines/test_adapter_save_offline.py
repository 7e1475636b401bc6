"""An adapter sync with the base named by a Hub id asks the Hub nothing (issue #40, 3).

peft's ``save_pretrained`` with ``save_embedding_layers="auto"`` checks the Hub for the base's config.json whenever
the base is not a local directory; the adapter engines save at every optimizer step. Here the base is a Hub id, the
Hub is unreachable (every function that would ask it records the call), offline mode is off, and a real peft
adapter is saved through the engine's sync: nothing may be asked, and the decision must stay peft's (embeddings
saved when targeted or resized).
"""

from __future__ import annotations

import json

import huggingface_hub
import peft.utils.other
import peft.utils.save_and_load
import pytest
from safetensors import safe_open

from tests.train.engines.test_engine_base import build
from train.engines.adapter_save import local_base_vocab_size, save_adapter, save_embedding_layers

HUB_ID = "Qwen/Qwen2.5-1.5B-Instruct"
UNREACHABLE = OSError("the Hub is unreachable from this test")


@pytest.fixture
def unreachable_hub(monkeypatch):
    """Offline mode off (CI sets it), and every way peft reaches the Hub recorded instead of made."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-hf-cache")  # nothing cached: only the Hub could answer
    calls = []

    def record(name, answer=UNREACHABLE):
        def called(*args, **kwargs):
            calls.append((name, args))
            if isinstance(answer, BaseException):
                raise answer
            return answer

        return called

    # peft's wrapper answers None when the Hub cannot be reached (and warns): what the old code met at every save
    monkeypatch.setattr(
        peft.utils.save_and_load, "check_file_exists_on_hf_hub", record("check_file_exists_on_hf_hub", None)
    )
    monkeypatch.setattr(peft.utils.other, "file_exists", record("peft.utils.other.file_exists"))
    monkeypatch.setattr(huggingface_hub.HfApi, "file_exists", record("HfApi.file_exists"))
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", record("HfApi.model_info"))
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", record("hf_hub_download"))
    return calls


def on_hub_base(policy):
    policy.peft_config[policy.active_adapter].base_model_name_or_path = HUB_ID
    return policy


def test_each_engine_sync_saves_without_a_hub_request(tiny_policy, tmp_path, unreachable_hub):
    engine = build(on_hub_base(tiny_policy), tmp_path / "adapters", owns=False)
    engine.sync_weights()
    engine.sync_weights()
    assert unreachable_hub == []
    saved = tmp_path / "adapters" / "test-v2"
    assert json.loads((saved / "adapter_config.json").read_text())["base_model_name_or_path"] == HUB_ID
    with safe_open(saved / "adapter_model.safetensors", "pt") as f:
        assert f.keys() and all("lora_" in key for key in f.keys())  # the adapter only, no embeddings


def test_a_targeted_embedding_is_saved_as_peft_would(tmp_path, unreachable_hub):
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32, hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2)
    policy = get_peft_model(LlamaForCausalLM(config), LoraConfig(r=2, target_modules=["q_proj", "embed_tokens"]))
    assert save_embedding_layers(on_hub_base(policy)) is True
    save_adapter(policy, tmp_path / "a")
    assert unreachable_hub == []
    with safe_open(tmp_path / "a" / "adapter_model.safetensors", "pt") as f:
        assert any("embed_tokens.base_layer" in key or key.endswith("embed_tokens.weight") for key in f.keys())


@pytest.mark.parametrize("base_vocab, resized", [(32, False), (24, True), (None, False)])
def test_a_resized_vocabulary_is_read_from_the_local_base_config(tiny_policy, tmp_path, base_vocab, resized):
    base = tmp_path / "base"
    base.mkdir()
    if base_vocab is not None:
        (base / "config.json").write_text(json.dumps({"vocab_size": base_vocab}))
    tiny_policy.peft_config[tiny_policy.active_adapter].base_model_name_or_path = str(base)
    assert save_embedding_layers(tiny_policy) is resized


def test_the_base_vocabulary_comes_from_the_cache_never_the_network(tmp_path, monkeypatch, unreachable_hub):
    assert local_base_vocab_size(HUB_ID) is None
    assert local_base_vocab_size("not a repo id/") is None
    assert local_base_vocab_size(None) is None
    assert unreachable_hub == []


def test_a_checkpoint_save_makes_no_hub_request(tiny_policy, tmp_path, unreachable_hub):
    """transformers' Trainer._save (every save_steps checkpoint) calls save_pretrained with peft's "auto": through
    RecordingGRPOTrainer._save it decides without the Hub, and the model's own method is back afterwards."""
    from types import SimpleNamespace

    from train.trainer import RecordingGRPOTrainer

    policy = on_hub_base(tiny_policy)
    trainer = object.__new__(RecordingGRPOTrainer)  # the save path only: no model loading, no TRL set-up
    trainer.model, trainer.processing_class, trainer.data_collator = policy, None, None
    trainer.accelerator = SimpleNamespace(unwrap_model=lambda model, keep_torch_compile=False: model)
    trainer.args = SimpleNamespace(output_dir=str(tmp_path), should_save=True)
    trainer._save(str(tmp_path / "checkpoint-1"))
    assert unreachable_hub == []
    assert (tmp_path / "checkpoint-1" / "adapter_model.safetensors").is_file()
    assert "save_pretrained" not in vars(policy)
