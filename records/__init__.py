"""What a run leaves for others to read, as formats: read by the evals, written by training, so neither imports the
other for it (standard library only, but for the two Inspect modules, ``chat`` and ``inspect_seams``).

- ``run_manifest``: run.json, the record ``train/grpo.py`` writes into its output directory and every checkpoint;
  its one reader (the checkpoint model provider and the scorers' verifier check read it here)
- ``best_checkpoint``: best_checkpoint.json, which checkpoint scored best on the held-out evals (``<run>@best``)
- ``rollout_format``: the rollout-log format ``train/artifacts/rollout_log.py`` writes and ``evals/log_stats/rollout_audit.py``
  reads (the ``train_`` score prefix, the ``none/none`` model, the step key, the training metrics' names)
- ``chat``: ``chat_messages``: ``{"role", "content"}`` dicts as Inspect messages (the one role table): the evals' task
  prompts and the rollout log's turns
- ``inspect_seams``: Inspect's non-public names verigrpo uses (``EvalScorer``, ``EvalMetricDefinition`` for the
  rollout log; ``registry_name``, ``registry_alias``, ``hf_model_api`` for the evals): the one place an upgrade breaks
"""
