"""The run as resolved once: after parsing and every check, ``train/grpo.py`` turns the config into one ``RunPlan``
(the dataset's domain and the reward functions, looked up once in the domain table; the rollout engine; whether it
evaluates held-out problems; the tool setup the tool check built; an Inspect task's row, made here), and the stages after it (data, exploit pre-flight,
held-out eval, rollout engine, trainer, guards) read what was decided here instead of deriving it again from the
config.

The parsed arguments stay in the plan: TRL's trainer reads ``training_args`` and ``model_args`` whole.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from problems.domains import Domain, run_domain
from train.config.arguments import ScriptArguments
from train.config.inspect_task import bridge
from train.config.tool_checks import ToolSetup
from train.config.validation import evaluates_held_out, validate
from train.engines.choice import Engine, rollout_engine


@dataclass(frozen=True)
class RunPlan:
    """What a run is, decided once: read by every stage after ``resolve_run``."""

    script_args: ScriptArguments
    training_args: object  # TRL's GRPOConfig (CheckedGRPOConfig)
    model_args: object  # TRL's ModelConfig (CheckedModelConfig)
    domain: Domain  # the dataset's answer domain (problems/domains.py): loader, rows, scorer, eval task
    reward_funcs: tuple[Callable[..., list], ...]  # the config's reward_funcs, in order, think frozen in
    engine: Engine  # the rollout engine (train/engines/choice.py)
    held_out: bool  # eval_strategy is on: the trainer evaluates the domain's eval task on held-out problems
    main_process: bool  # process 0: the one that prints
    tool_setup: ToolSetup | None  # config ``tools``: the tokenizer, limits, schemas, environment (tool_checks.py)
    # config ``inspect_task``: inspect_tasks.domain.TaskRow (the prepared task, its row, the split, run.json's
    # section), made by train/config/inspect_task.py
    inspect_task: object | None = None

    @property
    def reward_names(self) -> tuple[str, ...]:
        return tuple(self.script_args.reward_funcs)

    @property
    def tools(self) -> bool:
        return self.tool_setup is not None

    @property
    def scorer(self) -> str:
        """The domain's Inspect scorer as its score is named in a log (``verigrpo/math_scorer`` -> ``math_scorer``)."""
        return self.domain.scorer.split("/")[-1]


def resolve_run(script_args: ScriptArguments, training_args, model_args) -> RunPlan:
    """The dataset's domain and rewards, looked up once (problems/domains.py), every check on the config (``validate``:
    ConfigError before anything heavy loads), then the run's decisions. With ``inspect_task`` the task is loaded
    and checked first and becomes the row the dataset names (train/config/inspect_task.py)."""
    bridged = bridge(script_args, training_args, training_args.process_index == 0)
    chosen = run_domain(script_args.dataset, script_args.reward_funcs, script_args.think, script_args.answer_format)
    tool_setup = validate(script_args, training_args, model_args, chosen)
    return RunPlan(
        script_args=script_args,
        training_args=training_args,
        model_args=model_args,
        domain=chosen.domain,
        reward_funcs=chosen.reward_funcs,
        engine=rollout_engine(training_args, model_args),
        held_out=evaluates_held_out(training_args),
        main_process=training_args.process_index == 0,
        tool_setup=tool_setup,
        inspect_task=bridged,
    )
