"""train/engines/base.py, what both adapter engines share: each sync saves the policy's real adapter and loads
it under a new name, only the current version's files stay, run.json's state follows, and ``close`` removes
the engine's files once, also when the engine failed to start.

vLLM itself is replaced by a recorder (``start_engine`` and ``load_adapter``); the policy is a real (tiny)
peft model, so the files are the ones peft writes. The engines with vLLM run in tests/integration/.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers.training import fake_accelerator
from train.engines import colocated
from train.engines.base import AdapterEngine
from train.engines.choice import Engine
from train.engines.colocated import AdapterSyncGeneration, EngineSettings


class Recorded(AdapterEngine):
    """An adapter engine whose "vLLM" records what it was asked to load."""

    engine = Engine.COLOCATED

    def __init__(self, *args, fail_start: bool = False, **kwargs):
        self.loads, self.released, self.fail_start = [], 0, fail_start
        super().__init__(*args, **kwargs)

    def start_engine(self):
        if self.fail_start:
            raise RuntimeError("vLLM did not start")

    def adapter_name(self, version):
        return f"test-v{version}"

    def adapter_path(self, name, version):
        return self.adapter_dir / name

    def load_adapter(self, name, version, path):
        assert (path / "adapter_model.safetensors").is_file() and (path / "adapter_config.json").is_file()
        self.loads.append(name)

    def release(self):
        self.released += 1


def build(tiny_policy, adapter_dir: Path, owns: bool, **kwargs) -> Recorded:
    return Recorded(
        model=tiny_policy,
        accelerator=fake_accelerator(),
        processing_class=None,
        settings=None,
        adapter_dir=adapter_dir,
        owns_adapter_dir=owns,
        **kwargs,
    )


def test_each_sync_loads_a_new_version_and_keeps_only_the_current_files(tiny_policy, tmp_path):
    engine = build(tiny_policy, tmp_path / "adapters", owns=False)
    assert engine.rollout_adapter is None and engine.adapter_version == 0
    engine.sync_weights()
    engine.sync_weights()
    assert engine.loads == ["test-v1", "test-v2"] and engine.sync_record.loaded == ["test-v1", "test-v2"]
    assert len(engine.sync_record.seconds) == 2
    assert sorted(p.name for p in (tmp_path / "adapters").iterdir()) == ["test-v2"]
    assert engine.manifest_state() == {"mode": "colocate", "adapter_versions_loaded": 2, "rollout_adapter": "test-v2"}


def test_close_removes_only_the_current_version_from_a_shared_directory(tiny_policy, tmp_path):
    shared = tmp_path / "shared"
    (shared / "another-run-v7").mkdir(parents=True)
    engine = build(tiny_policy, shared, owns=False)
    engine.sync_weights()
    engine.close()
    engine.close()  # idempotent: the second call releases nothing again
    assert engine.released == 1
    assert [p.name for p in shared.iterdir()] == ["another-run-v7"]
    assert engine.manifest_state()["rollout_adapter"] == "test-v1"  # run.json still names the last adapter


def test_close_removes_a_directory_the_engine_owns(tiny_policy, tmp_path):
    engine = build(tiny_policy, tmp_path / "own", owns=True)
    engine.sync_weights()
    engine.close()
    assert not (tmp_path / "own").exists()


def test_an_engine_that_fails_to_start_leaves_no_files(tiny_policy, tmp_path):
    (tmp_path / "own").mkdir()
    with pytest.raises(RuntimeError, match="vLLM did not start"):
        build(tiny_policy, tmp_path / "own", owns=True, fail_start=True)
    assert not (tmp_path / "own").exists()


def test_processes_that_do_not_load_adapters_still_count_versions(tiny_policy, tmp_path):
    """The server engine's other processes: they take part in the gather, write nothing, name no adapter."""

    class NotMain(Recorded):
        saves_here = False

    engine = NotMain(
        model=tiny_policy,
        accelerator=fake_accelerator(main=False),
        processing_class=None,
        settings=None,
        adapter_dir=tmp_path / "a",
        owns_adapter_dir=False,
    )
    engine.sync_weights()
    assert engine.adapter_version == 1 and engine.loads == [] and engine.rollout_adapter is None
    assert not (tmp_path / "a").exists()


class NoVLLM(AdapterSyncGeneration):
    """The colocated engine with vLLM replaced: its own directory handling is what is under test."""

    def start_engine(self):
        pass

    def load_adapter(self, name, version, path):
        self.lora_request = SimpleNamespace(lora_name=name)


def test_the_colocated_engine_writes_into_a_temporary_directory_named_after_its_process(tiny_policy, monkeypatch):
    import os

    settings = EngineSettings(base_model="m", quantization=None, dtype="float32", max_lora_rank=8)
    engine = NoVLLM(model=tiny_policy, accelerator=fake_accelerator(), processing_class=None, settings=settings)
    root = engine.adapter_dir
    try:
        assert root.name.startswith(f"{colocated.ADAPTER_DIR_PREFIX}{os.getpid()}-") and root.is_dir()
        engine.sync_weights()
        assert [p.name for p in root.iterdir()] == ["v000001-rank0"]
        assert engine.rollout_adapter == "policy-v1"
    finally:
        engine.close()  # also when an assertion above fails: the test must not leave /dev/shm behind
    assert not root.exists()


@pytest.mark.parametrize("preset", [None, "auto", "12345"])
def test_a_single_process_engine_meets_vllm_on_a_port_the_kernel_picks(tiny_policy, monkeypatch, preset):
    """TRL's rendezvous helper takes 29500 whenever it is free at that instant, as every other run on the machine
    does: two engines starting together both bound it and one died (EADDRINUSE). A launcher's port is kept."""
    import os
    import sys

    class Started(Exception):
        pass

    seen = {}

    def llm(**kwargs):  # vLLM's LLM: what matters is the rendezvous it would read from the environment
        seen.update(port=os.environ["MASTER_PORT"], world=os.environ["WORLD_SIZE"])
        raise Started

    for name in ("MASTER_PORT", "MASTER_ADDR", "RANK", "LOCAL_RANK", "WORLD_SIZE", "VLLM_CPU_KVCACHE_SPACE"):
        monkeypatch.setenv(name, "")  # restored (unset) after the test: the engine writes these
        monkeypatch.delenv(name)
    if preset:
        monkeypatch.setenv("MASTER_PORT", preset)
    monkeypatch.setitem(sys.modules, "vllm", SimpleNamespace(LLM=llm))
    settings = EngineSettings(base_model="m", quantization=None, dtype="float32", max_lora_rank=8)
    engine = NoVLLM(model=tiny_policy, accelerator=fake_accelerator(), processing_class=None, settings=settings)
    one = SimpleNamespace(process_index=0, local_process_index=0, num_processes=1, device=SimpleNamespace(type="cpu"))
    monkeypatch.setattr(engine, "accelerator", one)
    try:
        with pytest.raises(Started):
            AdapterSyncGeneration.start_engine(engine)
    finally:
        engine.close()
    assert seen["world"] == "1"
    if preset == "12345":
        assert seen["port"] == "12345"
    else:
        assert seen["port"].isdigit() and int(seen["port"]) != 29500
