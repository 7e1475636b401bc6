"""The exception the reward-hacking alarm stops a run with, apart from the alarm (a transformers callback).

``train/grpo.py``'s command line maps it to exit code 4 (with the on-policy guard's ``OffPolicy``) and imports it at
module level: ``python train/grpo.py --help`` must not load transformers (tests/test_script_help.py).
"""

from __future__ import annotations


class RewardHacking(RuntimeError):
    """The alarm stopped the run (``stop_on_reward_hacking``)."""
