r"""The answer-format contract: what the model is told, and how its final answer is read back.

Training prompts and eval prompts are built here and nowhere else, so the policy is asked for
exactly the format the extractor reads.

Named answer formats (``ANSWER_FORMATS``; the training key ``answer_format``, the eval's ``-T answer_format=``):
each is an instruction and worked examples that teach one final-answer line, and the extractor that reads that
line. ``\boxed{}`` is read in every format; the hedge, ending and negation rules are the same in all.

=================  ===============================================================================
``answer_line``    the default: ``ANSWER: <value>`` on the last line (also ``Final answer:``)
``minerva``        Minerva's ``Final Answer: The final answer is $<value>$. I hope it is correct.``
``gsm8k``          GSM8K's ``#### <value>``
=================  ===============================================================================

Extraction policy (``extract_answer``), shown for the default format:

============================================  ==============================================
Completion contains                           Result
============================================  ==============================================
one ``ANSWER: <value>`` line                  ``<value>`` (``$``, trailing ``.`` and ``**`` stripped)
an ``ANSWER:`` line holding only ``\boxed{v}``  ``v`` (a lead-in "The final answer is" may stand before the box)
an ``ANSWER:`` line with a box and other      the whole line (``\boxed{4} (or maybe 5)``), which
text                                          the verifier then rejects
one ``\boxed{v}`` (nested braces fine)        ``v``
several ANSWER lines / boxes, all the same    that value (restating an answer is fine)
several that differ (``ANSWER: 3`` then       ``None``, reason ``hedged``; ``grade`` still pays
``ANSWER: 4``, two different boxes, a box     when every one of them verifies equal to the
and an ANSWER line that disagree)             reference (``4`` and ``4.0``): no "best" one is picked
a statement negated just before it            not an answer ("The answer is not \boxed{120}"); the
                                              others stand ("not 125 but \boxed{120}" is 120)
text after the last answer that takes it      ``None``, reason ``hedged`` ("Wait, that's wrong.",
back (a retraction, doubt, correction,        "Hmm, or maybe", "I'm not sure", "Correction:")
alternative, condition or negation)
text after it that states another value       one more statement ("It should be 125": a hedge)
ordinary endings: pleasantries, the answer    fine ("Let me know if you have any other questions!",
restated in words, how it was checked,        "That is my final answer.", "The answer was checked by
closing delimiters, headings, end tokens      adding 24 five times.", ``\]``, ``<|im_end|>``)
an unclosed ``\boxed{`` (truncated output)    not an answer (and, after a closed one, a revision)
neither                                       ``None``, reason ``no_answer``
only numbers in prose ("so we get 7")         ``None``: there is **no** last-number fallback
============================================  ==============================================

The ending and negation rules are ``rewards.math.endings``. "Same" means identical after collapsing whitespace;
semantic equality is the verifier's job. ``ANSWER`` is matched case-insensitively at the start of a line
(``Final answer:`` too).

Reasoning models (``think``, a frozen setting shared by reward and scorer and recorded with the
verifier fingerprint): ``"none"`` reads the whole completion; ``"after_last_close"`` reads only
what follows the last ``</think>``, and a completion without one has no answer.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from rewards.math import endings
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

MINERVA_INSTRUCTION = (
    "Solve the problem step by step. Keep the reasoning short. "
    "End your reply with the final answer in the form\n"
    "Final Answer: The final answer is $<answer>$. I hope it is correct.\n"
    "where <answer> is a number or a mathematical expression, with no units and no other words."
)

GSM8K_INSTRUCTION = (
    "Solve the problem step by step. Keep the reasoning short. "
    "On the last line, write the final answer alone in the form\n"
    "#### <answer>\n"
    "where <answer> is a number or a mathematical expression, with no units and no other words."
)


@dataclass(frozen=True)
class AnswerFormat:
    """A named final-answer format: the instruction that teaches it, the line it asks for (``template``, with
    ``{answer}`` where the value goes) and the pattern that reads that line back (group ``value``)."""

    name: str
    instruction: str
    template: str
    pattern: re.Pattern
    marker: str  # how the line starts, for messages ("no ANSWER: line or \\boxed{}")
    description: str

    def line(self, answer: str) -> str:
        """The final-answer line for ``answer``, as the worked examples write it."""
        return self.template.format(answer=answer)


# Linear by construction: one character class between "answer" and ":" (no two adjacent
# quantifiers that can trade characters), and the value is the rest of the line.
_ANSWER_LINE = re.compile(r"^[ \t>#*_]*(?:final[ \t]+)?answer[ \t*_]*:(?P<value>[^\n]*)", re.IGNORECASE | re.MULTILINE)
_MINERVA_LINE = re.compile(
    r"^[ \t>#*_]*final[ \t]+answer[ \t*_]*:[ \t*_]*(?:the[ \t]+final[ \t]+answer[ \t]+is\b[ \t:]*)?(?P<value>[^\n]*)",
    re.IGNORECASE | re.MULTILINE,
)
_GSM8K_LINE = re.compile(r"^[ \t>*_]*####(?P<value>[^\n]*)", re.MULTILINE)

DEFAULT_ANSWER_FORMAT = "answer_line"
ANSWER_FORMATS: dict[str, AnswerFormat] = {
    fmt.name: fmt
    for fmt in (
        AnswerFormat(
            "answer_line",
            ANSWER_INSTRUCTION,
            "ANSWER: {answer}",
            _ANSWER_LINE,
            "ANSWER:",
            "a last line ANSWER: <value>",
        ),
        AnswerFormat(
            "minerva",
            MINERVA_INSTRUCTION,
            "Final Answer: The final answer is ${answer}$. I hope it is correct.",
            _MINERVA_LINE,
            "Final Answer:",
            "Minerva's Final Answer: The final answer is $<value>$. I hope it is correct.",
        ),
        AnswerFormat(
            "gsm8k", GSM8K_INSTRUCTION, "#### {answer}", _GSM8K_LINE, "####", "GSM8K's last line #### <value>"
        ),
    )
}


def answer_format_named(name: str) -> AnswerFormat:
    """The named format; ValueError naming the valid ones otherwise."""
    if name not in ANSWER_FORMATS:
        raise ValueError(f"answer_format must be one of {tuple(ANSWER_FORMATS)}, got {name!r}")
    return ANSWER_FORMATS[name]


# The worked examples: (question, reasoning, answer); each format writes the answer in its own line.
_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        "Tom has 2 apples and buys 1 more. How many apples does he have now?",
        "He starts with 2 apples and buys 1 more: 2 + 1 = 3.",
        "3",
    ),
    (
        "A box holds 4 rows of 6 eggs. 5 eggs break. How many eggs are left?",
        "The box holds 4 * 6 = 24 eggs. After 5 break, 24 - 5 = 19 remain.",
        "19",
    ),
    ("What is one half of 9?", "Half of 9 is 9 / 2 = 4.5.", "4.5"),
)


def worked_examples(answer_format: str = DEFAULT_ANSWER_FORMAT) -> tuple[tuple[str, str], ...]:
    """(question, assistant reply) per worked example, the reply ending in ``answer_format``'s line."""
    fmt = answer_format_named(answer_format)
    return tuple((question, f"{reasoning}\n{fmt.line(answer)}") for question, reasoning, answer in _EXAMPLES)


