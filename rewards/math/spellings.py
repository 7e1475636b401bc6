r"""Spellings of one value that the math grammar cannot read, rewritten to the form it reads (issue #50).

Dataset references are written this way (``7^\text{th}``, ``3\text{ p.m.}``, ``\\[4pt]`` between matrix rows,
``\frac{{1}}{{3}}``), and a reference the verifier cannot read costs every completion on its problem its reward.
Each rewrite here is exact (it never changes a value) and narrow (a whole answer, or one token pattern), and is
applied to candidate and reference alike by ``rewards.math.structure.normalize``:

* **an ordinal is its number**: ``7^\text{th}``, ``7^{th}``, ``7\text{th}``, ``7th``, ``1^{st}``, ``22nd`` are 7,
  1 and 22, only as a whole answer and only with the suffix English gives that number (``2^{th}`` and ``3st`` are
  not read): ``2nd`` is the ordinal 2, never the product 2nd;
* **a time of day is one clock reading**, written ``h:MM am`` or ``h:MM pm``: ``3\text{ p.m.}``, ``3 PM``,
  ``3:00\,\text{pm}`` and the 24-hour ``15:00`` are ``3:00 pm``; ``12 p.m.`` is noon and ``12 a.m.`` (``00:00``)
  midnight. A time without a.m. or p.m. is a 24-hour time only where that reading is the only one: an hour of 0
  or 13 to 23, or written with a leading zero (``03:30``). ``3:00``, ``10:30`` and ``12:00`` could be either half
  of the day, so they stay as written and compare as text (round 5): ``3:00`` answers ``3:00`` and neither
  ``3 a.m.`` nor ``3 p.m.`` (which half the writer meant is not written). Times then compare as text
  (``rewards.math.structure.text_answer``); a bare ``3`` (a number, not a time) answers none;
* **a row break's spacing is layout**: ``\\[4pt]`` (any TeX length) is ``\\``;
* **a braced array is a system**: ``\left\{\begin{array}{l} x = 1 \\ y = 2 \end{array}\right.`` is the
  ``cases`` system ``x = 1, y = 2`` (``rewards.math.structure`` reads its lines as a list);
* **braces are transparent** (``rewards.math.vocabulary.WRAPPERS``): a group that only holds another group is
  that group (``\frac{{1}}{{3}}`` is ``\frac{1}{3}``, ``x^{{2}}`` is ``x^{2}``), and braces around a whole number
  or a fraction of whole numbers standing as a value (not a macro's argument or a script) are dropped
  (``{1}/{3}`` is ``1/3``, ``-{\frac{1}{3}}`` is ``-\frac{1}{3}``). This runs after the grammar has read the
  answer, so no brace removed here can put two values side by side that the grammar refused.

Plain bounded string work (the input is length-capped before it gets here); no parser, no evaluation.
"""

from __future__ import annotations

import re

from rewards.math.vocabulary import TEXT_MACROS

_TEXT_OPEN = re.compile("(?:" + "|".join(map(re.escape, TEXT_MACROS)) + r")\s*\{")
_GAPS = re.compile(r"\\[,;:! ]|~|\\(?:thinspace|medspace|thickspace)(?![A-Za-z])")

_ORDINAL = re.compile(r"\s*(?P<number>\d{1,9})\s*\^?\s*(?P<suffix>st|nd|rd|th)\s*")
_TIME = re.compile(r"\s*(?P<hour>\d{1,2})\s*(?::\s*(?P<minute>\d{2}))?\s*(?P<half>[ap])\.?\s*m\.?\s*", re.IGNORECASE)
_CLOCK = re.compile(r"\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*")
_ROW_SPACING = re.compile(
    r"(?<!\\)\\\\\s*\[\s*-?(?:\d+(?:\.\d*)?|\.\d+)\s*(?:pt|em|ex|mm|cm|in|bp|pc|mu|sp|dd|cc|px)\s*\]"
)
_BRACE_SYSTEM = re.compile(
    r"\\left\s*\\\{\s*\\begin\{array\}\s*\{[lcr|\s]*\}(?P<rows>.*)\\end\{array\}\s*\\right\s*\.?", re.S
)
_ALIGNED_EQUALS = re.compile(r"&\s*=|=\s*&")
_VALUE_IN_BRACES = re.compile(r"\s*(?:\d+(?:\.\d+)?|\\[dt]?frac\s*\{\s*\d+\s*\}\s*\{\s*\d+\s*\})\s*")
_VALUE_BEFORE = frozenset("+-*/=,;([{<>&|")  # a brace group after these (or at the start) stands as a value
_VALUE_AFTER = frozenset("+-*/=,;)]}<>&|^!%\\")  # ... and ends one before these (or the end)


def _plain(text: str) -> str:
    """The text with its text macros and braces removed and gaps as spaces: only for matching a whole answer."""
    return _GAPS.sub(" ", _TEXT_OPEN.sub(" ", text)).replace("{", " ").replace("}", " ")


def _english_suffix(number: int) -> str:
    if number % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def ordinal(text: str) -> str:
    r"""``7^\text{th}`` -> ``7`` when the whole answer is an ordinal with its English suffix; else unchanged.

    >>> ordinal(r"7^\text{th}"), ordinal("22nd"), ordinal("2^{th}"), ordinal("2nd + 1")
    ('7', '22', '2^{th}', '2nd + 1')
    """
    m = _ORDINAL.fullmatch(_plain(text))
    if m is None or _english_suffix(int(m.group("number"))) != m.group("suffix"):
        return text
    return m.group("number")


