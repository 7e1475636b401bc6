r"""Normalization and top-level structure of an answer string, in plain bounded Python.

This layer decides the questions that make a verifier lenient or strict, so they are written
out here rather than left to a parser's defaults: which characters are allowed, what a comma
means (``1,234`` is a number, ``1,2`` and ``32, 349`` are lists), tuples vs intervals vs sets,
``x = 3`` vs equation chains, ``\pm``, "or" hedges, matrices, units and percent.
Everything is linear in the input, which is length-capped before we get here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rewards.math import intervals, spellings, tokens
from rewards.math.answer_tree import (  # re-exported: the tree's types are this module's vocabulary
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_LENGTH,
    Chain,
    Collection,
    Leaf,
    Matrix,
    TooComplex,
    Unparseable,
    collection,
    is_set,
    matching_close,
    outer_brackets,
    split_top,
)
from rewards.math.escapes import refuse_line_breaks, undouble
from rewards.math.intervals import NAME, as_interval_set, is_interval, is_interval_set, is_variable, name_key
from rewards.math.juxtaposition import unicode_roots
from rewards.math.vocabulary import MODIFIERS, SPACING, TEXT_MACROS, UNITS, WRAPPERS

__all__ = [  # what the verifier and the tests use from here
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_LENGTH",
    "Chain",
    "Collection",
    "Leaf",
    "Matrix",
    "TooComplex",
    "Unparseable",
    "as_interval_set",
    "is_interval",
    "is_interval_set",
    "matching_close",
    "normalize",
    "parse_structure",
]


# Non-ASCII characters with one unambiguous meaning. Everything else non-ASCII (fullwidth
# digits, superscripts like "4²", look-alike letters) is rejected, never guessed at.
_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u00d7": r"\times ",
    "\u22c5": r"\cdot ",
    "\u00b7": r"\cdot ",
    "\u00f7": r"\div ",  # a division sign is a computation (3 ÷ 4), never the fraction 3/4
    "\u03c0": r"\pi ",
    "\u221e": r"\infty ",
    "\u221a": r"\sqrt",  # with its operand in braces: rewards.math.juxtaposition.unicode_roots
    "\u2264": r"\le ",
    "\u2265": r"\ge ",
    "\u2260": r"\ne ",
    "\u00b0": r"^\circ",
    "\u00a0": " ",
    "\u222a": r"\cup ",
}

_HEDGE_MARKERS = re.compile(r"\\approx|\\simeq|\\sim\b|\\thickapprox|≈|~=|\.\.\.|\\ldots|\\cdots|\\dots|\?")
# every gap and look-only modifier of the vocabulary is a space once the front end has read the answer
_SPACING = re.compile(
    r"(?<!\\)(?:"
    + "|".join(
        re.escape(m) + ("(?![A-Za-z])" if m[-1].isalpha() else "")
        for m in sorted({*SPACING, *MODIFIERS} - {r"\!", r"\hspace", r"\left", r"\right"}, key=len, reverse=True)
        if m.startswith("\\")
    )
    + r"|\\hspace\*?\{[^{}]*\}|~|\\[lr]?vert(?=[|]))"
)
_FONT_CMD = re.compile(  # \mathbf{x} and the other font wrappers: the content is the math
    r"\\(?:"
    + "|".join(w[1:] for w in WRAPPERS if w[1:].isalpha() and w not in TEXT_MACROS and "box" not in w)
    + r")\s*\{"
)
_LEFT_RIGHT = re.compile(r"\\(?:left|right)(?=[\s(\[\]).|\\])\s*(\.)?")
# LaTeX commands whose argument is text: a unit may follow a number in one (``5\\text{ cm}``), and every one of
# them, plus the bold/operator-name wrappers, is unwrapped to plain text before parsing.
TEXT_COMMANDS = tuple(name[1:] for name in TEXT_MACROS)
_TEXT_CMD = re.compile(r"\\(?:" + "|".join((*TEXT_COMMANDS, "mathbf", "operatorname")) + r")\s*\{")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\degree\b")
_PLAIN_IN = re.compile(r"^(\s*(?:[A-Za-z]|\\[A-Za-z]+))\s+in\s+(?=[\[(]|\\[{(\[]|\\left|\\mathbb)")
_TRIG = re.compile(r"(?<![A-Za-z])(?:sin|cos|tan|cot|sec|csc)(?![A-Za-z])")
_DEGREE_ANGLE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:\^\s*\{?\s*\\circ\s*\}?|\\degree\b)")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_SPACE_THOUSANDS = re.compile(r"\b(\d{1,3}(?: \d{3})+)\b(?![.,]?\d)")
_OR_WORDS = re.compile(r"\s*,?\s*(?:\\text\{\s*(?:or|and)\s*\}|\b(?:or|and)\b|\\(?:lor|vee)(?![A-Za-z]))\s*")
_RELATIONS = re.compile(r"<|>|\\le|\\ge|\\leq|\\geq|\\neq|\\ne|\\lt|\\gt")


def _unwrap_command(text: str, pattern: re.Pattern) -> str:
    r"""``\text{abc}`` -> ``abc`` for every match of ``pattern`` (which ends at the open brace)."""
    while (m := pattern.search(text)) is not None:
        close = matching_close(text, m.end() - 1)
        if close < 0:
            raise Unparseable("unbalanced braces")
        text = text[: m.start()] + " " + text[m.end() : close] + " " + text[close + 1 :]
    return text


def _strip_wrappers(text: str) -> str:
    changed = True
    while changed:
        changed = False
        text = text.strip()
        for prefix, suffix in (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]")):
            if len(text) > len(prefix) + len(suffix) and text.startswith(prefix) and text.endswith(suffix):
                text, changed = text[len(prefix) : -len(suffix)], True
        m = re.match(r"^\\(?:boxed|fbox)\s*\{", text)
        if m and matching_close(text, m.end() - 1) == len(text) - 1:
            text, changed = text[m.end() : -1], True
        if text.endswith(".") and not text.endswith("..") and not re.search(r"\d\.$", text):
            text, changed = text[:-1], True
    return text


def normalize(text: str) -> str:
    """Canonical text of one answer, or Unparseable/TooComplex. Applied to candidate and reference alike."""
    if len(text) > MAX_LENGTH:
        raise TooComplex(f"answer longer than {MAX_LENGTH} characters")
    text, _ = undouble(text)  # \\frac{1}{5} (escaped twice) is \frac{1}{5} when no other reading exists
    text = spellings.row_spacing(text)  # \\[4pt] between matrix rows is a row break
    text = refuse_line_breaks(text)  # "3 \\ 4" is two lines, never 34, 3*4 or 3
    if any(ord(ch) > 127 and ch not in _UNICODE for ch in text):
        bad = next(ch for ch in text if ord(ch) > 127 and ch not in _UNICODE)
        raise Unparseable(f"character {bad!r} (U+{ord(bad):04X}) is not allowed in an answer")
    text = unicode_roots(text)  # √16 is \sqrt{16}, never \sqrt16 (= \sqrt{1}6)
    for ch, replacement in _UNICODE.items():
        text = text.replace(ch, replacement)
    if _HEDGE_MARKERS.search(text):
        raise Unparseable("approximate or open-ended answer (≈, ~, ..., ?)")
    text = _strip_wrappers(text)
    if re.search(r"\\(?:boxed|fbox)\b", text):
        raise Unparseable("a box inside an answer: the box is the answer, the rest is not")
    text = re.sub(r"(?<!\\)\\$", "", text.rstrip())  # a stray trailing backslash ("185\\")
    text = spellings.time_of_day(spellings.ordinal(text))  # 7^\text{th} is 7; 3\text{ p.m.} is 3:00 pm
    text = spellings.brace_system(text)  # \left\{\begin{array}{l} ... \end{array}\right. is a cases system
    tokens.read(text)  # closed vocabulary; \sqrt{4}\quad 3 and {9}{3} are two answers, never a product
    text = spellings.collapse_braces(text)  # \frac{{1}}{{3}} is \frac{1}{3}: braces are transparent
    text = text.replace(r"\dfrac", r"\frac").replace(r"\tfrac", r"\frac").replace(r"\%", "%").replace(r"\$", "$")
    text = text.replace(r"\lbrace", r"\{").replace(r"\rbrace", r"\}").replace(r"\infin", r"\infty")
    text = text.replace(r"\varnothing", r"\emptyset")
    text = re.sub(r"\\\{\s*\\\}", r"\\emptyset ", text)  # \{\}: the empty set, not a set with an empty element
    text = _PLAIN_IN.sub(r"\1 \\in ", text)  # x in [3, 8] (plain text) is x \in [3, 8]
    text = re.sub(r"\\leq(?:slant|q)(?![A-Za-z])", r"\\le ", text)  # \leqslant is \le (never a product q*...)
    text = re.sub(r"\\geq(?:slant|q)(?![A-Za-z])", r"\\ge ", text)
    text = re.sub(r"(?<=\d),\\!\s*(?=\d{3}(?!\d))", ",", text)  # 11,\! 111,\! 100: LaTeX thousands separators
    text = text.replace("{,}", ",").replace(r"\!", "").replace(r"\cfrac", r"\frac")
    text = re.sub(r"(?<=\d)\\,(?=\d{3}\b)", " ", text)  # 1\,000 thin-space thousands
    if "\\" in text or "~" in text:
        text = _unwrap_command(_SPACING.sub(" ", text), _FONT_CMD)
    for plain, tex in ((">=", r"\ge "), ("<=", r"\le "), ("!=", r"\ne "), (r"\lt", "<"), (r"\gt", ">")):
        text = text.replace(plain, tex)
    text = re.sub(r"\s*\b(?:percent|percentage|pct)\b\.?$", "%", text)
    text = _LEFT_RIGHT.sub("", text)
    if _TRIG.search(text):  # \sin 30^\circ: an angle in degrees inside an expression is a number of radians
        text = _DEGREE_ANGLE.sub(r"(\\frac{\1 \\pi}{180})", text)
    text = _DEGREES.sub(" degrees", text)
    if _HEDGE_MARKERS.search(text):
        raise Unparseable("approximate or open-ended answer (≈, ~, ..., ?)")
    text = " ".join(text.split())
    text = re.sub(r"^([-+]?)\s*\$\s*(?=[\d.])", r"\1", text)  # currency sign: $18, -$5
    if text.count("$") == 1:
        text = re.sub(r"(?<=\d)\s*\$$", "", text)  # a trailing currency sign: 1,000.99$
    if _SPACE_THOUSANDS.fullmatch(text.lstrip("-+")):
        text = text.replace(" ", "")
    if not text:
        raise Unparseable("empty answer")
    # "2 3" is neither 23 nor 6; a sub/superscript digit (\log_2 8, x^2 3) is not a number of its own
    if re.search(r"(?<![_^\d])\d+\s+\d", text) and not re.fullmatch(r"[-+]?\d+\s+\d+\s*/\s*\d+", text):
        raise Unparseable("digits separated by a space: neither one number nor a list")
    plain_braces = text.replace(r"\{", "").replace(r"\}", "")
    if plain_braces.count("{") != plain_braces.count("}"):
        raise Unparseable("unbalanced braces")
    depth = max_depth = 0
    for ch in text:
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        max_depth = max(max_depth, depth)
    if max_depth > MAX_DEPTH:
        raise TooComplex(f"brackets nested deeper than {MAX_DEPTH}")
    return text


# ---- structure ---------------------------------------------------------------------------


_MATRIX = re.compile(r"^\\begin\{([pbB]?matrix|array)\}(?:\{[lcr|]*\})?(.*)\\end\{\1\}$", re.S)


VALUE, REFERENCE, EQUATION = "value", "reference", "equation"
_LIST_SEPARATOR = re.compile("[,;]")
_EQUALS = re.compile(r"(?<![<>!\\])=(?!=)")
_MEMBERSHIP = re.compile(r"\\in(?![A-Za-z])")
_UNION = re.compile(r"\\cup|\bU\b")
_PLUS_MINUS = re.compile(r"\\pm(?![A-Za-z])|\\mp(?![A-Za-z])|\+-")
# A label names an answer without being math: |AB|, \frac{NO}{BO}, V_1:V_2, (p, q), m\angle ABC.
_LABEL_COMMANDS = re.compile(
    r"\\(?:frac|dfrac|tfrac|angle|measuredangle|overline|triangle|widehat|overarc|arc|vert|lvert|rvert|mathrm|text"
    r"|operatorname|left|right)\b"
)
_SUBSCRIPT = re.compile(r"_\{?[A-Za-z0-9]+\}?")
_ABSOLUTE_VALUE = re.compile(r"\|\s*[a-z]\s*\|")  # the modulus of one variable (|z|, |x|): not a label


def _is_label(lhs: str, rhs: str) -> bool:
    """``lhs`` only names the value on ``rhs`` (letters, subscripts, bars, a fraction of names; no digits or
    operators), and ``rhs`` is a constant (no variables): ``|AB| = 1``, ``(p, q) = (3, 2)``."""
    bare = _SUBSCRIPT.sub("", _LABEL_COMMANDS.sub("", lhs))
    if _ABSOLUTE_VALUE.fullmatch(bare.strip()):
        return False  # |z| = 2 is a condition on z (a circle), not a name for 2; |AB| = 2 is a length
    if not re.fullmatch(r"[A-Za-z|{}():,/\s']*[A-Za-z][A-Za-z|{}():,/\s']*", bare):
        return False
    return re.search(r"[A-Za-z]", _PLAIN_CONSTANTS.sub("", re.sub(r"\\[A-Za-z]+", "", rhs))) is None


# plain spellings of functions and constants (``sqrt(7)``, ``4*pi``): not variables on the right of a label
_PLAIN_CONSTANTS = re.compile(r"(?<![A-Za-z])(?:sqrt|cbrt|sin|cos|tan|log|ln|exp|pi)(?![A-Za-z])")


def parse_structure(text: str, equations: str = VALUE):
    r"""The top-level shape of a normalized answer: Leaf, Collection, Chain or Matrix.

    ``equations`` says what ``=`` means. VALUE (a candidate for a value): ``x = 3`` is the value 3
    and ``2 + 1 = 3`` is a chain whose parts must all match. REFERENCE: the same, except that an
    equation whose left side is not a bare name (``x^2 + y^2 = 1``) stays one leaf, compared as an
    equation. EQUATION (a candidate for such a reference): every two-sided equation stays a leaf.
    Each reader below takes one shape or passes (None); the first that takes the text decides.

    >>> parse_structure(r"x = \frac{1}{2}, x = 1 \pm 2", REFERENCE).items[1:]
    (Leaf(text='1 + 2', equation=False, name='x'), Leaf(text='1 - 2', equation=False, name='x'))
    """
    for read in _READERS:
        node = read(text, equations)
        if node is not None:
            return node
    return _leaf(text)


def _matrix(text: str, equations: str):
    if m := _MATRIX.match(text):
        rows = [r for r in (row.strip() for row in m.group(2).split(r"\\")) if r]
        cells = tuple(tuple(Leaf(normalize(cell)) for cell in row.split("&")) for row in rows)
        if sum(len(r) for r in cells) > MAX_ITEMS:
            raise TooComplex("matrix too large")
        return Matrix(cells)
    return None


_CASES = re.compile(r"^\\begin\{cases\}(.*)\\end\{cases\}$", re.S)


def _cases(text: str, equations: str):
    r"""``\begin{cases} x = 1 \\ y = 2 \end{cases}``: a system's lines are its list (``x = 1, y = 2``). A line with
    ``&`` is a piecewise definition (a value and its condition), which no list means: refused, never flattened."""
    if not (m := _CASES.match(text)):
        return None
    rows = [row.strip().rstrip(",;.").strip() for row in m.group(1).split(r"\\")]
    rows = [row for row in rows if row]
    if not rows or any("&" in row or r"\begin" in row for row in rows):
        raise Unparseable("a piecewise definition (cases with '&'): not read as a list of answers")
    if len(rows) == 1:
        return parse_structure(rows[0], equations)
    names = [split_top(row, _EQUALS) for row in rows]
    if any(len(sides) != 2 or not _is_name(sides[0]) for sides in names) or len({n[0] for n in names}) < len(names):
        # x + y = 3 \\ x - y = 1 is unsolved, and x = 1 \\ x = 2 has no solution: neither is a list of values
        raise Unparseable("a system that is not one value per variable (x = 1 \\\\ y = 2): not read")
    return parse_structure(", ".join(rows), equations)


def _interval_answer(text: str, equations: str):
    r"""``x < -1 \text{ or } x > 3``, ``\{x \mid x > 3\}``, ``\mathbb{R}``: a set of reals (``rewards.math.intervals``)."""
    return intervals.connected_inequalities(text) or intervals.set_builder(text) or intervals.reals(text)


def _hedge_list(text: str, equations: str):
    """``3 or 4``, ``19, 46, and 82``: a set, so it never equals one value."""
    hedge = split_top(text, _OR_WORDS)
    if len(hedge) > 1:
        nodes = [parse_structure(p, equations) for p in hedge]
        if len(split_top(text, _AND_WORD)) > 1 and any(_is_condition(n) for n in nodes):
            raise Unparseable(
                "'and' between conditions on a variable is their intersection, not a list: write the one interval"
            )
        return collection(nodes, ordered=False, brackets="set", name=_union_name(nodes))
    return None


_AND_WORD = re.compile(r"\\text\{\s*and\s*\}|\band\b")


def _is_condition(node) -> bool:
    r"""A named interval set (``x \in [1, 2]``) or an inequality left as a leaf (``x > 0``): a condition on a variable."""
    if is_interval_set(node):
        return bool(node.name) and "," not in node.name  # (x, y) = (5, 8) labels a point, not an interval
    return isinstance(node, Leaf) and bool(_RELATIONS.search(node.text))


def _union_name(nodes: list) -> str:
    r"""The one variable of a union of interval sets (``x \in [1,2] \text{ or } x \in [3,4]``), "" when unnamed.

    Two variables (``x \in [1,2] \text{ or } y \in [3,4]``) are refused: no set of one variable is meant.
    """
    names = {n.name for n in nodes if _is_condition(n) and not isinstance(n, Leaf)}
    if len(names) > 1:
        raise Unparseable(f"one answer about several variables ({', '.join(sorted(names))}): which set is meant?")
    return names.pop() if names and all(is_interval_set(n) for n in nodes) else ""


def _membership(text: str, equations: str):
    r"""``x \in [1, 2]``: the set, named ``x`` when it is an interval set."""
    if _RELATIONS.search(text) or len(split_top(text, _MEMBERSHIP)) > 2:
        return None  # x \in [0,1], y \in [2,3]: a list (or union) of memberships, read by the readers below
    head, sep, tail = _partition(text)
    if sep and _LABELS.fullmatch(head):  # (x, y) \in \{(1, 2), (3, 4)\}: each point labeled
        node = parse_structure(tail, equations)
        labeled = _named(node, name_key(head)) if is_set(node) else node
        return labeled if labeled is not node else None
    if not sep or not is_variable(head):
        return None  # \pi \in [3, 4] is a true statement, not an answer
    node = parse_structure(tail, equations)
    if is_interval_set(node) or (is_set(node) and all(isinstance(i, Leaf) and not i.name for i in node.items)):
        return replace(node, name=name_key(head))  # x \in [1, 2]; t \in \{-3, 3\}
    return node


_LABELS = re.compile(r"\(\s*[A-Za-z]\s*(?:,\s*[A-Za-z]\s*)+\)")


def _partition(text: str) -> tuple[str, str, str]:
    m = _MEMBERSHIP.search(text)
    if m is None:
        return text, "", ""
    return text[: m.start()].strip(), m.group(), text[m.end() :].strip()


def _union(text: str, equations: str):
    r"""``[1, 2] \cup (3, 4)``; ``\{1\} \cup \{2, 3\}`` is the set ``\{1, 2, 3\}`` (a union of written sets is one)."""
    union = split_top(text, _UNION)
    if len(union) > 1:
        nodes = [parse_structure(p, equations) for p in union]
        if any(is_set(n) and not n.braced and any(is_set(i) and i.braced for i in n.items) for n in nodes):
            raise Unparseable("a union beside a list of sets: which sets are joined is not written")
        braced = all(is_set(n) and n.braced for n in nodes)
        members = [i for n in nodes for i in (n.items if is_set(n) and n.braced else (n,))]
        return collection(members, ordered=False, brackets="set", name=_union_name(nodes), braced=braced)
    return None


def _named_values(group: str) -> tuple[list[str], list[str]] | None:
    """``p=5, q=2`` -> (["p", "q"], ["5", "2"]) when every part is ``name = value``; else None."""
    names, values = [], []
    for part in split_top(group, re.compile(",")):
        sides = split_top(part, _EQUALS)
        if len(sides) != 2 or not NAME.match(sides[0]) or not sides[1]:
            return None
        names.append(name_key(sides[0]))
        values.append(sides[1])
    return names, values


def _solution_groups(text: str, equations: str):
    """``p=5,q=2;p=7,q=2``: solutions as tuples in the order of their names, the set of them order-free."""
    groups = split_top(text, re.compile(";"))
    if len(groups) < 2:
        return None
    read = [_named_values(group) for group in groups]
    if any(r is None for r in read) or len({tuple(r[0]) for r in read}) != 1 or len(read[0][0]) < 2:
        return None
    name = ",".join(read[0][0])
    tuples = [
        collection([parse_structure(v, VALUE) for v in values], ordered=True, brackets="()", name=name)
        for _, values in read
    ]
    return collection(tuples, ordered=False, brackets="set")


def _assignments(text: str, equations: str):
    """``x = -5, p = 14/3``: several named values, order-free."""
    assignments = split_top(text, _LIST_SEPARATOR)
    if len(assignments) > 1 and sum("=" in part for part in assignments) >= 2:
        if any(not p for p in assignments):
            raise Unparseable("empty element")
        return collection([parse_structure(p, equations) for p in assignments], ordered=False, brackets="set")
    return None


def _equation(text: str, equations: str):
    """``x = 3`` (a named value), ``2 + 1 = 3`` (a chain), ``x^2 + y^2 = 1`` (an equation leaf)."""
    if "=" not in text or _RELATIONS.search(text):
        return None
    parts = split_top(text, _EQUALS)
    if len(parts) < 2:
        return None
    if equations == EQUATION and len(parts) == 2 and not _is_label(parts[0], parts[1]):
        if not _imaginary_roots(parts[0], parts[1]):
            return Leaf("=".join(parts), equation=True)
    if len(parts) == 2 and _is_name(parts[1]) and not _is_name(parts[0]) and _is_constant(parts[0]):
        parts = parts[::-1]  # 2 = y is y = 2
    names = []
    while len(parts) > 1 and (_is_name(parts[0]) or (len(parts) == 2 and _is_label(parts[0], parts[1]))):
        names.append(name_key(parts[0]))
        parts = parts[1:]
    if equations == REFERENCE and len(parts) == 2:
        return Leaf("=".join(parts), equation=True)
    if any(not p for p in parts):
        raise Unparseable("empty side of an equation")
    nodes = [parse_structure(p, equations) for p in parts]
    if len(nodes) > 1:  # 2 + 1 = 3; 1 = 1 (no variable: never the answer to x = 1); x = 3 = 4
        return Chain(tuple(nodes), names[-1] if names else "")
    return _named(nodes[0], names[-1]) if names else nodes[0]


def _imaginary_roots(lhs: str, rhs: str) -> bool:
    r"""``x = \pm 3i``: two values of ``x`` (``i`` the imaginary unit), not an equation to compare as one."""
    if not (_is_name(lhs) and lhs != "i" and _PLUS_MINUS.search(rhs)):
        return False
    return _is_constant(re.sub(r"(?<![A-Za-z\\])i(?![A-Za-z])", "", rhs))


def _is_name(text: str) -> bool:
    r"""A name on the left of ``=``: a variable, or ``e`` (an eccentricity); never a constant such as ``\pi``."""
    return bool(NAME.match(text)) and (is_variable(text) or text == "e")


def _is_constant(text: str) -> bool:
    r"""No letters outside commands (``2``, ``\frac{1}{2}``, ``\sqrt{3}``): a value, not an expression in a variable."""
    return re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text)) is None


def _named(node, name: str):
    """``x = 3`` names the value 3; ``x = 1 \\pm 2`` names both values."""
    if isinstance(node, Leaf) and not node.name:
        return Leaf(node.text, node.equation, name)
    if isinstance(node, Collection) and node.ordered and node.brackets == "()" and not node.name:
        if "," not in name:  # D = (0, 1): one name for the whole point, as before labels were paired
            return node
        labels = name.strip("()").split(",")  # (x, y) = (1, 2): x is 1 and y is 2, so (y, x) = (1, 2) is not it
        if len(labels) == len(node.items) and all(labels):
            return Collection(node.items, True, "()", ",".join(labels))
        raise Unparseable(f"the labels {name!r} do not pair with the values one to one")
    if is_set(node) and node.brackets == "set" and all(isinstance(i, Leaf) and not i.name for i in node.items):
        named = [Leaf(i.text, i.equation, name) for i in node.items]
        return collection(named, ordered=False, brackets="set", braced=node.braced)
    if is_set(node) and "," in name and node.items and all(_is_unlabeled_point(i) for i in node.items):
        # (x, y) = (1, 2), (3, 4): the labels name each solution, or (y, x) = (1, 2), (3, 4) would pay for it
        return collection([_named(i, name) for i in node.items], ordered=False, brackets="set")
    return node


def _is_unlabeled_point(node) -> bool:
    return isinstance(node, Collection) and node.ordered and node.brackets == "()" and not node.name


_BUILDER_BAR = re.compile(r"\\mid(?![A-Za-z])|(?<!\\)\||:")


def _bracketed(text: str, equations: str):
    """``(1, 2)`` tuple, ``[0, 9)`` interval, ``\\{1, 2\\}`` set, ``(0;-2;6)``; plain parentheses unwrapped."""
    if not (outer := outer_brackets(text)):
        return None
    opener, inner, closer = outer
    if opener == r"\{" and len(split_top(inner, _BUILDER_BAR)) > 1:  # the interval reader did not take it
        raise Unparseable("a set-builder set that is not an interval of real numbers: not read")
    items = split_top(inner, re.compile(","))
    if len(items) == 1 and ";" in inner:
        items = split_top(inner, re.compile(";"))  # (0;-2;6)
    if len(items) > 1 or opener == r"\{" or (opener == "{" and len(items) > 1):
        if any(not i for i in items):
            raise Unparseable("empty element")
        if opener in (r"\{", "{") and any(i.lstrip().startswith(r"\{") for i in items):
            raise Unparseable("a set of sets: its elements are sets, which a flat list of values cannot say")
        nodes = [parse_structure(i, VALUE) for i in items]
        if opener in (r"\{", "{"):
            return collection(nodes, ordered=False, brackets="set", braced=True)
        return collection(nodes, ordered=True, brackets=opener + closer)
    if (opener, closer) in (("(", ")"), ("{", "}"), ("[", "]")) and _MATRIX.match(inner.strip()):
        return parse_structure(inner.strip(), equations)  # \left[\begin{array}...\end{array}\right]
    if (opener, closer) in (("(", ")"), ("{", "}")):
        return parse_structure(inner.strip(), equations)
    return None


def _bare_list(text: str, equations: str):
    """``-2, 1`` and ``-12;-11;-10``: an order-free list (``1,234`` is a number)."""
    if ("," in text and not _THOUSANDS.match(text)) or ";" in text:
        items = split_top(text, _LIST_SEPARATOR)
        if len(items) > 1:
            if any(not i for i in items):
                raise Unparseable("empty element")
            nodes = [parse_structure(i, equations) for i in items]
            names = [n.name for n in nodes if _is_condition(n) and not isinstance(n, Leaf)]
            if len(names) != len(set(names)):  # x \in [1,2], x \in [3,4]: a system or a union?
                raise Unparseable("a comma between two conditions on one variable: a system, or a union?")
            return collection(nodes, ordered=False, brackets="set")
    return None


def _leaf(text: str):
    r"""One value; one ``\pm`` (or ``\mp``) anywhere in it makes two: ``\frac{-1 \pm \sqrt{13}}{4}``.

    The sign is replaced where it stands (``2 \pm 1 + 3`` is 6 and 4), so ``\pm`` reads as the two
    expressions it abbreviates; two of them would need a pairing nobody wrote, so they are refused.
    """
    signs = _PLUS_MINUS.findall(text)
    if not signs:
        return Leaf(text)
    if len(signs) > 1:
        raise Unparseable(r"more than one \pm: which signs go together is not written")
    first, second = ("-", "+") if signs[0] == r"\mp" else ("+", "-")
    return collection(
        [Leaf(" ".join(_PLUS_MINUS.sub(sign, text).split())) for sign in (first, second)],
        ordered=False,
        brackets="set",
    )


_READERS = (
    _cases,
    _matrix,
    _interval_answer,
    _hedge_list,
    _membership,
    _union,
    _solution_groups,
    _assignments,
    _equation,
    _bracketed,
    _bare_list,
)

# ---- units, currency, percent ------------------------------------------------------------

# Only the spellings in ``rewards.math.vocabulary.UNITS`` are read as a unit, case-sensitively (``Mg`` is not
# ``mg``; ``meters`` and ``m`` are one unit); anything else after a number ("12 is incorrect", "3 unsure",
# "5 apples") stays in the answer, which then does not parse.
_UNIT_TOKEN = re.compile(r"(?P<word>[A-Za-z]+)\.?(?:\^\{?(?P<power>\d)\}?)?|(?P<per>/)")
_QUANTITY = re.compile(r"^(?P<core>.*?[\d}.])\s+(?P<unit>(?:[A-Za-z]+\.?(?:\^\{?\d\}?)?(?:\s*/\s*|\s+|$))+)$")


@dataclass(frozen=True)
class Quantity:
    core: str
    unit: str  # normalized unit text, "" when none
    percent: bool


def split_quantity(text: str) -> Quantity:
    """Separate a leaf into its mathematical core and a trailing unit / percent sign / leading currency."""
    text = text.strip()
    percent = text.endswith("%")
    if percent:
        text = text[:-1].rstrip()
    text = re.sub(r"^\$\s*", "", text)
    text = re.sub(r"^(-?)\s*\$\s*", r"\1", text)
    unit = ""
    # a unit written in \text{} may be one letter (5\text{ m}); a bare trailing letter is a variable
    explicit = re.match(
        r"^(?P<core>.*?[\d}.])\s*\\(?:" + "|".join(TEXT_COMMANDS) + r")\s*\{(?P<unit>[A-Za-z ./^\d]+)\}"
        r"(?P<power>\^\{?\d\}?)?$",
        text,
    )
    text = _unwrap_command(text, _TEXT_CMD).strip()
    m = explicit or _QUANTITY.match(text)
    if m:
        unit_text = m.group("unit") + ((explicit.group("power") or "") if explicit else "")
        tokens = list(_UNIT_TOKEN.finditer(unit_text))
        written = [t.group("word") for t in tokens if t.group("word")]
        if written and all(w in UNITS for w in written) and (explicit or len(written) > 1 or len(written[0]) > 1):
            text = _unwrap_command(m.group("core"), _TEXT_CMD).strip()
            unit = " ".join(
                "/" if t.group("per") else UNITS[t.group("word")] + ("^" + t.group("power") if t.group("power") else "")
                for t in tokens
            )
    if not percent and text.endswith("%"):
        percent, text = True, text[:-1].rstrip()
    return Quantity(" ".join(text.split()), unit, percent)


# Compared as text, exactly: words (``Monday``, ``\\text{(C)}``), times (``12:00``), and numbers in a
# base (``204_5``: its value is not 204, so it must never meet the numeric path).
# A time of day whose half is written is ``3:00 pm`` by now (``rewards.math.spellings.time_of_day``).
_TEXT_ANSWER = re.compile(r"^\(?[A-Za-z][A-Za-z ']*\)?$|^\d{1,2}:\d{2}(?: [ap]m)?$|^[0-9A-Za-z]+_\d+$")


# ``xy``, ``y x``, ``zyx``: two to four different bare lowercase letters, one of them x or z and none a vowel or
# d (so ``yes``, ``no``, ``cat``, ``sky`` and ``dx`` stay what they were): a product of variables, compared as math
# (``yx`` is ``xy``). A word is never read so: among such letters x and z make no English word but "lynx", so no
# anagram of a word answer (``act`` for ``cat``, a scrambled word copied from a question) is paid.
_VARIABLE_PRODUCT = re.compile(r"(?:[bcfghj-np-tv-z] ?){2,4}")


def _variable_product(text: str) -> bool:
    letters = text.replace(" ", "")
    return (
        bool(_VARIABLE_PRODUCT.fullmatch(text.strip()))
        and len(set(letters)) == len(letters)
        and bool({"x", "z"} & set(letters))
        and letters != "lynx"
    )


def text_answer(text: str) -> str | None:
    """Lower-cased words when the leaf is a textual answer (``\\text{(C)}``, ``Monday``), else None (``xy`` is a
    product of variables, not a word: ``_VARIABLE_PRODUCT``; in ``\\text{xy}`` it is a word)."""
    if _variable_product(text):
        return None
    plain = _unwrap_command(text, _TEXT_CMD).strip().replace("{", "").replace("}", "")
    if _TEXT_ANSWER.match(plain) and not NAME.match(plain.strip("()")) or re.fullmatch(r"\(?[A-Z]\)", plain):
        return " ".join(plain.strip("()").lower().split())
    return None


def plain_words(text: str) -> str:
    """A candidate leaf as lower-cased words without wrappers or parentheses, to compare with ``text_answer``."""
    plain = _unwrap_command(text, _TEXT_CMD).replace("{", "").replace("}", "")
    return " ".join(plain.strip().strip("()").lower().split())
