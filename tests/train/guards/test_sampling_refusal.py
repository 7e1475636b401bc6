"""Truncated sampling with vLLM's importance-sampling correction is refused before loading (train/guards/sampling.py)."""

import pytest

from tests.helpers import CPU_CONFIG
from train.config import parse_config
from train.guards.sampling import biased_correction

VLLM = ("--use_vllm", "true")


def problems(*overrides):
    _, training_args, _ = parse_config(["--config", CPU_CONFIG, *overrides])
    return biased_correction(training_args)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        (("--top_p", "0.9"), "top_p 0.9"),
        (("--top_k", "50"), "top_k 50"),
        (("--min_p", "0.05"), "min_p 0.05"),
        (("--top_p", "0.95", "--top_k", "20"), "top_p 0.95, top_k 20"),
    ],
)
def test_truncation_with_the_correction_is_refused_with_the_reason_and_both_fixes(overrides, named):
    (problem,) = problems(*VLLM, *overrides)
    assert problem.startswith(named + " with vllm_importance_sampling_correction")
    assert "kept probability mass" in problem and "#6789" in problem
    assert "top_p: 1.0, top_k: 0" in problem and "vllm_importance_sampling_correction: false" in problem


@pytest.mark.parametrize(
    "overrides",
    [
        VLLM,  # untruncated sampling: the correction is exact
        (*VLLM, "--top_p", "0.9", "--vllm_importance_sampling_correction", "false"),  # no correction to bias
        ("--top_p", "0.9", "--top_k", "50"),  # transformers rollouts: no importance sampling at all
    ],
)
def test_untruncated_or_uncorrected_sampling_is_accepted(overrides):
    assert problems(*overrides) == []


def test_the_refusal_is_part_of_validate(tmp_path):
    from train.config import ConfigError, resolve_run

    script_args, training_args, model_args = parse_config(["--config", CPU_CONFIG, *VLLM, "--top_k", "50"])
    with pytest.raises(ConfigError, match=r"top_k 50 with vllm_importance_sampling_correction"):
        resolve_run(script_args, training_args, model_args)
