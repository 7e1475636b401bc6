"""Sampling settings TRL's importance-sampling correction cannot correct: refused before anything loads.

With vLLM rollouts TRL weights each sample by exp(trainer logprob - vLLM logprob)
(``vllm_importance_sampling_correction``, on by default). vLLM returns ``processed_logprobs``: renormalised over the
tokens that survive ``top_p`` / ``top_k`` / ``min_p`` truncation, while the trainer recomputes them over the whole
vocabulary. Every token's ratio is then multiplied by the surviving probability mass S, which is not a policy change:
the correction silently scales (or, in the mask modes, drops) the gradient (TRL issue #6789: top_p 0.9 keeps ~90% of
the gradient, top_k 50 ~17%). Training then learns from a biased objective without any error.
"""

from __future__ import annotations


def truncations(training_args) -> list[str]:
    """The sampling settings that truncate the distribution (``top_p`` < 1, ``top_k`` > 0, ``min_p`` > 0)."""
    found = []
    if training_args.top_p is not None and training_args.top_p < 1:
        found.append(f"top_p {training_args.top_p:g}")
    if training_args.top_k:
        found.append(f"top_k {training_args.top_k}")
    if training_args.min_p:
        found.append(f"min_p {training_args.min_p:g}")
    return found


def biased_correction(training_args) -> list[str]:
    """A refusal (one reason, with both fixes) when vLLM rollouts are importance-corrected under truncated sampling."""
    if not (training_args.use_vllm and training_args.vllm_importance_sampling_correction):
        return []
    found = truncations(training_args)
    if not found:
        return []
    return [
        f"{', '.join(found)} with vllm_importance_sampling_correction: vLLM's logprobs are renormalised over the "
        "tokens truncation keeps while the trainer's cover the whole vocabulary, so every importance ratio is scaled "
        "by the kept probability mass, not by any policy change, and the correction biases the gradient (TRL issue "
        "#6789; top_k 50 keeps ~17% of it). Sample without truncation (top_p: 1.0, top_k: 0, min_p unset), or set "
        "vllm_importance_sampling_correction: false to train without the correction"
    ]
