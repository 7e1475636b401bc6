"""The Inspect AI side: tasks and scorers on the same verifier as the rewards (at the top: their files are what
``inspect eval`` and ``--scorer`` name), the model providers, and statistics over logs.

- ``math_task``: ``@task math_verified`` (+ ``gsm8k_verified``, ``math500_verified``), ``record_to_sample``
- ``math_scoring``: one Score from a Verdict (correct C/I + format), what ``verigrpo/math_verifier`` scores with
- ``verify``: the scorers by file path (``--scorer evals/verify.py@math_verifier``, ``@unit_test_scorer``), each the
  one registered ``verigrpo/<name>`` object; ``from evals.verify import is_correct``
- ``code_task``: ``@task code_verified`` (``tools=true``: a python tool in the bwrap sandbox), ``record_to_sample``
- ``code_scoring``: one Score from a code Verdict (fraction + passed_all), tamper markers in metadata
- ``domain_task``: ``@task domain_verified`` and the ``verigrpo/domain_scorer`` body: any domain that declares its
  judge as ``grade`` (problems/domains.py), evaluated with no Inspect code of its own
- ``task_errors``: a task argument that cannot work (a missing file, unreadable rows, an unknown domain) as one
  message and exit 1 of ``inspect eval`` (Inspect's ``PrerequisiteError``), not a traceback; a ``DatasetError`` in Python
- ``providers/``: the model providers ``verigrpo/<run dir>`` (``checkpoint_model``: a checkpoint loaded as its
  run.json says it trained) and ``verigrpo-policy`` (``policy_model``: the policy in memory a training run's held-out
  evals score), their model info (``model_info``), and a checkpoint scored as trained (``checkpoint_eval``)
- ``log_stats/``: statistics over eval and rollout logs: the paired difference of two evals (``paired``,
  ``eval_pairs``), grade changes between two scorers (``grade_changes``), a rollout log's group metrics
  (``group_metrics``), the rollout audit (``rollout_audit``)
- ``inspect_plugin/``: installed as the package ``verigrpo``: Inspect's entry point, where every name is registered
  once: the scorers ``verigrpo/math_verifier`` and ``verigrpo/unit_test_scorer``, the metrics ``verigrpo/group_mean``
  and ``verigrpo/pass_at_G``, the sandbox provider ``verigrpo/bwrap``, the model providers ``verigrpo`` and
  ``verigrpo-policy``, and the hook ``verigrpo/exit_status`` (``inspect eval`` of a project task that errored or
  completed no sample exits 1)

``data/`` holds the verifier scorecard's example (``scripts/verifier_scorecard.py``). Below this package, imported by
it and by training alike: the ``python`` tool (its Inspect tool, the ``bwrap`` sandbox provider, a tool-trained
policy's turns) in ``python_tool/``; Inspect's message table (``records/chat.py``) and its non-public names
(``records/inspect_seams.py``) in ``records/``.
"""

from cpu.bnb_seams import quiet_missing_hub_kernel  # noqa: E402 - bitsandbytes warns on import that an optional Hub kernel is absent

quiet_missing_hub_kernel()
