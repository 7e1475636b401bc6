"""The problems training and the evals share, so neither imports the other for them: standard library +
``rewards`` only (no Inspect, no torch).

- ``domains``: the table of answer domains (one ``Domain`` row each: sources, loader, training row, rewards, scorers,
  plot metrics) and how rows register; the one table of reward names
- ``math_domain``, ``code_domain``: the built-in rows, each one module as docs/adding-a-domain.md writes a new one
- ``math_data``: math problem sources: procedural arithmetic, jsonl/json (plain, GSM8K- or MATH-shaped rows), GSM8K,
  MATH-500
- ``file_rows``: a problem file's rows read one by one, every unreadable row reported at once (or skipped)
- ``code_data``: code problems: the bundled set (``problems/data/code_problems.jsonl``, 28, this package's
  data) or your jsonl
"""