# One worked example per entry: (question, assistant reply) in the default format. The reply shows the exact format.
WORKED_EXAMPLES: tuple[tuple[str, str], ...] = worked_examples()


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


def build_messages(
    question: str, num_shots: int = 0, tools: bool = False, answer_format: str = DEFAULT_ANSWER_FORMAT
) -> list[dict]:
    """Chat messages for one problem: the instruction, ``num_shots`` worked examples, the question.

    ``tools``: the run offers the ``python`` tool: ``TOOL_INSTRUCTION`` is added and the first worked example
    (of the same question) calls the tool before answering (``TOOL_WORKED_EXAMPLE``). ``answer_format``: the
    final-answer line the instruction and examples teach (``ANSWER_FORMATS``); the tool's prompt and its warm start
    teach the default one only."""
    examples = worked_examples(answer_format)
    if not 0 <= num_shots <= len(examples):
        raise ValueError(f"num_shots must be between 0 and {len(examples)}, got {num_shots}")
    if tools and answer_format != DEFAULT_ANSWER_FORMAT:
        raise ValueError(
            f"answer_format {answer_format!r} with the python tool: the tool's prompt and warm start teach the "
            f"{DEFAULT_ANSWER_FORMAT!r} format; use answer_format={DEFAULT_ANSWER_FORMAT} with tools"
        )
    instruction = ANSWER_FORMATS[answer_format].instruction
    instruction = f"{instruction}\n{TOOL_INSTRUCTION}" if tools else instruction
    messages: list[dict] = [{"role": "system", "content": instruction}]
    for index, (example_question, example_reply) in enumerate(examples[:num_shots]):
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


_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_OUTSIDE_BOX_OK = re.compile(r"^[\s$.*_]*$")
# words that may lead into a box on an answer line: "**Final Answer:** The final answer is $\boxed{120}$"
_BOX_LEAD_IN = re.compile(
    r"^[\s$*_]*(?:(?:so|thus|therefore|hence)[ \t,]+)?(?:the[ \t]+)?(?:final[ \t]+)?answer[ \t]+is[\s:$*_\\(\[]*$"
    r"|^[\s$*_\\(\[]*$",
    re.IGNORECASE,
)


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


