"""Held-out evals while training: the trainer's evaluation is the Inspect task ``inspect eval`` runs.

With ``eval_strategy: steps`` (every ``eval_steps``; ``epoch``: after each epoch; ``eval_on_start``: also at
step 0), ``RecordingGRPOTrainer.evaluate`` runs the eval task of the dataset's domain (``problems/domains.py``:
``evals/math_task.py@math_verified`` for math, ``evals/code_task.py@code_verified`` for code) on the problems
the config does not train on (``held_out_task_args``, the demo's arguments), greedily,
on the policy in memory (``evals/providers/policy_model.py``). Each eval

* writes its Inspect log to ``<output_dir>/evals/held-out-step000050.eval`` (``inspect view``, ``inspect score``
  and ``read_eval_log`` read it like any other);
* returns the log's metrics as ``eval_<score>/<metric>`` (math: ``eval_correct/accuracy``,
  ``eval_correct/stderr``, ``eval_format/mean``), plus ``eval_samples`` and transformers' ``eval_runtime`` and
  ``eval_samples_per_second``, which the trainer logs (log history, trainer_state.json, ``report_to``);
  ``train/artifacts/curve.py`` draws the headline beside the training reward.

Only the main process evaluates; every process enters ``policy_for_eval`` (under ZeRO-3 it gathers the
weights, a collective), the others wait at a barrier, and the metrics are broadcast so each process logs the
same numbers. Nothing of the training state changes: the model goes back to train mode, gradient
checkpointing is restored (TRL's ``unwrap_model_for_generation``), no gradient is computed, and the
Python, NumPy and torch random streams are restored, and a 4-bit policy keeps its training computation
(``cpu/bnb_cpu.py``: on CPU, bitsandbytes would otherwise repack the layers for a bf16 kernel in eval
mode, and the steps after the eval would pass no gradient through the base). A seeded run with evals trains
exactly as one without (tests/integration/test_held_out_eval.py).

A run with ``tools: [python]`` evaluates with the tool: the task gets ``tools=true`` and the run's ``tool_*`` limits
(``problems/domains.py``), and the policy's provider renders, parses and limits tool turns as training does
(``python_tool/turns.py``: the run's tool template, tool schema, rounds and completion budget).
"""

from __future__ import annotations

import importlib
import os
import random
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from evals.providers.checkpoint_eval import EvalFailed
from problems.domains import Domain
from problems.math_data import DatasetError
from train.config.resolved import RunPlan

LOG_NAME = "held-out-step{step:06d}.eval"


def eval_task_function(spec: str):
    """The ``@task`` function an ``inspect eval`` spec names: ``evals/math_task.py@math_verified`` ->
    ``evals.math_task.math_verified`` (imported as the package module, as the demo does)."""
    path, _, name = spec.partition("@")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, name)


def held_out_max_tokens(script_args, training_args) -> int:
    """Tokens per held-out completion: ``eval_max_tokens``, else twice the training completion length (the
    demo's rule: room to finish an answer the policy is still learning to shorten)."""
    return script_args.eval_max_tokens or 2 * training_args.max_completion_length


def held_out_task_args(config, problems: int | None, max_tokens: int, domain: Domain) -> dict:
    """The arguments of the domain's eval task (``problems/domains.py``: ``evals/math_task.py@math_verified`` for
    math) for the problems ``config`` (ScriptArguments) does not train on: arithmetic's 'test' split of the same
    generator (same operations, range and seed), GSM8K's test split, or ``eval_dataset_path``; the same worked
    examples and think setting (``-T`` values as the CLI takes them). DatasetError when the dataset has none.
    ``domain``: the dataset's (a run's: train/config/resolved.py; else ``problems.domains.domain_of_source``)."""
    if domain.held_out is None:
        raise DatasetError(f"dataset {config.dataset!r} ({domain.name}) has no eval task to run held-out evals with")
    return domain.held_out(config, problems, max_tokens)


