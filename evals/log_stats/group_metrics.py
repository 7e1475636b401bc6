"""The group mean and pass@G of a rollout log's training scores, as two metrics of one result row.

A rollout log maps one GRPO group to one Inspect sample (its completions are the epochs), and the
log's epoch reducers (``mean``, ``pass_at_G``) give one result row per reducer. Inspect View labels
those rows ``<score> (<reducer>)`` in a column too narrow for the reducer, so both read
``train_correc…``. Declared ``@metric(scores="unreduced")`` (Inspect then hands a metric every
completion's score instead of one per reducer), these compute the same numbers with Inspect's own
reducers per group and its ``mean()`` over groups: one row per training score, its columns named
``mean`` and ``pass@<G>`` (short enough for its 64-pixel column). Each returns a one-entry dict because Inspect names a float
metric by its registered name (``verigrpo/group_mean``, cut to ``verigrpo/`` in the column) and a
dict entry by its key. The epoch reducers stay in the log for re-scorers (``inspect score``), whose
rows are as before. Registered as ``verigrpo/group_mean`` and ``verigrpo/pass_at_G`` in ``evals/inspect_plugin``.
"""

from __future__ import annotations

import math

from inspect_ai.scorer import Metric, SampleScore, ScoreReducer, mean, mean_score, pass_at, value_to_float

_to_float = value_to_float()


def over_groups(reducer: ScoreReducer, label: str) -> Metric:
    """``{label: mean()}`` over the groups (completions sharing a sample id) of ``reducer`` applied to each group.

    Inspect leaves unscored (NaN) completions out before a metric sees them, as its reducers do
    within a group; a group the reducer leaves NaN (pass@G with fewer than G scored) is left out,
    as ``mean()`` over reduced scores does.
    """
    average = mean()

    def metric(scores: list[SampleScore]) -> dict[str, float]:
        groups: dict[object, list] = {}
        for sample_score in scores:
            groups.setdefault(sample_score.sample_id, []).append(sample_score.score)
        reduced = [SampleScore(score=reducer(group), sample_id=sample_id) for sample_id, group in groups.items()]
        return {label: average([r for r in reduced if not math.isnan(_to_float(r.score.value))])}

    return metric


def group_mean_metric() -> Metric:
    return over_groups(mean_score(), "mean")


def pass_at_group_metric(k: int) -> Metric:
    """pass@k of each group (Inspect's ``pass_at(k)``: 1.0 when a completion has the full score, for k = G)."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return over_groups(pass_at(k), f"pass@{k}")
