"""GRPOTrainer that hands every scored generation batch to a RolloutRecorder.

TRL keeps the last batch's prompts, completions, per-function rewards and advantages in
``self._logs`` (for its completions table); we read them right after
``_generate_and_score_completions`` and add ids, targets, lengths and truncation.
"""

from __future__ import annotations

import torch
from accelerate.utils import gather_object
from transformers import TrainerCallback
from trl import GRPOTrainer

from train.rollouts import RolloutRecorder, rollouts_from_batch


class RecordingGRPOTrainer(GRPOTrainer):
    def __init__(
        self,
        *args,
        rollout_recorder: RolloutRecorder | None = None,
        reward_names: list[str],
        engine_settings=None,
        **kwargs,
    ):
        """``engine_settings`` (train.adapter_engine.EngineSettings): vLLM rollouts with adapter-only sync."""
        if engine_settings is None:
            super().__init__(*args, **kwargs)
        else:
            from train.adapter_engine import adapter_generation

            with adapter_generation(engine_settings):
                super().__init__(*args, **kwargs)
        self.rollout_recorder = rollout_recorder
        # TRL names rewards after the function (format_reward); logs use the config's names (format)
        self._reward_names = dict(zip(self.reward_func_names, reward_names))

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        if self.rollout_recorder is not None and self.model.training:
            self._record(inputs, output)
        return output

    def _record(self, inputs: list[dict], output: dict) -> None:
        completion_ids = output["completion_ids"]
        eos = torch.tensor(self.eos_token_ids, device=completion_ids.device)
        terminated = torch.isin(completion_ids, eos).any(dim=1).tolist()
        lengths = output["completion_mask"].sum(dim=1).tolist()
        # collective calls: every process takes part, only the main one writes
        ids = gather_object([row.get("id", f"row-{i}") for i, row in enumerate(inputs)])
        # the reference a rollout log's target holds: the math answer, or a code problem's test spec
        answers = gather_object([row.get("answer", row.get("tests", "")) for row in inputs])
        lengths, terminated = gather_object(lengths), gather_object(terminated)
        if not self.accelerator.is_main_process:
            return
        n = len(ids)
        logs = self._logs
        rollouts = rollouts_from_batch(
            ids=ids,
            answers=answers,
            prompts=list(logs["prompt"])[-n:],
            completions=list(logs["completion"])[-n:],
            rewards={self._reward_names.get(k, k): list(v)[-n:] for k, v in logs["rewards"].items()},
            advantages=list(logs["advantages"])[-n:],
            lengths=lengths,
            max_completion_length=self.args.max_completion_length,
            terminated=terminated,
            num_generations=self.num_generations,
            step=self.state.global_step + 1,
        )
        self.rollout_recorder.add(rollouts)


class RolloutFlushCallback(TrainerCallback):
    """Writes the buffered rollouts whenever a checkpoint is saved, and at the end of training."""

    def __init__(self, recorder: RolloutRecorder) -> None:
        self.recorder = recorder

    def on_save(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.recorder.flush()
        return control

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.recorder.flush()
        return control