@dataclass
class HeldOutEval:
    """The task (built once: its problems load before the model does), where its logs go, how it batches."""

    task: object  # inspect_ai.Task
    spec: str  # the task as `inspect eval` names it
    task_args: dict
    log_dir: Path
    run_name: str
    batch_size: int
    headline: str  # the metric the summary line and the curve show (the domain's eval_metric)
    tool_config: dict | None = None  # a tool run's tool keys (python_tool.trl_environment.TOOL_CONFIG_KEYS) or None
    # the messages each sample's chain sends the model, where they are not its input (an Inspect task's solvers
    # build them): the policy plans its fixed batches by them; None: the samples' inputs
    prompts: list | None = None

    @property
    def problems(self) -> int:
        return len(self.task.dataset)

    def eval_dataset(self):
        """The held-out problems' ids: the trainer's ``eval_dataset`` (transformers needs one to evaluate)."""
        from datasets import Dataset

        return Dataset.from_dict({"id": [str(sample.id) for sample in self.task.dataset]})

    def run(self, policy, tokenizer, step: int) -> tuple[dict[str, float], Path]:
        """Evaluate ``policy`` (in eval mode, unwrapped) at ``step``: (metrics, the log's path)."""
        from inspect_ai import eval as inspect_eval
        from transformers.trainer_utils import speed_metrics

        from evals.providers.policy_model import policy_model  # lazy: Inspect; train/grpo.py --help imports this module

        start = time.time()
        log_args = {"training_step": step, "batch_size": self.batch_size, "greedy": True}
        model = policy_model(
            f"{self.run_name}@step-{step}",
            policy,
            tokenizer,
            self.prompts if self.prompts is not None else [sample.input for sample in self.task.dataset],
            self.batch_size,
            log_args,
            tool_config=self.tool_config,
        )
        self.log_dir.mkdir(parents=True, exist_ok=True)
        writing = Path(tempfile.mkdtemp(dir=self.log_dir, prefix=".writing-"))  # renamed into place when done
        try:
            (log,) = inspect_eval(
                self.task,
                model=model,
                log_dir=str(writing),
                max_connections=max(1, self.problems),  # every sample waits on its batch; batches are fixed
                display="none",
                metadata={"training_step": step, "run": self.run_name, "task": self.spec},
            )
            if log.status != "success":
                raise EvalFailed(f"the held-out eval at step {step} failed ({log.status}): {log.error}")
            final = self.log_dir / LOG_NAME.format(step=step)
            os.replace(log.location, final)
        finally:
            shutil.rmtree(writing, ignore_errors=True)
        metrics = {
            f"eval_{score.name}/{name}": metric.value
            for score in log.results.scores
            for name, metric in score.metrics.items()
        }
        metrics["eval_samples"] = log.results.completed_samples
        metrics.update(speed_metrics("eval", start, num_samples=log.results.completed_samples))
        return metrics, final


def held_out_eval(plan: RunPlan) -> HeldOutEval | None:
    """The run's held-out eval: the resolved domain's task on the config's held-out problems (loaded now: a dataset
    that cannot load stops the run before the model does); None when ``eval_strategy`` is ``no``."""
    script_args, training_args, domain = plan.script_args, plan.training_args, plan.domain
    if not plan.held_out:
        if training_args.eval_steps is not None and plan.main_process:
            print("[verigrpo] eval_steps is set but eval_strategy is no: no held-out evals (set eval_strategy: steps)")
        return None
    max_tokens = held_out_max_tokens(script_args, training_args)
    task_args = held_out_task_args(script_args, script_args.eval_problems, max_tokens, domain)
    task = (domain.eval_task_factory or eval_task_function(domain.eval_task))(**task_args)
    output_dir = Path(training_args.output_dir)
    held_out = HeldOutEval(
        task=task,
        spec=domain.eval_task,
        task_args=task_args,
        log_dir=output_dir / "evals",
        run_name=str(output_dir),
        batch_size=training_args.per_device_eval_batch_size,
        headline=domain.eval_metric[0],
        tool_config=plan.tool_setup.eval_config if plan.tool_setup else None,
        prompts=plan.inspect_task.prompts_of(task) if plan.inspect_task is not None else None,
    )
    if plan.main_process:
        when = "every epoch" if training_args.eval_strategy == "epoch" else f"every {training_args.eval_steps} steps"
        print(
            f"[verigrpo] held-out evals: {held_out.spec} on {held_out.problems} problems, greedy, "
            f"{when}{' and at step 0' if training_args.eval_on_start else ''}; logs in {held_out.log_dir}"
        )
    return held_out


@contextmanager
def rng_untouched():
    """Python's, NumPy's and torch's (CPU and CUDA) global random streams as they were, on exit."""
    import numpy as np
    import torch

    python_state, numpy_state = random.getstate(), np.random.get_state()
    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)


@contextmanager
def policy_for_eval(trainer):
    """The policy ready to generate, on every process: unwrapped (TRL's ``unwrap_model_for_generation``:
    ZeRO-3 gathers the weights, gradient checkpointing is off), in eval mode (no dropout), random streams kept;
    on exit, train mode and gradient checkpointing are back."""
    from trl.models import unwrap_model_for_generation

    with (
        rng_untouched(),
        unwrap_model_for_generation(
            trainer.model_wrapped,
            trainer.accelerator,
            gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
            gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
        ) as policy,
    ):
        was_training = policy.training
        policy.eval()
        try:
            yield policy
        finally:
            policy.train(was_training)


def evaluate_held_out(trainer, held_out: HeldOutEval, policy) -> dict[str, float]:
    """Run the held-out eval of ``policy`` (from ``policy_for_eval``) at the trainer's current step on the main
    process; every process calls it and returns the same metrics."""
    from accelerate.utils import broadcast_object_list

    step = trainer.state.global_step
    result = [None]
    if trainer.accelerator.is_main_process:
        metrics, path = held_out.run(policy, trainer.processing_class, step)
        print(
            f"[verigrpo] held-out eval at step {step}: {held_out.headline.removeprefix('eval_')} "
            f"{metrics.get(held_out.headline, float('nan')):.3f} on {metrics['eval_samples']} problems "
            f"({metrics['eval_runtime']:.0f} s): {path}",
            flush=True,
        )
        result = [metrics]
    trainer.accelerator.wait_for_everyone()  # the other processes wait here while the main one evaluates
    return broadcast_object_list(result)[0]
