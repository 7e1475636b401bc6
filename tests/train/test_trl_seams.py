"""train/trl_seams.py: every private TRL (and transformers Trainer) name verigrpo uses is still there and
still means what the seam module says, plus the public contracts the adapter engines rely on.

If a TRL upgrade moves one of these, a test here fails, rather than a run training on wrong rollouts.
The behaviour behind them is exercised for real by tests/integration/ (training, resume, the engines).
"""

import inspect
from types import SimpleNamespace

import pytest
from transformers import Trainer
from trl import GRPOTrainer
from trl.generation.vllm_generation import VLLMGeneration
from trl.trainer import grpo_trainer

from train import trl_seams
from train.trl_seams import SeamedGRPOTrainer, SeamedVLLMGeneration, generation_class


def source(obj) -> str:
    return inspect.getsource(obj)


def parameters(func) -> list[str]:
    return list(inspect.signature(func).parameters)


def test_the_pinned_trl_version_is_installed():
    from importlib.metadata import version

    assert version("trl") == trl_seams.TRL_VERSION


# ---- GRPOTrainer ----------------------------------------------------------------------------------


def test_generate_and_score_completions_is_each_batchs_step():
    """``on_batch_scored`` sees every generation batch: TRL's input preparation calls the overridden step."""
    assert parameters(GRPOTrainer._generate_and_score_completions) == ["self", "inputs"]
    assert "self._generate_and_score_completions(generation_batch)" in source(GRPOTrainer._prepare_inputs)
    assert SeamedGRPOTrainer._generate_and_score_completions is not GRPOTrainer._generate_and_score_completions


def test_logs_hold_the_last_batch_as_batch_logs_documents():
    """``batch_logs()``: prompt, completion, rewards by function and advantages, appended per batch."""
    init = source(GRPOTrainer.__init__)
    assert "self._logs = {" in init
    step = source(GRPOTrainer._generate_and_score_completions)
    for key in ("prompt", "completion", "advantages"):
        assert f'self._logs["{key}"].extend(' in step
    assert 'self._logs["rewards"][name].extend(' in step


def test_load_from_checkpoint_is_the_resume_weight_load():
    """``loading_checkpoint`` wraps the weight load of a resume (transformers' Trainer)."""
    assert parameters(Trainer._load_from_checkpoint) == ["self", "resume_from_checkpoint", "model"]
    assert "self._load_from_checkpoint(resume_from_checkpoint" in source(Trainer)
    assert "_load_from_checkpoint" not in GRPOTrainer.__dict__  # TRL does not override it


def test_load_optimizer_and_scheduler_is_the_resume_state_load():
    """Replay re-runs steps after a checkpoint with the optimizer and scheduler a resume would load."""
    assert "self._load_optimizer_and_scheduler(resume_from_checkpoint)" in source(Trainer)
    # TRL overrides it (and a resume calls TRL's): the seam calls whichever the trainer has, with one checkpoint
    assert parameters(GRPOTrainer._load_optimizer_and_scheduler) == ["self", "checkpoint"]


def test_log_completion_extra_is_the_log_extra_every_reward_function_gets():
    """``on_completion_extra`` sees each ``log_extra(column, values)`` call of a reward function (rollout logs'
    answer/explanation), after TRL has recorded it for its completions table."""
    assert parameters(GRPOTrainer._log_completion_extra) == ["self", "column", "values"]
    assert 'reward_kwargs["log_extra"] = self._log_completion_extra' in source(GRPOTrainer._calculate_rewards)
    assert SeamedGRPOTrainer._log_completion_extra is not GRPOTrainer._log_completion_extra


def test_the_trainer_hooks_are_no_ops_by_default():
    assert SeamedGRPOTrainer.on_batch_start(None, []) is None
    assert SeamedGRPOTrainer.on_batch_scored(None, [], {}) is None
    assert SeamedGRPOTrainer.on_completion_extra(None, "c", []) is None
    with SeamedGRPOTrainer.loading_checkpoint(None, model=None):
        pass
    trainer = SimpleNamespace(_logs={"prompt": ["p"]})
    assert SeamedGRPOTrainer.batch_logs(trainer) == {"prompt": ["p"]}


# ---- VLLMGeneration -------------------------------------------------------------------------------


def test_init_vllm_is_called_once_by_init():
    assert "self._init_vllm()" in source(VLLMGeneration.__init__)
    assert parameters(VLLMGeneration._init_vllm) == ["self"]


def test_dist_gathers_params_and_weights_sleeping_triggers_a_re_push():
    init, generate = source(VLLMGeneration.__init__), source(VLLMGeneration.generate)
    assert "self._dist = DistributedBackend(accelerator)" in init
    # TRL re-pushes the weights before generating when they sleep; the adapter engines mark them resident
    assert "self._llm_weights_sleeping:\n            self.sync_weights()" in generate


