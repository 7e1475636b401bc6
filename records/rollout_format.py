"""The rollout-log format: what ``train/artifacts/rollout_log.py`` writes and ``evals/log_stats/rollout_audit.py`` reads, in one place.

A rollout log is an Inspect ``.eval`` log whose samples hold one completion each, scored
``train_<reward name>`` with the training reward's value, with the training step in the sample's
metadata and the model ``none/none``, so ``inspect score`` can re-judge it without loading anything.
"""

TRAIN_SCORE_PREFIX = "train_"
ROLLOUT_MODEL = "none/none"  # a model Inspect can "instantiate" for re-scoring without loading anything
STEP_KEY = "step"  # sample metadata: the training step that produced the completion
# sample metadata (rollout logs and the math eval tasks): the answer format the prompt taught, which the math scorer
# reads when it is not given one, so `inspect score` re-grades a log as it was graded (evals/math_scoring.py)
ANSWER_FORMAT_KEY = "answer_format"
# the metrics of each training score (evals/log_stats/group_metrics.py, registered by evals/inspect_plugin): one result
# row per score with both numbers, where the epoch reducers would give two rows the viewer cannot tell apart
GROUP_MEAN_METRIC = "verigrpo/group_mean"
PASS_AT_G_METRIC = "verigrpo/pass_at_G"  # option k: the group size G


def train_score_name(reward: str) -> str:
    """The score name a training reward's value is logged under (``correctness`` -> ``train_correctness``)."""
    return TRAIN_SCORE_PREFIX + reward
