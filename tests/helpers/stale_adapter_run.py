"""A real training run whose rollout engine stops receiving adapter updates after the first one (a stale adapter,
forced from outside): ``python tests/helpers/stale_adapter_run.py <train/grpo.py arguments>``; exits with
train/grpo.py's exit code. The colocated engine still saves each version and names it the rollout adapter; only
vLLM never loads it, as a sync that fails silently would. The test reward ``length_parity`` is registered, so a run
can train on it (every step then moves the policy)."""

import sys

from problems.math_domain import MATH
from tests.helpers.training import length_parity
from train.engines.colocated import AdapterSyncGeneration
from train.grpo import cli

_load = AdapterSyncGeneration.load_adapter


def load_only_the_first(self, name, version, path):
    if version == 1:
        _load(self, name, version, path)


if __name__ == "__main__":  # vLLM's workers re-import the main module
    AdapterSyncGeneration.load_adapter = load_only_the_first
    MATH.rewards["length_parity"] = length_parity  # reward variance: every step moves the policy
    sys.exit(cli(sys.argv[1:]))
