r"""The answer-format contract: what the model is told, and how its final answer is read back.

Training prompts and eval prompts are built here and nowhere else, so the policy is asked for
exactly the format the extractor reads.

Extraction policy (``extract_answer``):

============================================  ==============================================
Completion contains                           Result
============================================  ==============================================
one ``ANSWER: <value>`` line                  ``<value>`` (``$``, trailing ``.`` and ``**`` stripped)
an ``ANSWER:`` line holding ``\boxed{v}``     ``v``
one ``\boxed{v}`` (nested braces fine)        ``v``
several ANSWER lines / boxes, all the same    that value (restating an answer is fine)
several that differ (``ANSWER: 3`` then       ``None``, reason ``hedged``: no "best" one is
``ANSWER: 4``, two different boxes, a box     picked, or RL learns to list candidates
and an ANSWER line that disagree)
an unclosed ``\boxed{`` (truncated output)    ignored
neither                                       ``None``, reason ``no_answer``
only numbers in prose ("so we get 7")         ``None``: there is **no** last-number fallback
============================================  ==============================================

"Same" means identical after collapsing whitespace; semantic equality is the verifier's job.
``ANSWER`` is matched case-insensitively at the start of a line (``Final answer:`` too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewards.verdict import Reason

ANSWER_INSTRUCTION = (
    "Solve the problem step by step. Keep the reasoning short. "
    "On the last line, write the final answer alone in the form\n"
    "ANSWER: <answer>\n"
    "where <answer> is a number or a mathematical expression, with no units and no other words."
)

# One worked example per entry: (question, assistant reply). The reply shows the exact format.
WORKED_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        "Tom has 2 apples and buys 1 more. How many apples does he have now?",
        "He starts with 2 apples and buys 1 more: 2 + 1 = 3.\nANSWER: 3",
    ),
    (
        "A box holds 4 rows of 6 eggs. 5 eggs break. How many eggs are left?",
        "The box holds 4 * 6 = 24 eggs. After 5 break, 24 - 5 = 19 remain.\nANSWER: 19",
    ),
    (
        "What is one half of 9?",
        "Half of 9 is 9 / 2 = 4.5.\nANSWER: 4.5",
    ),
)


def build_messages(question: str, num_shots: int = 0) -> list[dict[str, str]]:
    """Chat messages for one problem: the instruction, ``num_shots`` worked examples, the question."""
    if not 0 <= num_shots <= len(WORKED_EXAMPLES):
        raise ValueError(f"num_shots must be between 0 and {len(WORKED_EXAMPLES)}, got {num_shots}")
    messages = [{"role": "system", "content": ANSWER_INSTRUCTION}]
    for example_question, example_reply in WORKED_EXAMPLES[:num_shots]:
        messages.append({"role": "user", "content": example_question})
        messages.append({"role": "assistant", "content": example_reply})
    messages.append({"role": "user", "content": question})
    return messages


@dataclass(frozen=True)
class FinalAnswer:
    """What extraction found: the answer (or None) and why."""

    answer: str | None
    reason: Reason  # CORRECT here only means "found"; NO_ANSWER or HEDGED otherwise
    statements: tuple[str, ...]  # every final-answer statement found, in order


_ANSWER_LINE = re.compile(
    r"^[ \t>#*_]*(?:final[ \t]+)?answer[ \t]*[*_]*[ \t]*:[ \t]*(?P<value>.*?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")


def _boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of every outermost balanced ``\\boxed{...}``, in one linear pass.

    Unclosed boxes (a truncated completion) are skipped.
    """
    box_opens = {m.end() - 1: m.start() for m in _BOX_OPEN.finditer(text)}  # brace index -> box start
    stack: list[int] = []  # indices of open braces
    spans = []
    open_boxes = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in "{}":
            i += 2  # an escaped brace (\{ for sets) does not change depth
            continue
        if ch == "{":
            stack.append(i)
            open_boxes += i in box_opens
        elif ch == "}" and stack:
            brace = stack.pop()
            if brace in box_opens:
                open_boxes -= 1
                if open_boxes == 0:  # outermost box closed
                    spans.append((box_opens[brace], i + 1, text[brace + 1 : i]))
        i += 1
    return spans


def _clean(value: str) -> str:
    value = " ".join(value.split())
    value = value.strip("*_ ")
    if len(value) >= 2 and value.startswith("$") and value.endswith("$") and not value.startswith("$$"):
        value = value[1:-1].strip()
    elif value.startswith("$$") and value.endswith("$$") and len(value) >= 4:
        value = value[2:-2].strip()
    if value.endswith(".") and not value.endswith(".."):
        value = value[:-1].rstrip()
    return value


def find_final_answer(text: str) -> FinalAnswer:
    """Every final-answer statement in ``text``, and the single answer they agree on (if any)."""
    if not isinstance(text, str):
        raise TypeError(f"completion must be str, got {type(text).__name__}")
    statements: list[tuple[int, str]] = []
    answer_line_spans = []
    for line in _ANSWER_LINE.finditer(text):
        value = line.group("value")
        answer_line_spans.append((line.start(), line.end()))
        boxes = _boxed_spans(value)
        if boxes:
            statements.extend((line.start(), _clean(content)) for _, _, content in boxes)
        else:
            statements.append((line.start(), _clean(value)))
    for start, _, content in _boxed_spans(text):
        if not any(lo <= start < hi for lo, hi in answer_line_spans):
            statements.append((start, _clean(content)))
    statements.sort()
    values = tuple(value for _, value in statements if value)
    distinct = set(values)
    if not distinct:
        return FinalAnswer(None, Reason.NO_ANSWER, values)
    if len(distinct) > 1:
        return FinalAnswer(None, Reason.HEDGED, values)
    return FinalAnswer(values[0], Reason.CORRECT, values)


def extract_answer(text: str) -> str | None:
    r"""The single final answer stated in ``text``, or None (see the module docstring for the policy).

    >>> extract_answer("2 + 1 = 3\nANSWER: 3")
    '3'
    >>> extract_answer(r"so \boxed{\frac{1}{2}}")
    '\\frac{1}{2}'
    >>> extract_answer("ANSWER: 3\nANSWER: 4") is None
    True
    >>> extract_answer("The answer is 7") is None
    True
    """
    return find_final_answer(text).answer
