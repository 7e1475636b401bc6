"""Checks that watch a training run while it trains (issue #32): the on-policy guard (``on_policy.py``) and the
sampling settings the importance-sampling correction cannot correct (``sampling.py``)."""
