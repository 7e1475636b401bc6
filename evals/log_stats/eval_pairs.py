"""Per-problem outcomes out of Inspect eval logs, paired across two evals (``paired``, beside it, does the statistics).

    from evals.log_stats.eval_pairs import compare_logs
    result = compare_logs("logs/base.eval", "logs/trained.eval")   # after - before, with its 95% interval

Each side's outcome is the score the task's scorer recorded (``math_verifier``'s ``correct`` key, read
with Inspect's own ``value_to_float`` as its ``accuracy`` metric does), so the paired accuracies equal
the logs' headline accuracies. Two logs pair only when they graded the same problems (ids and
targets) with the same verifier; anything else is an error, not a quietly smaller table.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import EvalLog, read_eval_log

from evals.log_stats.grade_changes import grade_of
from evals.log_stats.paired import CONFIDENCE, PairedDifference, compare_outcomes

SCORER = "math_verifier"
KEY = "correct"


class UnpairedLogs(ValueError):
    """Two logs that cannot be compared problem by problem; the message says why."""


def _read(log: EvalLog | str | Path) -> EvalLog:
    log = log if isinstance(log, EvalLog) else read_eval_log(str(log))
    if log.status != "success":
        raise UnpairedLogs(f"{log.location}: the eval did not finish (status {log.status})")
    if not log.samples:
        raise UnpairedLogs(f"{log.location}: no samples (was it read with header_only=True?)")
    return log


def outcomes(log: EvalLog | str | Path, scorer: str = SCORER, key: str = KEY) -> dict[tuple, bool | None]:
    """(sample id, epoch) -> correct, or None where the scorer left the sample unscored (a dataset bug)."""
    log = _read(log)
    result = {}
    for sample in log.samples:
        scores = sample.scores or {}
        if scorer not in scores:
            raise UnpairedLogs(f"{log.location}: sample {sample.id} has no {scorer!r} score (it has {sorted(scores)})")
        grade = grade_of(scores[scorer], key)
        result[(sample.id, sample.epoch)] = None if grade is None else grade == 1.0
    return result


def _targets(log: EvalLog) -> dict[tuple, str]:
    return {(s.id, s.epoch): str(s.target) for s in log.samples}


def check_paired(before: EvalLog, after: EvalLog) -> None:
    """Raise UnpairedLogs unless both logs graded the same problems, with the same references and verifier."""
    targets_before, targets_after = _targets(before), _targets(after)
    if targets_before.keys() != targets_after.keys():
        missing = sorted(map(str, targets_before.keys() ^ targets_after.keys()))[:5]
        raise UnpairedLogs(
            f"{before.location} and {after.location} hold different problems (e.g. {missing}): "
            "evaluate both on the same task arguments"
        )
    differ = [key for key, target in targets_before.items() if targets_after[key] != target]
    if differ:
        raise UnpairedLogs(f"problem {differ[0]} has different targets in {before.location} and {after.location}")
    verifiers = [(log.eval.metadata or {}).get("verifier") for log in (before, after)]
    if verifiers[0] != verifiers[1]:
        raise UnpairedLogs(
            f"the logs were graded by different verifiers ({verifiers[0]} vs {verifiers[1]}): re-score one with "
            "`inspect score LOG --scorer verigrpo/math_verifier --action append` first"
        )


def compare_logs(
    before: EvalLog | str | Path,
    after: EvalLog | str | Path,
    scorer: str = SCORER,
    key: str = KEY,
    confidence: float = CONFIDENCE,
) -> PairedDifference:
    """after - before on the problems both logs graded, with ``evals.log_stats.paired``'s interval and test.

    Problems left unscored in either log (an unreadable reference) are left out of both sides, as
    Inspect's accuracy leaves them out.
    """
    before, after = _read(before), _read(after)
    check_paired(before, after)
    b, a = outcomes(before, scorer, key), outcomes(after, scorer, key)
    scored = [k for k in b if b[k] is not None and a[k] is not None]
    if not scored:
        raise UnpairedLogs(f"no problem is scored in both {before.location} and {after.location}")
    return compare_outcomes({k: b[k] for k in scored}, {k: a[k] for k in scored}, confidence)
