"""The checkpoint chosen by held-out accuracy, and how it and the last one compare with step 0 on the same problems.

With held-out evals on (``train/artifacts/held_out.py``), ``train/grpo.py`` sets transformers' own best-model
tracking (``metric_for_best_model``: the domain's headline, e.g. ``eval_correct/accuracy``, unless the config names
another): the trainer records ``best_metric`` / ``best_global_step`` / ``best_model_checkpoint`` in
``trainer_state.json``, and checkpoint rotation (``save_total_limit``) never deletes the best checkpoint. At the end of
the run this module writes ``<run>/best_checkpoint.json`` and the summary's last lines: the best and the last
checkpoint against step 0 on the same held-out problems, paired (``evals/log_stats/paired.py``: Newcombe interval, McNemar
mid-p; the demo's statistics), from the held-out Inspect logs. ``--model verigrpo/<run>@best`` loads the checkpoint
it names (``evals/providers/checkpoint_model.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evals.log_stats.eval_pairs import compare_logs
from records.best_checkpoint import BEST_JSON, BEST_SUFFIX, NoBestCheckpoint, best_checkpoint_dir
from train.artifacts.held_out import LOG_NAME

__all__ = ["BEST_JSON", "BEST_SUFFIX", "NoBestCheckpoint", "best_checkpoint_dir"]  # the record's format: records/


@dataclass(frozen=True)
class Comparison:
    """One checkpoint's held-out outcomes against step 0's: the paired difference as ``evals.log_stats.paired`` reports it."""

    label: str  # "best (step 4)"
    step: int
    result: dict  # evals.log_stats.paired.PairedDifference.to_dict()

    def line(self) -> str:
        r = self.result
        return (
            f"{self.label} vs step 0 on the same {r['n']} held-out problems: {r['before']:.3f} -> {r['after']:.3f}, "
            f"difference {r['difference']:+.3f} (95% CI {r['low']:+.3f} to {r['high']:+.3f}, Newcombe; McNemar "
            f"mid-p {r['p_value']:.3g}; {r['only_after']} problems gained, {r['only_before']} lost): {r['verdict']}"
        )


def score_key(headline: str) -> str:
    """The per-sample score key behind a held-out headline: ``eval_correct/accuracy`` -> ``correct``."""
    return headline.removeprefix("eval_").split("/", 1)[0]


def paired_against_step0(run_dir: Path, step: int, scorer: str, key: str) -> dict:
    """The held-out eval at ``step`` against step 0's, paired per problem (graded 1.0 counts as correct)."""
    logs = run_dir / "evals"
    return compare_logs(logs / LOG_NAME.format(step=0), logs / LOG_NAME.format(step=step), scorer, key).to_dict()


def best_record(run_dir: Path, state, scorer: str, headline: str) -> dict:
    """``best_checkpoint.json``: which checkpoint scored best on the held-out eval, and (when step 0 was evaluated)
    the best and the last checkpoint against step 0. ``state``: the trainer's ``TrainerState``."""
    best_step = state.best_global_step
    if state.best_metric is None or best_step is None:
        raise NoBestCheckpoint(f"{run_dir}: no held-out eval ran (eval_strategy: steps, eval_steps, eval_on_start)")
    last_step = state.global_step
    checkpoint = _checkpoint_of(run_dir, best_step, last_step)
    record = {
        "metric": headline,
        "best_step": best_step,
        "best_value": state.best_metric,
        "checkpoint": checkpoint,  # relative to the run directory; None: step 0 (the base) or not saved
        "last_step": last_step,
        "comparisons": [],
    }
    if (run_dir / "evals" / LOG_NAME.format(step=0)).is_file():
        key = score_key(headline)
        for label, step in ((f"best (step {best_step})", best_step), (f"last (step {last_step})", last_step)):
            if step != 0 and (run_dir / "evals" / LOG_NAME.format(step=step)).is_file():
                result = paired_against_step0(run_dir, step, scorer, key)
                record["comparisons"].append({"label": label, "step": step, **result})
    return record


def _checkpoint_of(run_dir: Path, step: int, last_step: int) -> str | None:
    if step == 0:
        return None  # the base model scored best: no trained checkpoint is better
    if (run_dir / f"checkpoint-{step}").is_dir():
        return f"checkpoint-{step}"
    if step == last_step:
        return "."  # the final save in the run directory
    return None


def summary_lines(record: dict) -> list[str]:
    """The run summary's last lines."""
    where = {None: "not saved", ".": "the run directory"}.get(record["checkpoint"], record["checkpoint"])
    if record["best_step"] == 0:
        where = "the base model: no trained checkpoint scored higher"
    lines = [
        f"best held-out {record['metric'].removeprefix('eval_')} {record['best_value']:.3f} at step "
        f"{record['best_step']} ({where}; --model verigrpo/<run>{BEST_SUFFIX})"
    ]
    for c in record["comparisons"]:
        lines.append(Comparison(c["label"], c["step"], c).line())
    if not record["comparisons"]:
        lines.append("no paired comparison: step 0 was not evaluated (eval_on_start: true)")
    return lines


def write_best(run_dir: Path, state, scorer: str, headline: str) -> list[str]:
    """Write ``best_checkpoint.json`` and return the summary lines."""
    record = best_record(run_dir, state, scorer, headline)
    (run_dir / BEST_JSON).write_text(json.dumps(record, indent=1))
    return summary_lines(record)
