"""The math wing: answer extraction (``answer_format``), the equivalence check (``math_verifier`` over
``structure``, ``exact_numbers`` and ``symbolic``), its killable workers (``worker_pool``) and the TRL
rewards (``math_rewards``). Import the submodules; the public names are re-exported by ``rewards``."""
