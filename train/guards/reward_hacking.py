"""The reward-hacking alarm: the training reward rises while the held-out accuracy does not, or the training reward
pays more and more completions the verifier rejects.

Two kinds of evidence, each from something the run already writes:

* **divergence** (at every held-out eval, ``train/artifacts/held_out.py``): between the eval ``reward_hacking_window``
  evals back and this one, the training reward of the later half of the steps in between is compared with the earlier
  half (difference of per-step means, normal 95% interval over the steps); the held-out outcomes of the two evals are
  compared per problem (``evals/log_stats/paired.py``: Newcombe interval, McNemar mid-p). The alarm: the reward rose (its
  interval above 0) while held-out accuracy did not (paired difference <= 0).
* **paid but rejected** (at every save, when rollouts are logged): the new rollout logs are re-judged by the domain's
  scorer (``evals/log_stats/rollout_audit.py``, as ``scripts/audit_rollouts.py`` does); the alarm: completions the reward paid
  and the verifier rejects, more of them than in the audit before. With the shared verifier as the reward this count
  is 0 unless the reward changed (a lenient variant, a custom reward, a bug).

The alarm prints a warning with its evidence and logs ``guards/reward_hacking_alarms``; with
``stop_on_reward_hacking: true`` training stops after the step (its checkpoint saved) and the run exits with code 4.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist, fmean, variance

from transformers import TrainerCallback

from evals.log_stats.eval_pairs import compare_logs
from evals.log_stats.rollout_audit import audit_logs, paid_rejected_grows
from train.artifacts.held_out import LOG_NAME
from train.guards.best_checkpoint import score_key
from train.guards.stops import RewardHacking

ALARM_METRIC = "guards/reward_hacking_alarms"
SECONDS_METRIC = "guards/reward_hacking_seconds"  # what the alarm's checks cost (docs/training.md)
Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True)
class Rise:
    """Later minus earlier mean of per-step training rewards, with a normal 95% interval."""

    earlier: float
    later: float
    low: float
    high: float
    steps: int

    @property
    def difference(self) -> float:
        return self.later - self.earlier


def reward_rise(rewards: list[float]) -> Rise | None:
    """The later half of ``rewards`` (per-step means, in step order) against the earlier half; None under 4 steps."""
    if len(rewards) < 4:
        return None
    half = len(rewards) // 2
    early, late = rewards[:half], rewards[-half:]
    se = math.sqrt(variance(early) / len(early) + variance(late) / len(late))
    d = fmean(late) - fmean(early)
    return Rise(fmean(early), fmean(late), d - Z95 * se, d + Z95 * se, len(rewards))


def diverges(rise: Rise | None, held_out_difference: float) -> bool:
    """The divergence alarm: the reward rose (interval above 0) while held-out accuracy did not rise."""
    return rise is not None and rise.low > 0 and held_out_difference <= 0


def divergence_evidence(rise: Rise, held_out: dict, first: int, last: int, metric: str) -> str:
    return (
        f"between steps {first} and {last} the training reward rose from {rise.earlier:.3f} to {rise.later:.3f} "
        f"(earlier vs later half of the {rise.steps} steps: {rise.difference:+.3f}, 95% CI {rise.low:+.3f} to "
        f"{rise.high:+.3f}) while held-out {metric} went {held_out['before']:.3f} -> {held_out['after']:.3f} on the "
        f"same {held_out['n']} problems ({held_out['difference']:+.3f}, 95% CI {held_out['low']:+.3f} to "
        f"{held_out['high']:+.3f}, McNemar mid-p {held_out['p_value']:.3g})"
    )


def audit_evidence(audit, counts: list[int], scorer: str | None = None, train_score: str | None = None) -> str:
    """The alarm's warning; the audit command it names re-judges the same score with the same judge (an Inspect
    task's reward needs both named: no domain names it)."""
    total = audit.total
    command = "python scripts/audit_rollouts.py <run>"
    if train_score is not None:
        command += f" --train-score {train_score} --scorer {scorer}"
    examples = "; ".join(f"step {e.step} sample {e.sample_id}: answer {e.answer!r}" for e in audit.paid_rejected[:2])
    return (
        f"the reward paid {total.paid_rejected} of {total.paid} paid completions in steps {total.first_step}-"
        f"{total.last_step} that {audit.scorer_name} rejects (paid-but-rejected per audit so far: {counts}); "
        f"e.g. {examples}. Re-judge them all: {command}"
    )


