"""The code wing: the code-answer contract (``code_format``), trusted test specs (``code_spec``), the
judge (``code_verifier``, which runs ``sandbox_programs/`` inside ``rewards.sandbox``) and the TRL reward
(``code_rewards``). Import the submodules; the public names are re-exported by ``rewards``."""
