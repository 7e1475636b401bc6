"""Inspect model providers: how an eval reaches a policy, as trained (registered in ``evals/inspect_plugin``).

- ``checkpoint_model``: the model provider ``verigrpo/<run dir>``: a checkpoint loaded as its run.json says it
  trained (4-bit base included; ``<run dir>@best``)
- ``policy_model``: the model provider ``verigrpo-policy``: a model object in memory (the policy a training run's
  held-out evals score), greedy, in batches fixed before the eval starts
- ``model_info``: registers our providers' model info with Inspect, so its model-info lookup never builds (and loads)
  a provider a second time
- ``checkpoint_eval``: a checkpoint scored as trained through ``verigrpo/``: the printed ``inspect eval`` command and
  the same eval in process (one batch per eval)
"""
