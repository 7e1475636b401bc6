r"""Two answers side by side are two answers, never their product; a root sign takes its whole operand.

A LaTeX parser multiplies whatever it finds next to each other, so ``\sqrt{4}\quad 3`` would be 6 and
``\frac{1}{2}\,\frac{1}{3}`` would be 1/6: a policy could write two guesses and be paid for their product.
This module refuses those readings before any parser runs, and keeps the products people write:

* a number, a closed group (``}``, ``)``, ``]``) or a factorial followed by a digit or a fraction
  (``\sqrt{2}3``, ``\frac{1}{2} \frac{1}{3}``, ``(1+2)\,3``) is refused, whatever the spacing, and so is a
  letter followed after a space by one (``\pi\ \frac{29}{12}``, ``x 3``); a whole number before a fraction is a
  mixed number only when the fraction is proper digits (``2\frac{1}{3}``), else refused (``2\frac{5}{3}``);
* after a wide gap (a newline, ``\quad``, ``\qquad``, ``\hspace``) any new value is refused (``2\quad x``,
  ``3\n-1``); a unit or a word in ``\text{}`` may follow one (``5 \quad \text{cm}``);
* kept: a coefficient times a symbol or a root (``2\pi``, ``3\sqrt{2}``, ``2x``, ``2 \sqrt{3}``), products of
  brackets (``(1+i)(2-i)``), a mixed number (``2\frac{1}{3}``), a subscript or exponent digit (``\log_2 8``,
  ``x^{2} y``) and a function's argument (``\sin 30``).

Unicode ``√`` becomes ``\sqrt`` around its whole operand (``√16`` is ``\sqrt{16}``, never ``\sqrt16``, which
LaTeX reads as ``\sqrt{1}6``); an operand with no clear end (``√2x``) is refused. An unbraced ``\sqrt`` or
``sqrt`` before two or more digits is refused for the same reason. Linear in the input.
"""

from __future__ import annotations

import re

from rewards.math.answer_tree import Unparseable

_WIDE_GAP = re.compile(r"\n|\\q?quad(?![A-Za-z])|\\hspace\*?\{[^{}]*\}|\\enspace(?![A-Za-z])")
_GAP = re.compile(
    r"(?:\s|\\[,;:> !]|~|\\(?:thinspace|medspace|thickspace|negthinspace)(?![A-Za-z])"
    r"|\\q?quad(?![A-Za-z])|\\hspace\*?\{[^{}]*\}|\\enspace(?![A-Za-z]))*"
)
_FRACTION = re.compile(r"\\[dtc]?frac(?![A-Za-z])")
_NUMBER_START = re.compile(r"\d|\.\d")
_WORD_AFTER = re.compile(r"(?:or|and)\b")
# what starts a new value after a wide gap: not a unit or word in \text{}, not an operator or relation
_NEW_VALUE = re.compile(
    r"[0-9A-Za-z(\[+-]|\.\d|\\(?:[dtc]?frac|sqrt|pi|left|\{|alpha|beta|gamma|delta|theta|lambda|mu|phi|omega)"
    r"(?![A-Za-z])"
)
_WORDS = frozenset({"or", "and", "cm", "m", "km", "mm", "kg", "g", "s", "h", "in", "ft"})
_NO_VALUE_BEFORE_GROUP = re.compile(
    r"(?:[_^]|\\(?:[dtc]?frac|binom|text\w*|mathrm|mbox|operatorname|mathbf|mathit|begin|end|sqrt))\s*$"
)
_VALUE_COMMANDS = frozenset({"pi", "infty"})
_WINDOW = 32  # characters looked back for the command before a group or a number: keeps the scan linear
_SQRT_DIGITS = re.compile(r"(?:\\sqrt|(?<![A-Za-z\\])sqrt)\s*\d{2}")


def _openers(text: str) -> dict[int, int]:
    """For each closing ``}`` ``)`` ``]``, the index of the bracket it closes (unmatched ones are left out)."""
    stacks: dict[str, list[int]] = {"{": [], "(": [], "[": []}
    pairs = {"}": "{", ")": "(", "]": "["}
    found = {}
    for i, ch in enumerate(text):
        if ch in stacks and not (i and text[i - 1] == "\\"):
            stacks[ch].append(i)
        elif ch in pairs and not (i and text[i - 1] == "\\") and stacks[pairs[ch]]:
            found[i] = stacks[pairs[ch]].pop()
    return found


def _ends_value(text: str, j: int, openers: dict[int, int], wide: bool) -> bool:
    """Whether a value (something a product could take) ends at index ``j``."""
    ch = text[j]
    if ch.isdigit():
        k = j
        while k > 0 and (text[k - 1].isdigit() or text[k - 1] == "."):
            k -= 1
        before = text[max(0, k - _WINDOW) : k]
        if before.endswith(("_", "^")):
            return False
        command = re.search(r"\\([dtc]?frac|sqrt|binom)\s*$", before)
        if command is None:
            return True
        # \frac56 and \sqrt2 are whole values once their digit arguments are there; \frac5 is not yet
        return j - k + 1 >= (1 if command.group(1) == "sqrt" else 2)
    if ch == "}":
        o = openers.get(j)
        if o is None:
            return False
        before = text[max(0, o - _WINDOW) : o]
        if _NO_VALUE_BEFORE_GROUP.search(before):
            return bool(re.search(r"\\sqrt\s*$", before))  # \sqrt{4} is a value; \frac{1} and x^{2} are not
        return bool(re.search(r"[0-9A-Za-z]", text[o:j]))  # 14{,}916 is one number
    if ch == ")":
        return True
    if ch == "]":
        o = openers.get(j)
        return o is not None and not re.search(r"\\sqrt\s*$", text[max(0, o - _WINDOW) : o])
    if ch == "!":
        return not (j and text[j - 1] == "\\")
    if ch.isalpha():
        window = text[max(0, j + 1 - _WINDOW) : j + 1]
        m = re.search(r"(\\?)([A-Za-z]+)$", window)
        backslash, word = m.group(1), m.group(2)
        if window[: m.start()].endswith(("_", "^")):
            return False
        if backslash:
            return word in _VALUE_COMMANDS or (wide and word not in ("cdot", "times", "div", "le", "ge", "ne", "in"))
        return word not in _WORDS
    return False


