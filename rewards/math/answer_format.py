r"""The answer-format contract: what the model is told, and how its final answer is read back.

Training prompts and eval prompts are built here and nowhere else, so the policy is asked for
exactly the format the extractor reads.

Extraction policy (``extract_answer``):

============================================  ==============================================
Completion contains                           Result
============================================  ==============================================
one ``ANSWER: <value>`` line                  ``<value>`` (``$``, trailing ``.`` and ``**`` stripped)
an ``ANSWER:`` line holding only ``\boxed{v}``  ``v``
an ``ANSWER:`` line with a box and other      the whole line (``\boxed{4} (or maybe 5)``), which
text                                          the verifier then rejects
one ``\boxed{v}`` (nested braces fine)        ``v``
several ANSWER lines / boxes, all the same    that value (restating an answer is fine)
several that differ (``ANSWER: 3`` then       ``None``, reason ``hedged``; ``grade`` still pays
``ANSWER: 4``, two different boxes, a box     when every one of them verifies equal to the
and an ANSWER line that disagree)             reference (``4`` and ``4.0``): no "best" one is picked
text after the last answer that may revise    ``None``, reason ``hedged`` ("Wait, that's wrong,
it (a digit, ``=``, a box, or words like      it is 5."); closing prose without them ("I hope
wait / wrong / actually / but / or / not)     it is correct.") is fine
an unclosed ``\boxed{`` (truncated output)    not an answer (and, after a closed one, a revision)
neither                                       ``None``, reason ``no_answer``
only numbers in prose ("so we get 7")         ``None``: there is **no** last-number fallback
============================================  ==============================================

"Same" means identical after collapsing whitespace; semantic equality is the verifier's job.
``ANSWER`` is matched case-insensitively at the start of a line (``Final answer:`` too).

Reasoning models (``think``, a frozen setting shared by reward and scorer and recorded with the
verifier fingerprint): ``"none"`` reads the whole completion; ``"after_last_close"`` reads only
what follows the last ``</think>``, and a completion without one has no answer.
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

# Added to ANSWER_INSTRUCTION when the run offers the ``python`` tool (python_tool/session.py): only the
# model's own replies are graded, so an answer the tool prints does not count until the model writes it.
TOOL_INSTRUCTION = (
    "You can run Python with the python tool to check arithmetic; it returns what the program printed. "
    "The tool's output is not your answer: write the final ANSWER line yourself, in your last reply."
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


def tool_reply(result: str) -> str:
    """The model's own last turn after the tool printed ``result``: it states the answer itself."""
    return f"The tool printed {result.strip()}.\nANSWER: {result.strip()}"


def tool_call_turns(code: str, result: str) -> list[dict]:
    """One call and its answer in the chat format of TRL and transformers: an assistant turn with ``tool_calls``
    (``python`` running ``code``), the tool's ``result``, then ``tool_reply``. The worked example and the tool
    warm start's transcripts (python_tool/warm_start.py) are both this shape."""
    call = {"type": "function", "function": {"name": "python", "arguments": {"code": code}}}
    return [
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "name": "python", "content": result},
        {"role": "assistant", "content": tool_reply(result)},
    ]


# With the tool, the first worked example shows a call and the answer written by the model itself. ``result`` is
# exactly what python_tool/session.py returns for ``code`` (tests/python_tool/test_tool_config.py runs it).
TOOL_WORKED_EXAMPLE = {"code": "print(2 + 1)", "result": "3\n", "reply": tool_reply("3\n")}


def _tool_example_turns(question: str) -> list[dict]:
    return [
        {"role": "user", "content": question},
        *tool_call_turns(TOOL_WORKED_EXAMPLE["code"], TOOL_WORKED_EXAMPLE["result"]),
    ]


def build_messages(question: str, num_shots: int = 0, tools: bool = False) -> list[dict]:
    """Chat messages for one problem: the instruction, ``num_shots`` worked examples, the question.

    ``tools``: the run offers the ``python`` tool: ``TOOL_INSTRUCTION`` is added and the first worked example
    (of the same question) calls the tool before answering (``TOOL_WORKED_EXAMPLE``)."""
    if not 0 <= num_shots <= len(WORKED_EXAMPLES):
        raise ValueError(f"num_shots must be between 0 and {len(WORKED_EXAMPLES)}, got {num_shots}")
    instruction = f"{ANSWER_INSTRUCTION}\n{TOOL_INSTRUCTION}" if tools else ANSWER_INSTRUCTION
    messages: list[dict] = [{"role": "system", "content": instruction}]
    for index, (example_question, example_reply) in enumerate(WORKED_EXAMPLES[:num_shots]):
        if tools and index == 0:
            messages += _tool_example_turns(example_question)
            continue
        messages.append({"role": "user", "content": example_question})
        messages.append({"role": "assistant", "content": example_reply})
    messages.append({"role": "user", "content": question})
    return messages


THINK_NONE = "none"
THINK_AFTER_LAST_CLOSE = "after_last_close"
THINK_MODES = (THINK_NONE, THINK_AFTER_LAST_CLOSE)
_THINK_CLOSE = "</think>"