def _clock(hour: int, minute: int) -> str:
    """A time of day as one text, whatever its spelling: ``3:00 pm``, ``12:05 am`` (never a bare ``H:MM``, which
    is the spelling of a time whose half of the day is not written)."""
    return f"{hour % 12 or 12}:{minute:02d} {'pm' if hour >= 12 else 'am'}"


def time_of_day(text: str) -> str:
    r"""``3\text{ p.m.}`` -> ``3:00 pm``, ``15:00`` -> ``3:00 pm`` when the whole answer is a time of day whose half
    of the day is written (a.m./p.m., or a 24-hour time that has one reading); else unchanged.

    >>> time_of_day(r"3\text{ p.m.}"), time_of_day("11:45 AM"), time_of_day("12 a.m."), time_of_day("13 pm")
    ('3:00 pm', '11:45 am', '12:00 am', '13 pm')
    >>> time_of_day("15:00"), time_of_day("03:05"), time_of_day("00:30"), time_of_day("24:00")
    ('3:00 pm', '3:05 am', '12:30 am', '24:00')
    >>> time_of_day("3:05"), time_of_day("10:30"), time_of_day("12:00"), time_of_day("3:5")
    ('3:05', '10:30', '12:00', '3:5')
    """
    plain = _plain(text)
    if m := _CLOCK.fullmatch(plain):  # no a.m./p.m.: a 24-hour time only where no 12-hour reading exists
        hour, minute = int(m.group("hour")), int(m.group("minute"))
        one_reading = hour == 0 or hour >= 13 or m.group("hour").startswith("0")
        return _clock(hour, minute) if one_reading and hour <= 23 and minute <= 59 else text
    m = _TIME.fullmatch(plain)
    if m is None:
        return text
    hour, minute = int(m.group("hour")), int(m.group("minute") or 0)
    if not 1 <= hour <= 12 or minute > 59:
        return text
    return _clock(hour % 12 + (12 if m.group("half").lower() == "p" else 0), minute)


def brace_system(text: str) -> str:
    r"""``\left\{\begin{array}{l} x = 1 \\ y = 2 \end{array}\right.`` -> ``\begin{cases} x = 1 \\ y = 2 \end{cases}``.

    A system written as an array after an opening brace is a ``cases`` system; an ``&`` that only aligns an
    ``=`` (``x &= 1``) is layout and goes, any other ``&`` stays (a piecewise definition, which is not read).
    """
    m = _BRACE_SYSTEM.fullmatch(text.strip())
    if m is None:
        return text
    return r"\begin{cases}" + _ALIGNED_EQUALS.sub("=", m.group("rows")) + r"\end{cases}"


def row_spacing(text: str) -> str:
    r"""``\\[4pt]`` -> ``\\``: the extra space after a row break (a TeX length) is layout, not a value."""
    return _ROW_SPACING.sub(r"\\\\", text) if "\\\\" in text else text


def _brace_pairs(text: str) -> dict[int, int]:
    """Each unescaped ``{`` to its matching ``}`` (an unbalanced text gets no pairs: the caller refuses it)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    k = 0
    while k < len(text):
        ch = text[k]
        if ch == "\\":
            k += 2 if k + 1 < len(text) and not text[k + 1].isalpha() else 1
            continue
        if ch == "{":
            stack.append(k)
        elif ch == "}":
            if not stack:
                return {}
            pairs[stack.pop()] = k
        k += 1
    return pairs if not stack else {}


def _stands_as_value(text: str, open_at: int, close_at: int) -> bool:
    before = text[:open_at].rstrip()
    after = text[close_at + 1 :].lstrip()
    if before and (before[-1] not in _VALUE_BEFORE or before.endswith(("\\{", "\\[", "\\("))):
        return False
    return not after or after[0] in _VALUE_AFTER


def collapse_braces(text: str) -> str:
    r"""``\frac{{1}}{{3}}`` -> ``\frac{1}{3}``, ``{1}/{3}`` -> ``1/3``: braces that change nothing, removed.

    >>> collapse_braces(r"\frac{{1}}{{3}}"), collapse_braces("{1}/{3}"), collapse_braces(r"-{\frac{1}{3}}")
    ('\\frac{1}{3}', '1/3', '-\\frac{1}{3}')
    >>> collapse_braces(r"\frac {12}{3}"), collapse_braces("x^{2}"), collapse_braces(r"\sqrt[3]{8}")
    ('\\frac {12}{3}', 'x^{2}', '\\sqrt[3]{8}')
    """
    while "{" in text:  # each pass removes every pair that changes nothing; nesting is bounded, so are the passes
        pairs = _brace_pairs(text)
        # a group holding only a group first (its inner group is then the argument, and must stay one)
        drop = {k for o, c in pairs.items() if text[o + 1 : o + 2] == "{" and pairs.get(o + 1) == c - 1 for k in (o, c)}
        if not drop:
            drop = {
                k
                for o, c in pairs.items()
                if _VALUE_IN_BRACES.fullmatch(text, o + 1, c) and _stands_as_value(text, o, c)
                for k in (o, c)
            }
        if not drop:
            break
        text = "".join(ch for k, ch in enumerate(text) if k not in drop)
    return text