_PROPER_FRACTION = re.compile(r"\\[dtc]?frac(?:\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|\s*(\d)\s*(\d))")


def _proper_fraction(text: str, start: int) -> bool:
    r"""Whether a ``\frac`` at ``start`` can end a mixed number: digits over larger digits (``\frac{1}{3}``).

    Anything else after a whole number (``-33\,\frac{-2}{8}``, ``2\frac{5}{3}``, ``2\frac{x}{3}``) is two values
    or a product nobody writes that way: refused rather than multiplied.
    """
    m = _PROPER_FRACTION.match(text, start)
    if m is None:
        return False
    numerator, denominator = (int(g) for g in (m.group(1, 2) if m.group(1) is not None else m.group(3, 4)))
    return 0 < numerator < denominator


def _whole_number_ends(text: str, j: int) -> bool:
    r"""Whether a whole number written on its own ends at ``j`` (``12``; not ``\frac12``, ``x_2``, ``1.5``)."""
    if not text[j].isdigit():
        return False
    k = j
    while k > 0 and text[k - 1].isdigit():
        k -= 1
    return not (k and (text[k - 1].isalpha() or text[k - 1] in "._^"))


def refuse_side_by_side(text: str) -> None:
    r"""Raise ``Unparseable`` when two values stand side by side (see the module docstring); else return.

    >>> refuse_side_by_side(r"2\pi + 3\sqrt{2} \, x")
    >>> refuse_side_by_side(r"\frac{1}{2}\,\frac{1}{3}")
    Traceback (most recent call last):
    ...
    rewards.math.answer_tree.Unparseable: two values side by side ('\\frac{1}{2}' and '\\frac{1}{3}'): two answers, not a product
    """
    openers = _openers(text)
    for m in _GAP.finditer(text):
        start, end = m.start(), m.end()
        if start == 0 or end >= len(text):
            continue
        wide = bool(_WIDE_GAP.search(m.group()))
        starts_number = bool(_NUMBER_START.match(text, end))
        starts_fraction = bool(_FRACTION.match(text, end))
        if not (wide or starts_number or starts_fraction):
            continue
        left_end = start - 1
        if not wide and text[left_end].isdigit():
            if not starts_fraction:
                continue  # 1\,000, "2 3" and 0.33 are the number rules' (structure.normalize)
            if _whole_number_ends(text, left_end) and _proper_fraction(text, end):
                continue  # 2\frac{1}{3} is a mixed number; \frac12\,\frac13 and 1.5\frac12 are looked at below
        if not _ends_value(text, left_end, openers, wide):
            continue
        left_char = text[left_end]
        if wide:
            refused = bool(_NEW_VALUE.match(text, end)) and not _WORD_AFTER.match(text, end)
        elif left_char.isalpha():
            refused = start < end and (starts_number or starts_fraction)  # "\pi\ \frac{1}{2}": two values
        else:
            refused = starts_number or starts_fraction
        if refused:
            head = text[max(0, left_end - 11) : left_end + 1].split()
            tail = text[end : end + 12].split()
            raise Unparseable(
                f"two values side by side ({head[-1] if head else ''!r} and {tail[0] if tail else ''!r}): "
                "two answers, not a product"
            )


def unicode_roots(text: str) -> str:
    r"""``√16`` -> ``\sqrt{16}``, ``√x`` -> ``\sqrt{x}``, ``√(2x)`` -> ``\sqrt(2x)``; ``√2x`` is refused.

    Also refuses an unbraced ``\sqrt``/``sqrt`` before two or more digits (``\sqrt16``: LaTeX takes one digit).
    """
    out, i = [], 0
    while (j := text.find("\u221a", i)) != -1:
        out.append(text[i:j])
        k = j + 1
        while k < len(text) and text[k] == " ":
            k += 1
        rest = text[k:]
        if rest[:1] in ("{", "("):
            out.append("\\sqrt")
            i = k
            continue
        m = re.match(r"\d+(?:\.\d+)?|[A-Za-z]", rest)
        if m is None or re.match(r"[0-9A-Za-z(\\{.]", rest[m.end() : m.end() + 1]):
            raise Unparseable("a root sign whose operand has no clear end (write \\sqrt{...})")
        out.append("\\sqrt{" + m.group() + "}")
        i = k + m.end()
    out.append(text[i:])
    text = "".join(out)
    if _SQRT_DIGITS.search(text):
        raise Unparseable("\\sqrt before several digits without braces (\\sqrt16 is \\sqrt{1}6 in LaTeX): ambiguous")
    return text
