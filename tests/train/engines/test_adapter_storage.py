"""Where the colocated engine writes adapter versions (train/engines/adapter_storage.py): /dev/shm only when it
holds two versions of the run's adapter, else the disk temporary directory with a one-line notice; the config's
``adapter_root`` when set; a refusal before loading when no place has room. ``shutil.disk_usage`` is mocked, so
the verdicts do not depend on this machine's free space."""

import logging
import shutil
import tempfile
from collections import namedtuple

import pytest

from tests.helpers.training import fake_accelerator
from train.config import ConfigError, parse_config
from train.config.lora_checks import check_lora
from train.engines import adapter_storage
from train.engines.adapter_storage import RAM_ROOT, adapter_bytes, choose_root
from train.engines.colocated import AdapterSyncGeneration, EngineSettings
from train.engines.vllm_lora import lora_model_on_meta

MIB = 1024**2
Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def free_space(monkeypatch):
    """Set the free bytes ``shutil.disk_usage`` reports: /dev/shm, and every other path (the disk)."""
    space = {"shm": 10_000 * MIB, "disk": 10_000 * MIB}

    def usage(path):
        free = space["shm"] if str(path).startswith(RAM_ROOT) else space["disk"]
        return Usage(free * 2, free, free)

    monkeypatch.setattr(shutil, "disk_usage", usage)
    return space


@pytest.fixture(scope="module")
def qwen_1_5b(tmp_path_factory):
    """Qwen2.5-1.5B's shape (config.json only): what its adapter weighs, without any weights."""
    from transformers import Qwen2Config

    path = tmp_path_factory.mktemp("qwen1.5b")
    Qwen2Config(
        vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
        num_key_value_heads=2, tie_word_embeddings=True,
    ).save_pretrained(path)  # fmt: skip
    return str(path)


def test_a_1_5b_qlora_adapter_at_rank_16_needs_more_than_dockers_default_shm(qwen_1_5b, free_space):
    """The issue's arithmetic, from the meta model: 37 MB in bf16, two at once over a 64 MiB /dev/shm."""
    from peft import LoraConfig

    targets = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    model = lora_model_on_meta(qwen_1_5b, LoraConfig(r=16, target_modules=targets))
    size = adapter_bytes(model, 2)  # TRL keeps a quantized policy's adapter in bf16
    assert size == 28 * 16 * (3072 + 1792 + 1792 + 3072 + 3 * 10496) * 2  # 36.9 MB
    free_space["shm"] = 64 * MIB
    root = choose_root(size)
    assert root.parent is None and "64 MiB free" in root.notice and "--shm-size" in root.notice
    free_space["shm"] = 100 * MIB
    assert choose_root(size).parent == RAM_ROOT


@pytest.mark.parametrize(
    ("shm_mib", "disk_mib", "where"),
    [
        (1000, 1000, "shm"),  # room for two versions: RAM-backed, no disk writes per step
        (3, 1000, "disk"),  # /dev/shm too small (a container's --shm-size): disk, with a notice
        (1, 1, "refused"),  # nowhere: stop before loading
    ],
)
def test_room_decides_between_shm_disk_and_a_refusal(free_space, shm_mib, disk_mib, where):
    free_space.update(shm=shm_mib * MIB, disk=disk_mib * MIB)
    adapter = 2 * MIB  # needs 4.4 MiB
    if where == "refused":
        with pytest.raises(OSError, match=r"has 1 MiB free; .* two 2 MiB adapter versions .*adapter_root"):
            choose_root(adapter)
        return
    root = choose_root(adapter)
    assert root.parent == (RAM_ROOT if where == "shm" else None)
    assert (root.notice is None) == (where == "shm")


def test_a_configured_adapter_root_is_used_as_is_and_checked_for_room(free_space, tmp_path):
    root = choose_root(MIB, str(tmp_path / "adapters"))
    assert root.configured and root.parent == str(tmp_path / "adapters") and (tmp_path / "adapters").is_dir()
    free_space["disk"] = MIB
    with pytest.raises(OSError, match=r"adapter_root .* has 1 MiB free"):
        choose_root(MIB, str(tmp_path / "adapters"))


def test_the_engine_falls_back_to_disk_when_shm_is_full(tiny_policy, free_space, caplog):
    """Through the engine class: a full /dev/shm sends the versions to disk, with one notice."""

    class NoVLLM(AdapterSyncGeneration):
        def start_engine(self):
            pass

    free_space["shm"] = 0
    settings = EngineSettings(base_model="m", quantization=None, dtype="float32", max_lora_rank=8)
    with caplog.at_level(logging.WARNING, logger=adapter_storage.__name__):
        engine = NoVLLM(model=tiny_policy, accelerator=fake_accelerator(), processing_class=None, settings=settings)
    try:
        assert not str(engine.adapter_dir).startswith(RAM_ROOT)
        assert str(engine.adapter_dir).startswith(tempfile.gettempdir())
        (notice,) = [r.getMessage() for r in caplog.records]
        assert "\n" not in notice and notice.startswith(f"adapter versions go to {tempfile.gettempdir()} (disk)")
    finally:
        engine.close()
    assert not engine.adapter_dir.exists()


def test_adapter_root_is_a_config_key_that_reaches_the_engine(tmp_path):
    from train.engines.factory import engine_factory

    script_args, training_args, model_args = parse_config(
        ["--config", "configs/cpu-smollm2-vllm.yaml", "--adapter_root", str(tmp_path / "a")]
    )
    assert engine_factory(script_args, training_args, model_args).keywords["settings"].adapter_root == str(
        tmp_path / "a"
    )


def test_preflight_refuses_when_no_place_holds_two_versions(free_space, tmp_path):
    from tests.helpers.training import tiny_llama_dir

    model = str(tiny_llama_dir(tmp_path / "m"))
    _, training_args, model_args = parse_config(
        ["--config", "configs/cpu-smollm2-vllm.yaml", "--model_name_or_path", model]
    )
    check_lora(training_args, model_args)  # room everywhere
    free_space.update(shm=0, disk=0)
    with pytest.raises(ConfigError, match=r"use_vllm with a LoRA policy: the temporary directory .* 0 MiB free"):
        check_lora(training_args, model_args)
    training_args.use_vllm = False  # transformers generation writes no adapter versions
    check_lora(training_args, model_args)
