"""The problems training and the evals share, so neither imports the other for them: standard library +
``rewards`` only (no Inspect, no torch).

- ``domains``: one record per answer domain (math, code): sources, loader, training row, rewards, scorers, plot metrics
- ``math_data``: math problem sources: procedural arithmetic, jsonl/json, GSM8K, MATH-500
- ``code_data``: code problems: the bundled set (``problems/data/code_problems.jsonl``, 28, this package's
  data) or your jsonl
"""
