"""The trainer: TRL's GRPOTrainer (``RecordingGRPOTrainer``) that hands every scored generation batch to a RolloutRecorder, owns its rollout engine, and
evaluates with the held-out Inspect eval (``train/artifacts/held_out.py``).

TRL keeps the last batch's prompts, completions, per-function rewards and advantages (for its
completions table); right after each batch is scored we read them (``batch_logs``, through
``train/trl_seams.py``) and add ids, targets, token counts, truncation, the batch's time span and why
each reward was paid: the columns the reward functions hand to TRL's ``log_extra``
(``rewards.reward_log``), kept per batch as they arrive (``on_completion_extra``).
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager, nullcontext
from datetime import datetime, timezone

import torch
from accelerate.utils import gather_object
from transformers import TrainerCallback

from cpu.bnb_cpu import dequantized
from cpu.grouped_attention import grouped_kv_attention
from cpu.lora_dtype import fp32_adapter_on_emulating_cpu
from python_tool.trl_environment import tool_metrics
from rewards.reward_log import FIELDS, why_column, whys_from_columns
from train.artifacts.held_out import HeldOutEval, evaluate_held_out, policy_for_eval
from train.artifacts.replay_batches import REPLAY_ROW
from train.artifacts.rollout_log import RolloutRecorder, rollouts_from_batch
from train.engines.adapter_save import saves_without_the_hub
from train.engines.base import AdapterEngine
from train.trl_seams import SeamedGRPOTrainer, generation_class, lm_head_on_labelled_positions


class RecordingGRPOTrainer(SeamedGRPOTrainer):
    on_policy_guard = None  # train.guards.on_policy.OnPolicyGuard, set by train/run.py (None: no checks)
    replay_recorder = (
        None  # train.artifacts.replay_batches.ReplayRecorder with log_replay_batches (set by train/run.py)
    )
    run_guards: tuple = ()  # train/guards/ objects whose ``metrics()`` join the next training log (set by train/run.py)

    def __init__(
        self,
        *args,
        rollout_recorder: RolloutRecorder | None = None,
        reward_names: list[str],
        engine_factory=None,
        held_out_eval: HeldOutEval | None = None,
        **kwargs,
    ):
        """``engine_factory`` (``train.engines.factory.engine_factory``): the adapter engine TRL's vLLM
        generation object is built as; None: TRL's own generation. ``held_out_eval``: what ``evaluate`` runs
        (``train/artifacts/held_out.py``); its problems are the ``eval_dataset``."""
        if held_out_eval is not None:
            kwargs["eval_dataset"] = held_out_eval.eval_dataset()
        with generation_class(engine_factory) if engine_factory is not None else nullcontext():
            super().__init__(*args, **kwargs)
        adapter_line = fp32_adapter_on_emulating_cpu(self.model)  # before the optimizer is built (cpu/lora_dtype.py)
        if adapter_line and self.accelerator.is_main_process:
            print(adapter_line)
        self.held_out_eval = held_out_eval
        self.rollout_recorder = rollout_recorder
        # TRL names rewards after the function (format_reward); logs use the config's names (format)
        self._reward_names = dict(zip(self.reward_func_names, reward_names))
        self._batch_extra: dict[str, list] = defaultdict(list)  # this process's log_extra columns, this batch
        self._batch_started = datetime.now(timezone.utc)

    @contextmanager
    def generating(self):
        """TRL's own generation on CPU, sped up without changing a bit of what it samples: a 4-bit base is
        dequantized once per batch instead of on every decoding step (cpu/bnb_cpu.py ``dequantized``), and
        attention reads grouped KV heads instead of copying the cache per query head
        (cpu/grouped_attention.py). Not with vLLM, which generates elsewhere."""
        if self.use_vllm or next(self.model.parameters()).device.type != "cpu":
            yield
            return
        with dequantized(self.model), grouped_kv_attention():
            yield

    @contextmanager
    def computing_loss(self):
        """The loss forward on CPU, and the backward that follows it, with each 4-bit base layer dequantized once
        instead of in every call's forward and again in its backward (cpu/bnb_cpu.py ``dequantized(backward=True)``:
        the same weights, the same ``linear``, the same input gradients bit for bit). The autograd graph keeps the
        dequantized weights until the backward has used them; the layers get their own forward back at once."""
        if next(self.model.parameters()).device.type != "cpu":
            yield
            return
        with dequantized(self.model, backward=True):
            yield

    @contextmanager
    def loading_checkpoint(self, model):
        """Load the checkpoint, keeping every trainable parameter in the dtype the fresh run trains in.

        TRL casts a QLoRA adapter to bf16 when it builds the trainer, but transformers resumes a
        PEFT model with ``load_adapter(...)``, whose default ``autocast_adapter_dtype=True`` re-creates
        the adapter in fp32: a resumed run trained a different (fp32) adapter, with fp32 optimizer state
        (checkpoint adapter 9.8 MB before the resume, 19.6 MB after). Casting back is exact (the saved
        weights are bf16) and happens before the optimizer is built and its state loaded.
        """
        dtypes = {name: p.dtype for name, p in model.named_parameters() if p.requires_grad}
        yield
        for name, param in model.named_parameters():
            if name in dtypes and param.dtype != dtypes[name]:
                param.data = param.data.to(dtypes[name])

    @property
    def rollout_engine(self) -> AdapterEngine | None:
        """The adapter engine generating this run's rollouts (None: TRL's own generation)."""
        engine = getattr(self, "vllm_generation", None)
        return engine if isinstance(engine, AdapterEngine) else None

    def rollout_engine_state(self) -> dict | None:
        """run.json's ``rollout_engine``: the engine's mode, servers and current adapter (None without one)."""
        return self.rollout_engine.manifest_state() if self.rollout_engine is not None else None

    def close_rollout_engine(self) -> None:
        """Remove the engine's adapter files and release its servers; the one end-of-run path (idempotent)."""
        if self.rollout_engine is not None:
            self.rollout_engine.close()

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval") -> dict[str, float]:
        """The trainer's evaluation (``eval_strategy``/``eval_steps``/``eval_on_start``) is the held-out Inspect
        eval of the policy as it is now (``train/artifacts/held_out.py``), logged like any evaluation."""
        if self.held_out_eval is None:
            return super().evaluate(eval_dataset, ignore_keys, metric_key_prefix)
        with policy_for_eval(self) as policy:
            metrics = evaluate_held_out(self, self.held_out_eval, policy)
            self.log(dict(metrics))  # while in eval mode: TRL's log adds none of the training step's metrics
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics

    def _save(self, output_dir: str | None = None, state_dict: dict | None = None) -> None:
        """transformers' checkpoint save, with peft's ``save_embedding_layers`` decided without a Hub request
        (train/engines/adapter_save.py: "auto" asked the Hub at every save when the base is a Hub id)."""
        with saves_without_the_hub(self.accelerator.unwrap_model(self.model, keep_torch_compile=False)):
            super()._save(output_dir, state_dict)

    def create_model_card(self, *args, **kwargs):
        """Skip TRL's card: for a local base it reads "fine-tuned version of [None](https://huggingface.co/None)".

        train/artifacts/manifest.py writes README.md from run.json (base model included) at every save and at the end.
        """

    def on_completion_extra(self, column: str, values: list) -> None:
        """A reward function's ``log_extra`` column (``rewards.reward_log``): kept for this batch's rollout log."""
        self._batch_extra[column].extend(values)

    def on_batch_start(self, inputs: list[dict]) -> None:
        self._batch_extra.clear()  # only this batch's reward calls fill it
        self._batch_started = datetime.now(timezone.utc)

    def on_batch_scored(self, inputs: list[dict], output: dict) -> None:
        if self.replay_recorder is not None and self.model.training:  # each row's index in the batch (replay_batches)
            first = self.accelerator.process_index * len(inputs)
            output[REPLAY_ROW] = torch.arange(first, first + len(inputs), device=output["advantages"].device)
        for name, value in tool_metrics(self.environments).items():  # tool runs: calls, errors, seconds per rollout
            self.add_step_metric(name, value)
        if self.rollout_recorder is not None and self.model.training:
            self._record(inputs, output, self._batch_started, datetime.now(timezone.utc))
        if self.on_policy_guard is not None and self.model.training and self.rollout_engine is not None:
            self.on_policy_guard.after_batch(self)  # the engine was just synced: it must score as the policy does

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """TRL's loss (inside ``computing_loss``); with ``log_replay_batches`` the exact batch is recorded first
        (train/replay.py)."""
        if self.replay_recorder is not None and model.training:
            self.replay_recorder.add(self.state.global_step + 1, inputs, num_items_in_batch)
        with self.computing_loss():
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    def training_step(self, model, inputs, num_items_in_batch):
        """TRL's step (the batch's logprobs, the loss and its backward) with TRL's fused LM head projecting only the
        completion positions on CPU too, as on CUDA: the same numbers (train/trl_seams.py)."""
        with lm_head_on_labelled_positions():
            return super().training_step(model, inputs, num_items_in_batch)

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        """TRL's log, plus the run guards' metrics of the step (train/guards/)."""
        if self.model.training:
            for guard in self.run_guards:
                logs = {**logs, **guard.metrics()}
        super().log(logs, start_time)

    def _local_whys(self, count: int) -> list[dict]:
        """Per local completion, the ``rewards.reward_log`` columns the reward functions logged (empty if none)."""
        columns = [why_column(name, field) for name in self.reward_func_names for field in FIELDS]
        for column in columns:
            if column in self._batch_extra and len(self._batch_extra[column]) != count:
                raise ValueError(
                    f"reward column {column!r} holds {len(self._batch_extra[column])} values for {count} completions"
                )
        present = [column for column in columns if column in self._batch_extra]
        return [{column: self._batch_extra[column][i] for column in present} for i in range(count)]

    def _record(self, inputs: list[dict], output: dict, started: datetime, completed: datetime) -> None:
        completion_ids = output["completion_ids"]
        eos = torch.tensor(self.eos_token_ids, device=completion_ids.device)
        terminated = torch.isin(completion_ids, eos).any(dim=1).tolist()
        lengths = output["completion_mask"].sum(dim=1).tolist()
        prompt_lengths = output["prompt_mask"].sum(dim=1).tolist()
        # collective calls: every process takes part, only the main one writes
        ids = gather_object([row.get("id", f"row-{i}") for i, row in enumerate(inputs)])
        # the reference a rollout log's target holds: the math answer, or a code problem's test spec
        answers = gather_object([row.get("answer", row.get("tests", "")) for row in inputs])
        lengths, terminated = gather_object(lengths), gather_object(terminated)
        prompt_lengths = gather_object(prompt_lengths)
        why_rows = gather_object(self._local_whys(len(inputs)))  # in completion order, as TRL gathers rewards
        if not self.accelerator.is_main_process:
            return
        # which adapter version generated this batch (adapter engines; TRL syncs before it generates)
        adapter = self.rollout_engine.rollout_adapter if self.rollout_engine is not None else None
        n = len(ids)
        logs = self.batch_logs()
        logged = dict.fromkeys(column for row in why_rows for column in row)
        why_columns = {column: [row.get(column) for row in why_rows] for column in logged}
        whys = {
            self._reward_names.get(name, name): whys_from_columns(name, why_columns, n)
            for name in self.reward_func_names
        }
        generation = {"temperature": self.args.temperature, "top_p": self.args.top_p}
        if self.args.top_k:
            generation["top_k"] = self.args.top_k
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
            extra={"adapter": adapter} if adapter else None,
            whys=whys,
            prompt_lengths=prompt_lengths,
            started_at=started,
            completed_at=completed,
            generation=generation,
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


class RunSpanCallback(TrainerCallback):
    """Remembers the step this process started training at (0, or the resumed checkpoint's step).

    After a resume the trainer's state and log history hold the whole run; the summary of what this
    process did (steps, seconds per step) needs the difference.
    """

    def __init__(self) -> None:
        self.first_step: int | None = None

    def on_train_begin(self, args, state, control, **kwargs):
        self.first_step = state.global_step  # called after a checkpoint's state is loaded
        return control
