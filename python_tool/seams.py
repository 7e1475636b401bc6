"""The TRL and Inspect names the tool's eval turns need that are not public API: where an upgrade breaks them.

They live here, not in ``train/trl_seams.py`` or ``records/inspect_seams.py`` (the other names of the same libraries),
because ``python_tool`` sits below ``train`` and ``evals`` and imports neither. Written against trl 1.16.0 and
inspect-ai 0.3.285 (pinned in pyproject.toml); tests/test_seams.py lets no other module name them.

* ``GRPOTrainer._get_tool_suffix_ids(tool_messages)`` (TRL): the tokens TRL's tool loop appends after a completion
  that called tools (the tool results, then the next assistant header); ``tool_suffix_ids`` runs it outside a
  trainer so the tool evals (``python_tool/turns.py``) build the very ids training builds
  (tests/python_tool/test_tool_eval_parity.py).
* ``inspect_ai.solver._task_state.sample_state()`` (Inspect): the running sample's ``TaskState``; a tool-trained
  policy's provider reads the task's tool objects from it to check their limits against the run's
  (``python_tool/turns.py``): tests/python_tool/test_tool_eval_parity.py.
"""

from __future__ import annotations

from types import SimpleNamespace

from inspect_ai.solver._task_state import sample_state
from trl import GRPOTrainer

__all__ = ["sample_state", "tool_suffix_ids"]


def tool_suffix_ids(tokenizer, tool_messages: list[dict], chat_template=None, chat_template_kwargs=None) -> list[int]:
    """TRL's own ``GRPOTrainer._get_tool_suffix_ids`` for a text model: the ids of ``tool_messages`` (``{"role":
    "tool", "name", "content"}``) and the next assistant header, as its tool loop appends them after a completion.
    ``chat_template``: the trainer's (None unless TRL swapped in a prefix-preserving training variant)."""
    trainer = SimpleNamespace(
        processing_class=tokenizer,
        _tokenizer=tokenizer,
        _is_vlm=False,
        chat_template=chat_template,
        chat_template_kwargs=dict(chat_template_kwargs or {}),
    )
    return GRPOTrainer._get_tool_suffix_ids(trainer, tool_messages)