def _answer_line_value(line: re.Match, boxed_ok: bool = True) -> list[tuple[int, int, str]]:
    """The statements of one answer line: its boxes when only a lead-in and delimiters stand around them
    ("ANSWER: \boxed{4}.", "Final Answer: The final answer is $\boxed{4}$"), else the whole value, which the verifier
    then reads whole ("\boxed{4} (or maybe 5)")."""
    value = line.group("value")
    boxes = _boxed_spans(value) if boxed_ok else []
    if boxes:
        between = [value[end:start] for (_, end, _), (start, _, _) in zip(boxes, boxes[1:])]
        if _BOX_LEAD_IN.match(value[: boxes[0][0]]) and _OUTSIDE_BOX_OK.match("".join(between) + value[boxes[-1][1] :]):
            return [(line.start(), line.end(), _clean(content)) for _, _, content in boxes]
    return [(line.start(), line.end(), _clean(value))]


_MINERVA_PLAIN_VALUE = re.compile(r"[^\n]*?(?=\.(?:\s|$)|$)")


def _minerva_value(line: re.Match) -> list[tuple[int, int, str]]:
    """Minerva's ``Final Answer: The final answer is $120$. I hope it is correct.``: the value is the math segment
    (or box) after the lead-in, else the words up to the sentence's end; what follows is the reply's ending."""
    value, offset = line.group("value"), line.start("value")
    stripped = len(value) - len(value.lstrip())
    segments, _ = endings.math_segments(value)
    if segments and segments[0][0] == stripped:
        start, end, content = segments[0]
        boxes = _boxed_spans(content.strip())
        if len(boxes) == 1 and boxes[0][0] == 0 and boxes[0][1] == len(content.strip()):  # $\boxed{7}$
            content = boxes[0][2]
        return [(line.start(), offset + end, _clean(content))]
    boxes = _boxed_spans(value)
    if boxes and boxes[0][0] == stripped:
        return [(line.start(), offset + boxes[0][1], _clean(boxes[0][2]))]
    plain = _MINERVA_PLAIN_VALUE.match(value)
    return [(line.start(), offset + plain.end(), _clean(plain.group()))]


def _statements(region: str, fmt: AnswerFormat) -> tuple[list[tuple[int, int, str]], set[int]]:
    """Every final-answer statement of ``fmt`` in ``region`` as (start, end, value), in order: its answer lines and
    every box outside them; and the starts of the boxes (a line starts its own sentence: no word before it can negate
    it)."""
    statements: list[tuple[int, int, str]] = []
    line_starts, line_ends = [], []
    for line in fmt.pattern.finditer(region):
        line_starts.append(line.start())
        line_ends.append(line.end())
        statements += _minerva_value(line) if fmt.name == "minerva" else _answer_line_value(line)
    boxes = set()
    for start, end, content in _boxed_spans(region):
        on_line = bisect.bisect_right(line_starts, start) - 1  # the last answer line starting at or before the box
        if on_line < 0 or start >= line_ends[on_line]:
            statements.append((start, end, _clean(content)))
            boxes.add(start)
    statements.sort()
    return [statement for statement in statements if statement[2]], boxes


def find_final_answer(text: str, think: str = THINK_NONE, answer_format: str = DEFAULT_ANSWER_FORMAT) -> FinalAnswer:
    """Every final-answer statement in ``text``, and the single answer they agree on (if any).

    ``answer_format``: which final-answer line is read (``ANSWER_FORMATS``; boxes are read in every format).
    Linear in ``len(text)``: regex scans without nested quantifiers, one brace pass, and the ending and negation
    rules (``rewards.math.endings``) on at most ``endings.MAX_TAIL_CHARS`` after the answer and a short window
    before each statement.
    """
    if not isinstance(text, str):
        raise TypeError(f"completion must be str, got {type(text).__name__}")
    fmt = answer_format_named(answer_format)
    region = answer_region(text, think)
    if region is None:
        return FinalAnswer(None, Reason.NO_ANSWER, (), "no closing </think> tag")
    statements, boxes = _statements(region, fmt)
    kept = [s for s in statements if s[0] not in boxes or not endings.negated_before(region, s[0])]
    if not kept:
        if statements:
            start, end, _ = statements[-1]
            shown = " ".join(region[max(0, start - 40) : end].split())
            detail = f"the final answer is negated, which states no answer: {shown!r}"
            return FinalAnswer(None, Reason.NO_ANSWER, tuple(v for _, _, v in statements), detail)
        return FinalAnswer(None, Reason.NO_ANSWER, (), f"no {fmt.marker} line or \\boxed{{}}")
    last = max(kept, key=lambda statement: statement[1])
    ending = endings.ending(region[last[1] :], last[2])
    values = tuple(value for _, _, value in kept)
    if ending.hedge is not None:
        return FinalAnswer(None, Reason.HEDGED, values, f"text after the final answer takes it back: {ending.hedge}")
    values += ending.stated
    if len(set(values)) > 1:
        shown = ", ".join(repr(v) for v in values[:4])
        return FinalAnswer(None, Reason.HEDGED, values, f"several different final answers: {shown}")
    return FinalAnswer(values[0], Reason.CORRECT, values)


def extract_answer(text: str, think: str = THINK_NONE, answer_format: str = DEFAULT_ANSWER_FORMAT) -> str | None:
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
    return find_final_answer(text, think, answer_format).answer
