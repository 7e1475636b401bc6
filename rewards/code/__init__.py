"""The code wing: the code-answer contract (``code_format``), trusted test specs (``code_spec``), the
judge (``code_verifier``, which runs ``sandbox_programs/`` inside ``rewards.sandbox``) and the TRL reward
(``code_rewards``). Import the submodules; the public names are re-exported by ``rewards``.

- ``code_format``: the code-answer contract: ``CODE_INSTRUCTION``, ``build_code_messages``, ``extract_code``,
  ``tamper_markers``
- ``code_spec``: trusted tests (HumanEval check / MBPP asserts / stdin-stdout) split into counted tests
- ``code_verifier``: ``grade_code``, the async core (judge + solution sandboxes; the host counts verdicts)
- ``code_rewards``: the TRL reward function ``code_tests``: the fraction of unit tests passed
- ``sandbox_programs/``: ``judge.py`` and ``server.py``, run inside the sandboxes (system python, stdlib only)
"""