class Quiet(SeamedVLLMGeneration):
    """The seam class with vLLM's start-up replaced by a note: builds in milliseconds, no vLLM needed."""

    def start_engine(self):
        self.started = True


def quiet_generation():
    accelerator = SimpleNamespace(state=SimpleNamespace(deepspeed_plugin=None, fsdp_plugin=None))
    return Quiet(model=None, accelerator=accelerator, processing_class=None, enable_sleep_mode=True)


def test_the_generation_helpers_reach_trls_private_parts():
    engine = quiet_generation()
    assert engine.started  # TRL's __init__ ran start_engine through _init_vllm
    with engine.gather_params([]):  # no ZeRO-3 here: TRL's backend yields without gathering
        pass
    engine._llm_weights_sleeping = True
    engine.mark_weights_resident()
    assert engine._llm_weights_sleeping is False


def test_an_engine_without_start_engine_refuses_to_build():
    accelerator = SimpleNamespace(state=SimpleNamespace(deepspeed_plugin=None, fsdp_plugin=None))
    with pytest.raises(NotImplementedError):
        SeamedVLLMGeneration(model=None, accelerator=accelerator, processing_class=None)


# ---- the generation class GRPOTrainer builds --------------------------------------------------------


def test_grpo_trainer_builds_the_module_level_generation_class():
    assert grpo_trainer.VLLMGeneration is VLLMGeneration
    assert "self.vllm_generation = VLLMGeneration(" in source(GRPOTrainer.__init__)


def test_the_swap_of_trls_generation_class_is_undone_even_on_error():
    with pytest.raises(RuntimeError, match="boom"), generation_class(Quiet):
        assert grpo_trainer.VLLMGeneration is Quiet
        raise RuntimeError("boom")
    assert grpo_trainer.VLLMGeneration is VLLMGeneration


def test_a_swap_inside_a_swap_is_refused():
    """A second swap would restore the wrong class: the seam checks it starts from TRL's own."""
    with generation_class(Quiet), pytest.raises(RuntimeError, match="builds its vLLM backend differently"):
        with generation_class(Quiet):
            pass
    assert grpo_trainer.VLLMGeneration is VLLMGeneration


# ---- public contracts the engines rely on (train/engines/colocated.py, server.py) ------------------------


def test_the_colocated_engine_contract():
    """``_AdapterLLM`` intercepts ``self.llm.generate``; TRL syncs (sync_weights) before it generates."""
    assert parameters(VLLMGeneration.generate) == ["self", "prompts", "images", "num_generations", "profiler"]
    generate = source(VLLMGeneration.generate)
    assert "self.llm.generate(" in generate and "self.sync_weights()" in generate
    assert callable(VLLMGeneration.sync_weights)


def test_the_server_engine_contract():
    """``ServerPool`` is TRL's ``vllm_client``: the server-mode generate calls it on the main process with
    these sampling keys and reads these result keys; GRPOTrainer asks it for the logprobs mode."""
    generate = source(VLLMGeneration.generate)
    assert "self.vllm_client.generate(" in generate and "if accelerator.is_main_process:" in generate
    for key in ("prompt_ids", "completion_ids", "logprobs", "logprob_token_ids"):
        assert f'"{key}"' in generate or f'get("{key}")' in generate
    for kw in ("n", "repetition_penalty", "temperature", "top_p", "top_k", "min_p", "max_tokens", "logprobs"):
        assert f'"{kw}":' in generate  # the sampling dict passed to vllm_client.generate
    assert "structured_outputs_regex" in generate and "generation_kwargs" in generate
    init = source(GRPOTrainer.__init__)
    assert 'vllm_client.get_server_info()["model_config"]["logprobs_mode"]' in init
    assert "self.vllm_generation.sync_weights()" in source(GRPOTrainer._generate_single_turn)


def test_profiling_contexts_report_each_phase_through_log_metrics():
    from trl.extras.profiling import ProfilingContext

    assert list(inspect.signature(ProfilingContext._log_metrics).parameters) == ["self", "duration"], (
        f"TRL's ProfilingContext._log_metrics moved: train/trl_seams.py's profiled_phases (read in trl {trl_seams.TRL_VERSION})"
    )
    seen = []
    with trl_seams.profiled_phases(lambda name, seconds: seen.append((name, seconds >= 0))):
        with ProfilingContext("GRPOTrainer.phase", report_to=[], is_main_process=False):
            pass
    with ProfilingContext("GRPOTrainer.after", report_to=[], is_main_process=False):
        pass
    assert seen == [("GRPOTrainer.phase", True)]
