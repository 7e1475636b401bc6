"""Tell Inspect about a verigrpo provider's model when it is built, so that Inspect never builds a second one to ask.

On every model event of a sample, Inspect (0.3.285) maps the event to an ACP usage update
(``inspect_ai/agent/_acp/event_mapping.py``, ``_build_usage_update``), which calls the public
``get_model_info(event.model)``. A name that is neither in Inspect's model database nor registered with
``set_model_info`` it resolves by constructing the provider again (``get_model(name)`` with a placeholder key and
none of the ``-M`` arguments). For ``verigrpo/<run dir>`` that is a second full load of the checkpoint, on the default
device, inside the first sample; for ``verigrpo-policy`` a construction that fails (there is no model object) and is
swallowed. The model's info registered under the name the events carry answers the lookup from the registry.
"""

from __future__ import annotations

from typing import Any


def register_model_info(provider: str, model_name: str, model: Any) -> None:
    """Register ``<provider>/<model_name>`` (the name Inspect's model events carry: the provider's unprefixed
    registered name and ``ModelAPI.model_name``) with the context length ``model``'s config declares (``model``: the
    model object, or that length itself when the weights are not loaded yet)."""
    from inspect_ai.model import ModelInfo, set_model_info

    context_length = model if isinstance(model, int) or model is None else None
    if context_length is None and model is not None:
        context_length = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    set_model_info(f"{provider}/{model_name}", ModelInfo(model=model_name, context_length=context_length))
