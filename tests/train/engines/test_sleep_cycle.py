"""The colocated engine through TRL's own generate/sync cycle, with sleep mode on and off.

vLLM's CPU build ignores sleep, so the real-engine tests cannot see what a GPU does when an adapter is loaded
into a sleeping engine. Here ``vllm.LLM`` is ``tests.helpers.sleeping_llm.SleepingLLM``, which keeps vLLM's
sleep bookkeeping (level 1 backs the weights pool up and restores it at wake-up; the LoRA slots live in that
pool), raises on ``add_lora`` while the weights sleep and on a rollout whose adapter is not in the slot. The
calls come from TRL's real code: ``GRPOTrainer._generate_single_turn`` (the trainer's sync-if-the-step-changed,
then ``VLLMGeneration.generate`` with its wake/sleep), on the real engine class with a real tiny peft policy.
"""

from types import SimpleNamespace

import pytest
from trl import GRPOTrainer

from tests.helpers.sleeping_llm import TAGS, SleepingLLM
from train.engines.colocated import AdapterSyncGeneration, EngineSettings


def one_process():
    """What TRL's VLLMGeneration and the colocated engine read from an Accelerator: one CPU process."""
    state = SimpleNamespace(deepspeed_plugin=None, fsdp_plugin=None)
    return SimpleNamespace(
        state=state, process_index=0, local_process_index=0, num_processes=1, is_main_process=True,
        device=SimpleNamespace(type="cpu"), wait_for_everyone=lambda: None,
    )  # fmt: skip


@pytest.fixture
def engine_env(monkeypatch):
    for name in ("MASTER_PORT", "MASTER_ADDR", "RANK", "LOCAL_RANK", "WORLD_SIZE", "VLLM_CPU_KVCACHE_SPACE"):
        monkeypatch.setenv(name, "")  # recorded, so the engine's writes are undone after the test
        monkeypatch.delenv(name)
    monkeypatch.setattr("vllm.LLM", SleepingLLM)


def build(tiny_policy, tmp_path, sleep: bool) -> AdapterSyncGeneration:
    settings = EngineSettings(
        base_model="m", quantization=None, dtype="float32", max_lora_rank=8, adapter_root=str(tmp_path)
    )
    return AdapterSyncGeneration(
        model=tiny_policy, accelerator=one_process(), processing_class=None, settings=settings,
        mode="colocate", enable_sleep_mode=sleep, max_completion_length=2,
    )  # fmt: skip


def trainer_around(engine):
    """The GRPOTrainer attributes ``_generate_single_turn`` reads on its vLLM path."""
    return SimpleNamespace(
        use_vllm=True, vllm_generation=engine, _last_loaded_step=-1, state=SimpleNamespace(global_step=0),
        args=SimpleNamespace(report_to=[]), accelerator=SimpleNamespace(device="cpu", is_main_process=True),
    )  # fmt: skip


def rollout(trainer):
    return GRPOTrainer._generate_single_turn(trainer, [[5, 6, 7], [8, 9]], None, {}, num_generations=2)


@pytest.mark.parametrize("sleep", [True, False], ids=["sleep-mode", "no-sleep"])
def test_one_adapter_version_per_step_loaded_awake_and_residency_agrees_with_trl(
    tiny_policy, tmp_path, engine_env, sleep
):
    engine = build(tiny_policy, tmp_path, sleep)
    llm = engine.llm._llm
    trainer = trainer_around(engine)
    try:
        assert llm.asleep == (set(TAGS) if sleep else set())  # asleep from the start: nothing is held while loading
        versions = []
        # step 0 and 2: one generation batch; step 1: a second one in the same step (an evaluation, or a later
        # generation batch before the optimizer steps), which must not load another version
        for step, batches in ((0, 1), (1, 2), (2, 1)):
            trainer.state.global_step = step
            for _ in range(batches):
                completion_ids, _ = rollout(trainer)
                assert completion_ids == [[1, 2], [1, 2]]
                # after each generate: TRL's flag says nothing must be re-pushed (level 1 keeps base and adapter), and
                # the engine's own record of what sleeps is vLLM's
                assert engine._llm_weights_sleeping is False
                assert engine.llm.asleep == llm.asleep == (set(TAGS) if sleep else set())
            versions.append(engine.adapter_version)
        assert versions == [1, 2, 3]  # exactly one adapter version per optimizer step
        generated = [event[1] for event in llm.events if event[0] == "generate"]
        assert generated == [1, 2, 2, 3]  # every rollout used the adapter of its step, and the slot held it
        if sleep:
            assert ("sleep", 2) not in llm.events  # level 2 would discard the base and the adapter
    finally:
        engine.close()


def test_the_on_policy_check_syncs_the_way_training_does(tiny_policy, tmp_path, engine_env):
    """The GPU check's sync must meet the engine as training leaves it (asleep after TRL's generate), so an
    adapter loaded into a sleeping engine fails the check instead of being woken around."""
    from train.gpu_check.on_policy import score_stale_and_synced

    engine = build(tiny_policy, tmp_path, sleep=True)
    llm = engine.llm._llm
    trainer = trainer_around(engine)
    try:
        rollout(trainer)  # training: sync (v1), generate, sleep
        llm.events.clear()
        stale, synced, versions = score_stale_and_synced(engine, [5, 6, 7], [8, 9])
        assert versions == (1, 2) and len(stale) == len(synced) == 2
        kinds = [event[0] for event in llm.events]
        assert kinds.index("sleep") < kinds.index("add_lora")  # the sync found the engine asleep, as in training
        assert [event[1] for event in llm.events if event[0] == "generate"] == [1, 2]  # stale = the rollouts' adapter
        assert llm.asleep == set(TAGS)  # left as training leaves it
    finally:
        engine.close()
