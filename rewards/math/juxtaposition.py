r"""A root sign takes its whole operand: ``√16`` is ``\sqrt{16}``, never ``\sqrt16`` (``\sqrt{1}6`` in LaTeX).

Two values side by side (``{9}{3}``, ``\sqrt{4}\quad 3``) are decided on tokens by ``rewards.math.tokens``, once
for every wrapper; what is left here is the one rewrite that must happen before tokens exist: Unicode ``√``
becomes ``\sqrt`` around its whole operand, and an operand with no clear end (``√2x``) is refused. An
unbraced ``\sqrt`` or ``sqrt`` before two or more digits is refused for the same reason. Linear in the input.
"""

from __future__ import annotations

import re

from rewards.math.answer_tree import Unparseable

_SQRT_DIGITS = re.compile(r"(?:\\sqrt|(?<![A-Za-z\\])sqrt)\s*\d{2}")


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
