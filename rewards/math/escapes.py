r"""LaTeX that went through JSON (or Python) escaping once too often: ``\\frac{1}{5}`` for ``\frac{1}{5}``.

In LaTeX ``\\`` is a line break, so a doubled string is read as LaTeX only when no other reading is
possible: every backslash is part of a doubled pair, at least one pair starts a command or an escaped
brace (``\\frac``, ``\\left``, ``\\{``), no pair stands where a line break could (before a space, a
digit, a sign, ``&`` or the end: ``3 \\ 4`` is two answers on two lines, not ``3\ 4``), and a doubled
line break (``\\\\``) appears only between the rows of a matrix. Anything else that mixes the two
readings is refused, never guessed. A literal ``\n`` (an escaped newline: LaTeX has no ``\n``
command) is whitespace. Linear in the input.
"""

from __future__ import annotations

import re

from rewards.math.answer_tree import Unparseable

_RUN = re.compile(r"\\+")
_ESCAPED_NEWLINE = re.compile(r"(?<!\\)\\n(?![A-Za-z])")  # one backslash, then n, then no letter
_COMMAND_AFTER = re.compile(r"[A-Za-z{}%$]")
_EVIDENCE = re.compile(r"(?!n(?![A-Za-z]))[A-Za-z]|[{}%$]")  # a command (not a bare \\n), an escaped brace, % or $
_DELIMITERS = ("(", ")", "[", "]")  # \\( ... \\): doubled math delimiters, only at the ends
ROWS_ENVIRONMENT = re.compile(r"\\begin\{(?:[pbBvV]?matrix|array|cases)\}")


def _runs(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _RUN.finditer(text)]


def looks_doubled(text: str) -> bool:
    r"""Whether ``text`` holds a doubled command (``\\frac``, ``\\{``) and no single backslash at all."""
    runs = _runs(text)
    if not runs or any((end - start) % 2 for start, end in runs):
        return False
    return any(end - start == 2 and _EVIDENCE.match(text, end) for start, end in runs)


def refuse_line_breaks(text: str) -> str:
    r"""A ``\\`` left in an answer is a LaTeX line break: one at the end means nothing (dropped); anywhere
    else outside a matrix it separates two answers, and no parser may read it as ``\`` or as nothing.

    >>> refuse_line_breaks("185\\\\")
    '185'
    """
    text = re.sub(r"(?:\\\\\s*)+$", "", text)
    if "\\\\" in text and not ROWS_ENVIRONMENT.search(text):
        raise Unparseable("a LaTeX line break (\\\\) between parts of the answer: two answers, or one?")
    return text


def undouble(text: str) -> tuple[str, bool]:
    r"""``(text, False)`` when it is not doubled; ``(halved, True)`` when it is, unambiguously.

    Raises ``Unparseable`` (saying why) when the text is doubled but a pair could be a line break.

    >>> undouble(r"\\frac{1}{5}")
    ('\\frac{1}{5}', True)
    >>> undouble(r"\frac{1}{5}")
    ('\\frac{1}{5}', False)
    >>> undouble(r"\\frac{1}{2} \\ \\frac{1}{2}")
    Traceback (most recent call last):
    ...
    rewards.math.answer_tree.Unparseable: doubled backslashes (escaped twice?) with a '\\' that could be a LaTeX line break between two answers: refused, not guessed
    """
    text = _ESCAPED_NEWLINE.sub(" ", text)
    if not looks_doubled(text):
        return text, False
    last = len(text.rstrip())
    first = len(text) - len(text.lstrip())
    for start, end in _runs(text):
        after = text[end : end + 1]
        at_edge = start == first or end + 1 == last
        if end - start == 2 and (_COMMAND_AFTER.match(after) or (after in _DELIMITERS and at_edge)):
            continue
        if end - start == 4:  # a doubled row break: fine only inside a matrix
            continue
        raise Unparseable(
            "doubled backslashes (escaped twice?) with a '\\\\' that could be a LaTeX line break between two "
            "answers: refused, not guessed"
        )
    halved = _RUN.sub(lambda m: "\\" * ((m.end() - m.start()) // 2), text)
    if "\\\\" in halved and not ROWS_ENVIRONMENT.search(halved):
        raise Unparseable("doubled backslashes (escaped twice?) with a line break outside a matrix: refused")
    return _ESCAPED_NEWLINE.sub(" ", halved), True
