"""An independent soundness oracle for the math verifier: objects, renderings, ground truth (tests/rewards/math/test_soundness_oracle.py)."""