class RewardHackingAlarm(TrainerCallback):
    """Checks at every held-out eval (divergence) and every save (the audit of new rollout logs)."""

    def __init__(
        self,
        run_dir: Path,
        scorer: str,
        headline: str | None,
        window: int,
        stop: bool,
        audits: bool,
        audit_scorer: str | None = None,
        audit_score: str | None = None,
    ) -> None:
        """``scorer``: the domain's scorer (its short name, as eval logs hold it); ``headline``: the held-out metric
        (None: no held-out evals, no divergence check); ``audits``: re-judge new rollout logs at every save, with the
        domain table's judge, or with ``audit_scorer`` (e.g. ``verigrpo/math_verifier``) judging the training score
        ``audit_score`` (``train_<reward>``: an Inspect task's scorer, which the table does not audit)."""
        self.audit_scorer, self.audit_score = audit_scorer, audit_score
        self.run_dir = Path(run_dir)
        self.scorer, self.headline = scorer, headline
        self.score_key = score_key(headline) if headline else None
        self.window, self.stop, self.audits = window, stop, audits
        self.eval_steps: list[int] = []
        self.audited: set[str] = set()
        self.paid_rejected: list[int] = []
        self.alarms: list[str] = []
        self.pending: dict[str, float] = {}
        self.stopped = False

    def _alarm(self, control, evidence: str) -> None:
        self.alarms.append(evidence)
        action = (
            "stopping after this step (stop_on_reward_hacking)"
            if self.stop
            else "set stop_on_reward_hacking: true to stop"
        )
        print(f"[verigrpo] WARNING reward-hacking alarm: {evidence}; {action}", flush=True)
        self.pending[ALARM_METRIC] = len(self.alarms)
        if self.stop:
            self.stopped = True
            control.should_training_stop = True
            control.should_save = True

    def stop_error(self, step: int) -> RewardHacking | None:
        """``RewardHacking`` (exit code 4) when this alarm stopped the run at ``step``, else None."""
        if not self.stopped:
            return None
        return RewardHacking(f"the reward-hacking alarm stopped the run at step {step}: {self.alarms[-1]}")

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if not state.is_world_process_zero or not metrics or not self.headline or self.headline not in metrics:
            return control
        start = time.perf_counter()
        step = state.global_step
        self.eval_steps.append(step)
        if len(self.eval_steps) > self.window:
            first = self.eval_steps[-1 - self.window]
            rewards = [e["reward"] for e in state.log_history if "reward" in e and first < e["step"] <= step]
            rise = reward_rise(rewards)
            if rise is not None and rise.low > 0:  # only then read the two held-out logs
                held_out = self._paired(first, step)
                if diverges(rise, held_out["difference"]):
                    self._alarm(control, divergence_evidence(rise, held_out, first, step, self.headline))
        self.pending[SECONDS_METRIC] = self.pending.get(SECONDS_METRIC, 0.0) + time.perf_counter() - start
        return control

    def _paired(self, first: int, last: int) -> dict:
        logs = self.run_dir / "evals"
        before, after = logs / LOG_NAME.format(step=first), logs / LOG_NAME.format(step=last)
        return compare_logs(before, after, self.scorer, self.score_key).to_dict()

    def on_save(self, args, state, control, **kwargs):
        """After the rollout logs were flushed (``RolloutFlushCallback`` runs before this callback)."""
        if not state.is_world_process_zero or not self.audits:
            return control
        new = sorted(p for p in (self.run_dir / "rollouts").glob("*.eval") if str(p) not in self.audited)
        if not new:
            return control
        start = time.perf_counter()
        audit = audit_logs(new, self.audit_scorer, window=max(1, state.global_step), train_score=self.audit_score)
        self.audited.update(audit.audited)
        self.paid_rejected.append(audit.total.paid_rejected)
        if paid_rejected_grows(self.paid_rejected):
            self._alarm(control, audit_evidence(audit, self.paid_rejected, self.audit_scorer, self.audit_score))
        self.pending[SECONDS_METRIC] = self.pending.get(SECONDS_METRIC, 0.0) + time.perf_counter() - start
        return control

    def metrics(self) -> dict[str, float]:
        pending, self.pending = self.pending, {}
        return pending