@dataclass(frozen=True)
class FinalAnswer:
    """What extraction found: the answer (or None) and why."""

    answer: str | None
    reason: Reason  # CORRECT here only means "found"; NO_ANSWER or HEDGED otherwise
    statements: tuple[str, ...]  # every final-answer statement found, in order
    detail: str = ""  # why there is no single answer, for the Verdict's explanation


# Linear by construction: one character class between "answer" and ":" (no two adjacent
# quantifiers that can trade characters), and the value is the rest of the line.
_ANSWER_LINE = re.compile(r"^[ \t>#*_]*(?:final[ \t]+)?answer[ \t*_]*:(?P<value>[^\n]*)", re.IGNORECASE | re.MULTILINE)
_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
# Text after the last final answer may close the reply ("I hope it is correct."), never revise it.
_REVISION = re.compile(
    r"\d|=|\\boxed|\\fbox|\banswer\b|\b(?:wait|wrong|mistake|incorrect|actually|instead|correct(?:ion|ed)|oops"
    r"|hmm|no|not|recheck|reconsider|redo|let me|but|however|alternatively|maybe|perhaps|or|rather|sorry)\b",
    re.IGNORECASE,
)
_OUTSIDE_BOX_OK = re.compile(r"^[\s$.*_]*$")


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


def boxed_contents(text: str) -> tuple[list[str], str]:
    """The contents of the outermost boxes in ``text`` and the text outside them (for ``is_correct``)."""
    spans = _boxed_spans(text)
    pieces, last = [], 0
    for start, end, _ in spans:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return [content for _, _, content in spans], "".join(pieces)


_WHITESPACE = re.compile(r"\s+")


def _clean(value: str) -> str:
    # whitespace collapses, but a line break stays one: "22\n\sqrt{3}" is two lines, not the product 22*sqrt(3)
    value = _WHITESPACE.sub(lambda m: "\n" if "\n" in m.group() or "\r" in m.group() else " ", value.strip())
    value = value.strip("*_ ")
    if len(value) >= 2 and value.startswith("$") and value.endswith("$") and not value.startswith("$$"):
        value = value[1:-1].strip()
    elif value.startswith("$$") and value.endswith("$$") and len(value) >= 4:
        value = value[2:-2].strip()
    if value.endswith(".") and not value.endswith(".."):
        value = value[:-1].rstrip()
    return value


def answer_region(text: str, think: str = THINK_NONE) -> str | None:
    """The part of a completion that may hold the final answer under the ``think`` setting.

    ``none``: the whole completion. ``after_last_close``: only what follows the last ``</think>``
    (reasoning models write tentative boxes while thinking); no closing tag means the model never
    finished thinking, so there is no answer (None).
    """
    if think == THINK_NONE:
        return text
    if think == THINK_AFTER_LAST_CLOSE:
        close = text.rfind(_THINK_CLOSE)
        return None if close < 0 else text[close + len(_THINK_CLOSE) :]
    raise ValueError(f"think must be one of {THINK_MODES}, got {think!r}")


def find_final_answer(text: str, think: str = THINK_NONE) -> FinalAnswer:
    """Every final-answer statement in ``text``, and the single answer they agree on (if any).

    Linear in ``len(text)``: two regex scans without nested quantifiers and one brace pass.
    """
    if not isinstance(text, str):
        raise TypeError(f"completion must be str, got {type(text).__name__}")
    region = answer_region(text, think)
    if region is None:
        return FinalAnswer(None, Reason.NO_ANSWER, (), "no closing </think> tag")
    statements: list[tuple[int, int, str]] = []  # (start, end, value)
    answer_line_spans = []
    for line in _ANSWER_LINE.finditer(region):
        value = line.group("value")
        answer_line_spans.append((line.start(), line.end()))
        boxes = _boxed_spans(value)
        outside = "".join(
            value[last:start]
            for last, start in zip([0] + [e for _, e, _ in boxes], [s for s, _, _ in boxes] + [len(value)])
        )
        if boxes and _OUTSIDE_BOX_OK.match(outside):
            statements.extend((line.start(), line.end(), _clean(content)) for _, _, content in boxes)
        else:  # "\boxed{4} (or maybe 5)": the whole line is the statement, and the verifier reads all of it
            statements.append((line.start(), line.end(), _clean(value)))
    for start, end, content in _boxed_spans(region):
        if not any(lo <= start < hi for lo, hi in answer_line_spans):
            statements.append((start, end, _clean(content)))
    statements.sort()
    values = tuple(value for _, _, value in statements if value)
    distinct = set(values)
    if not distinct:
        return FinalAnswer(None, Reason.NO_ANSWER, values, "no ANSWER: line or \\boxed{}")
    last_end = max(end for _, end, value in statements if value)
    tail = region[last_end:].strip()
    if tail and (len(tail) > 300 or _REVISION.search(tail)):
        shown = tail if len(tail) <= 60 else tail[:57] + "..."
        return FinalAnswer(None, Reason.HEDGED, values, f"text after the final answer may revise it: {shown!r}")
    if len(distinct) > 1:
        shown = ", ".join(repr(v) for v in values[:4])
        return FinalAnswer(None, Reason.HEDGED, values, f"several different final answers: {shown}")
    return FinalAnswer(values[0], Reason.CORRECT, values)


def extract_answer(text: str, think: str = THINK_NONE) -> str | None:
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
    return find_final_answer(text, think).answer
