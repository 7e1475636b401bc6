"""Statistics over Inspect logs, eval logs and training's rollout logs alike: what the demo, the run guards and the
audit scripts compute once the evals have run (nothing here runs a model).

- ``paired``: did a change help? Newcombe's paired 95% interval and McNemar's mid-p test on the same problems (stdlib)
- ``eval_pairs``: per-problem outcomes of two Inspect logs, checked to be the same problems, compared with ``paired``
- ``grade_changes``: which items changed grade between two scorers in one log (``scripts/score_diff.py``)
- ``group_metrics``: a rollout log's training scores as one result row: group mean and pass@G
- ``rollout_audit``: re-judge rollout logs with a scorer; paid-but-rejected counts per step window
"""
