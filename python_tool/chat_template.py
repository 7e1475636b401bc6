"""The chat template a tool run renders and parses with: the shipped one (``chatml_tools``, ``chat_templates/``) or a
file, set on a tokenizer with its parser, and why a template cannot run TRL's tool loop.

TRL's tool loop parses tool calls out of each completion with the tokenizer's response template, which TRL sets
only for chat templates it knows (compared by exact text); it also needs a template that renders tool calls and
results, and one that is prefix-preserving (or that TRL can swap for a training variant). A model whose template
cannot do that (SmolLM2's) trains with ``tool_chat_template``. Training's tokenizer (``train/config/tool_checks.py``)
and the tool evals' (``python_tool/turns.py``) are set here, so both read the same template and parser.
"""

from __future__ import annotations

import copy
from pathlib import Path

TEMPLATE_DIR = Path(__file__).resolve().parent / "chat_templates"
SHIPPED_TEMPLATES = {"chatml_tools": TEMPLATE_DIR / "chatml_tools.jinja"}


class TemplateNotFound(ValueError):
    """A ``tool_chat_template`` that is neither a shipped template nor a file (the message says which exist)."""


def template_text(name_or_path: str) -> str:
    """A shipped template by name (``chatml_tools``) or a Jinja file's text."""
    if name_or_path in SHIPPED_TEMPLATES:
        return SHIPPED_TEMPLATES[name_or_path].read_text(encoding="utf-8")
    path = Path(name_or_path)
    if not path.is_file():
        raise TemplateNotFound(
            f"tool_chat_template: {name_or_path} is neither a shipped template ({sorted(SHIPPED_TEMPLATES)}) nor a file "
            f"(resolved: {path.resolve()})."
        )
    return path.read_text(encoding="utf-8")


def apply_tool_template(tokenizer, tool_chat_template: str | None) -> None:
    """Set ``tool_chat_template`` (a shipped name or a file) on ``tokenizer``, with its parser for a shipped one; no
    change when None."""
    if not tool_chat_template:
        return
    tokenizer.chat_template = template_text(tool_chat_template)
    if tool_chat_template in SHIPPED_TEMPLATES:
        from trl.chat_template_utils import qwen3_template  # trl imports torch: train.config must not (its --help)

        tokenizer.response_template = copy.deepcopy(qwen3_template)  # Qwen2.5's tool-call format (README there)


def tool_calling_problem(tokenizer) -> str | None:
    """Why TRL's tool loop cannot run with this tokenizer's chat template, or None."""
    from trl.chat_template_utils import (  # trl imports torch: train.config (its --help) imports this module
        add_response_schema,
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        supports_tool_calling,
    )

    if not supports_tool_calling(tokenizer):
        return "cannot write a tool call and its result (TRL's supports_tool_calling is False)"
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:
            add_response_schema(copy.copy(tokenizer))
        except ValueError:
            return "has no tool-call parser in TRL (add_response_schema knows only some templates, by exact text)"
    if not is_chat_template_prefix_preserving(tokenizer):
        try:
            get_training_chat_template(tokenizer)
        except ValueError:
            return "is not prefix-preserving and TRL has no training variant of it"
    return None
