"""The run guards wired into a run (train/grpo.py calls these): which guards a config turns on, the best checkpoint's
tracking and summary, and the exit when a guard stopped training. Each guard's logic is its own module here."""

from __future__ import annotations

from pathlib import Path

from problems.domains import audited_scores
from records.rollout_format import train_score_name
from train.artifacts.replay_batches import ReplayRecorder
from train.config.resolved import RunPlan
from train.guards.best_checkpoint import NoBestCheckpoint, write_best
from train.guards.on_policy import OnPolicyGuard
from train.guards.reward_hacking import RewardHackingAlarm
from train.guards.stops import RewardHacking


def add_guards(trainer, plan: RunPlan) -> None:
    """The run guards (train/guards/): the on-policy guard when rollouts come from a vLLM adapter engine, the
    reward-hacking alarm when the run evaluates held-out problems or logs its rollouts. ``plan``: the resolved run
    (train/config/resolved.py RunPlan): its settings and its domain's scorer."""
    script_args, model_args = plan.script_args, plan.model_args
    guards = []
    trainer.on_policy_guard = OnPolicyGuard.for_run(
        script_args.on_policy_check_steps, trainer.rollout_engine, model_args
    )
    if trainer.on_policy_guard is not None:
        guards.append(trainer.on_policy_guard)
    trainer.reward_hacking_alarm = None
    # the audit needs a reward it can re-judge in the rollout logs (correctness, code_tests), or, on an Inspect task,
    # an independent judge of its first reward (inspect_audit_scorer)
    audit_scorer = script_args.inspect_audit_scorer if plan.inspect_task is not None else None
    audits = trainer.rollout_recorder is not None and (
        audit_scorer is not None or any(train_score_name(name) in audited_scores() for name in script_args.reward_funcs)
    )
    if trainer.held_out_eval is not None or audits:
        trainer.reward_hacking_alarm = RewardHackingAlarm(
            trainer.args.output_dir,
            plan.scorer,
            trainer.held_out_eval.headline if trainer.held_out_eval is not None else None,
            window=script_args.reward_hacking_window,
            stop=script_args.stop_on_reward_hacking,
            audits=audits,
            audit_scorer=audit_scorer,
            audit_score=train_score_name(plan.reward_names[0]) if audit_scorer else None,
        )
        trainer.add_callback(trainer.reward_hacking_alarm)  # after RolloutFlushCallback: audits flushed logs
        guards.append(trainer.reward_hacking_alarm)
    trainer.run_guards = tuple(guards)
    if script_args.log_replay_batches and trainer.is_world_process_zero():
        trainer.replay_recorder = ReplayRecorder(trainer.args.output_dir)


def track_best(held_out, training_args) -> None:
    """With held-out evals, transformers tracks the best checkpoint by the held-out headline (unless the config names
    its own ``metric_for_best_model``) and rotation keeps it (train/guards/best_checkpoint.py)."""
    if held_out is not None and training_args.metric_for_best_model is None:
        training_args.metric_for_best_model = held_out.headline
        training_args.greater_is_better = True


def best_lines(trainer, plan: RunPlan, output_dir: Path) -> list[str]:
    """The summary's last lines: the best checkpoint, and best and last vs step 0, paired (best_checkpoint.json)."""
    if trainer.held_out_eval is None or trainer.args.metric_for_best_model != trainer.held_out_eval.headline:
        return []
    try:
        return write_best(output_dir, trainer.state, plan.scorer, trainer.held_out_eval.headline)
    except NoBestCheckpoint as exc:
        return [str(exc)]


def guard_stop(trainer) -> RewardHacking | None:
    """What ends the run once it is saved and summarised when a guard stopped training (the reward-hacking alarm's
    ``RewardHacking``, exit code 4), or None."""
    alarm = getattr(trainer, "reward_hacking_alarm", None)
    return alarm.stop_error(trainer.state.global_step) if alarm is not None else None
