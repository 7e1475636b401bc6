"""Any Inspect task as a GRPO training environment: its dataset gives the prompts, its solver chain builds them, its
scorers are the reward. Below ``train`` and ``evals``, which both use it; ``problems`` stays free of Inspect.

- ``training_task``: ``prepare_task(spec, args)`` -> ``TrainingTask``: the task loaded and checked before any model
  loads, each sample's prompt, and ``score`` / ``score_many``, the one function that scores a completion for a
  sample the way training rewards it
- ``replay``: the task's chain run with a model that records the first ``generate`` (the prompt) or answers with the
  policy's completion (the reward: the rest of the chain, then the scorers, ``value_to_float``)
- ``loading``: a task by the names ``inspect eval`` takes (``FILE.py@NAME``, ``inspect_evals/gsm8k``, a dotted path)
  and ``-T``-style arguments; samples with ids
- ``domain``: a prepared task as a row of the domain table (problems/domains.py) at run time, so a run on a task
  takes the path every domain takes: plan, rewards, held-out eval, rollout logs
- ``scorer_probe``: the exploit probe for a task's scorers: cheats that need no solving built from each sample, scored
  through the task's replay, and paid for more than one answer at once (a swapped target pays too) or for none
- ``seams``: Inspect's non-public names this package uses, in one module
"""
