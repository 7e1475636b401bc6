"""A real training run with the test reward ``length_parity`` registered, in its own process:
``python tests/helpers/length_parity_run.py <train/grpo.py arguments>``; exits with train/grpo.py's exit code.
vLLM runs need their own process (vLLM initialises torch.distributed and binds threads for the whole process) and a
``__main__`` guard (its workers re-import the main module); ``length_parity`` gives every step reward variance, so
every step moves the policy (grad_norm > 0)."""

import sys

from problems.math_domain import MATH
from tests.helpers.training import length_parity
from train.grpo import cli

if __name__ == "__main__":  # vLLM's workers re-import the main module
    MATH.rewards["length_parity"] = length_parity
    sys.exit(cli(sys.argv[1:]))
