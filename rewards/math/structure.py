r"""Normalization and top-level structure of an answer string, in plain bounded Python.

This layer decides the questions that make a verifier lenient or strict, so they are written
out here rather than left to a parser's defaults: which characters are allowed, what a comma
means (``1,234`` is a number, ``1,2`` and ``32, 349`` are lists), tuples vs intervals vs sets,
``x = 3`` vs equation chains, ``\pm``, "or" hedges, matrices, units and percent.
Everything is linear in the input, which is length-capped before we get here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LENGTH = 1000  # characters, after the extractor has isolated the answer
MAX_DEPTH = 6  # bracket nesting
MAX_ITEMS = 64  # elements in a tuple/set/matrix


class Unparseable(ValueError):
    pass


class TooComplex(ValueError):
    pass


# Non-ASCII characters with one unambiguous meaning. Everything else non-ASCII (fullwidth
# digits, superscripts like "4²", look-alike letters) is rejected, never guessed at.
_UNICODE = {
    "\u2212": "-",  # minus sign
    "\u00d7": r"\times ",
    "\u22c5": r"\cdot ",
    "\u00b7": r"\cdot ",
    "\u00f7": "/",
    "\u03c0": r"\pi ",
    "\u221e": r"\infty ",
    "\u221a": r"\sqrt",
    "\u2264": r"\le ",
    "\u2265": r"\ge ",
    "\u2260": r"\ne ",
    "\u00b0": r"^\circ",
    "\u00a0": " ",
    "\u222a": r"\cup ",
}

_HEDGE_MARKERS = re.compile(r"\\approx|\\simeq|\\sim\b|\\thickapprox|≈|~=|\.\.\.|\\ldots|\\cdots|\\dots|\?")
_SPACING = re.compile(r"(?<!\\)\\[,;: ]|\\q?quad\b|\\displaystyle|\\[lr]?vert(?=[|])|\\(?:big|Big|bigg|Bigg)[lr]?\b")
_LEFT_RIGHT = re.compile(r"\\(?:left|right)(?=[\s(\[\]).|\\])\s*(\.)?")
# LaTeX commands whose argument is text: a unit may follow a number in one (``5\\text{ cm}``), and every one of
# them, plus the bold/operator-name wrappers, is unwrapped to plain text before parsing.
TEXT_COMMANDS = ("text", "textbf", "textit", "textrm", "textnormal", "mbox", "mathrm")
_TEXT_CMD = re.compile(r"\\(?:" + "|".join((*TEXT_COMMANDS, "mathbf", "operatorname")) + r")\s*\{")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\degree\b")
_NAME = re.compile(r"^(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?(?:\^\{?-1\}?(?=\())?(?:\([A-Za-z]\))?$")
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_SPACE_THOUSANDS = re.compile(r"\b(\d{1,3}(?: \d{3})+)\b(?![.,]?\d)")
_OR_WORDS = re.compile(r"\s*,?\s*(?:\\text\{\s*(?:or|and)\s*\}|\b(?:or|and)\b)\s*")
_RELATIONS = re.compile(r"<|>|\\le|\\ge|\\leq|\\geq|\\neq|\\ne|\\lt|\\gt")
_OPEN = {"(": ")", "[": "]", r"\{": r"\}", "{": "}", r"\langle": r"\rangle"}
_CLOSE = {")", "]", r"\}", "}", r"\rangle"}


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


def matching_close(text: str, open_index: int, pair: str = "{}") -> int:
    """Index of the bracket closing the one at ``open_index`` (``pair`` is open + close), or -1.

    >>> matching_close(r"\\text{a{b}c} d", 5), matching_close("f(x(y)", 1, "()")
    (11, -1)
    """
    depth, step = 0, {pair[0]: 1, pair[1]: -1}
    for i in range(open_index, len(text)):
        depth += step.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def normalize(text: str) -> str:
    """Canonical text of one answer, or Unparseable/TooComplex. Applied to candidate and reference alike."""
    if len(text) > MAX_LENGTH:
        raise TooComplex(f"answer longer than {MAX_LENGTH} characters")
    if any(ord(ch) > 127 and ch not in _UNICODE for ch in text):
        bad = next(ch for ch in text if ord(ch) > 127 and ch not in _UNICODE)
        raise Unparseable(f"character {bad!r} (U+{ord(bad):04X}) is not allowed in an answer")
    for ch, replacement in _UNICODE.items():
        text = text.replace(ch, replacement)
    if _HEDGE_MARKERS.search(text):
        raise Unparseable("approximate or open-ended answer (≈, ~, ..., ?)")
    text = _strip_wrappers(text)
    if re.search(r"\\(?:boxed|fbox)\b", text):
        raise Unparseable("a box inside an answer: the box is the answer, the rest is not")
    text = text.replace(r"\dfrac", r"\frac").replace(r"\tfrac", r"\frac").replace(r"\%", "%").replace(r"\$", "$")
    text = text.replace(r"\lbrace", r"\{").replace(r"\rbrace", r"\}").replace(r"\infin", r"\infty")
    text = text.replace(r"\varnothing", r"\emptyset")
    text = re.sub(r"(?<=\d),\\!\s*(?=\d{3}(?!\d))", ",", text)  # 11,\! 111,\! 100: LaTeX thousands separators
    text = text.replace("{,}", ",").replace(r"\!", "").replace(r"\cfrac", r"\frac")
    text = re.sub(r"(?<!\\)\\$", "", text.rstrip())  # a stray trailing backslash ("185\\")
    text = re.sub(r"(?<=\d)\\,(?=\d{3}\b)", " ", text)  # 1\,000 thin-space thousands
    text = _SPACING.sub(" ", text)
    for plain, tex in ((">=", r"\ge "), ("<=", r"\le "), ("!=", r"\ne "), (r"\lt", "<"), (r"\gt", ">")):
        text = text.replace(plain, tex)
    text = re.sub(r"\s*\b(?:percent|percentage|pct)\b\.?$", "%", text)
    text = _LEFT_RIGHT.sub("", text)
    text = _DEGREES.sub(" degrees", text)
    if _HEDGE_MARKERS.search(text):
        raise Unparseable("approximate or open-ended answer (≈, ~, ..., ?)")
    text = " ".join(text.split())
    text = re.sub(r"^([-+]?)\s*\$\s*(?=[\d.])", r"\1", text)  # currency sign: $18, -$5
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


@dataclass(frozen=True)
class Leaf:
    text: str
    equation: bool = False  # a two-sided equation compared as an equation (x^2 + y^2 = 1)
    name: str = ""  # what the answer was called (``y`` in ``y = 2x + 1``): must match when both sides name it


@dataclass(frozen=True)
class Collection:
    items: tuple
    ordered: bool
    brackets: str  # "()" "[)" ... for ordered; "set" for sets, bare lists, "or" lists, \pm and unions


@dataclass(frozen=True)
class Chain:
    """``2 + 1 = 3``: every part must equal the reference."""

    parts: tuple


@dataclass(frozen=True)
class Matrix:
    rows: tuple


def _tokens(text: str):
    """(index, token) for bracket-aware scanning; ``\\{`` and ``\\langle`` count as one token."""
    i = 0
    while i < len(text):
        for multi in (r"\{", r"\}", r"\langle", r"\rangle"):
            if text.startswith(multi, i):
                yield i, multi
                i += len(multi)
                break
        else:
            yield i, text[i]
            i += 1


def _split_top(text: str, separator: re.Pattern) -> list[str]:
    """Split at matches of ``separator`` that sit outside every bracket and brace."""
    depth, cuts = 0, []
    depths = [0] * (len(text) + 1)
    for i, tok in _tokens(text):
        if tok in _OPEN or tok == "{":
            depth += 1
        elif tok in _CLOSE or tok == "}":
            depth -= 1
        for j in range(i, i + len(tok)):
            depths[j] = depth if not (tok in _OPEN or tok == "{") else depth - 1
    for m in separator.finditer(text):
        if depths[m.start()] == 0 and m.end() > m.start():
            cuts.append((m.start(), m.end()))
    parts, last = [], 0
    for start, end in cuts:
        parts.append(text[last:start])
        last = end
    parts.append(text[last:])
    return [p.strip() for p in parts]


def _outer_brackets(text: str) -> tuple[str, str, str] | None:
    """(open, inner, close) when one bracket pair encloses the whole text (``[0, 9)`` counts)."""
    tokens = list(_tokens(text))
    if not tokens or tokens[0][1] not in _OPEN:
        return None
    depth = 0
    for n, (i, tok) in enumerate(tokens):
        if tok in _OPEN:
            depth += 1
        elif tok in _CLOSE:
            depth -= 1
            if depth == 0:
                if n != len(tokens) - 1:
                    return None
                opener = tokens[0][1]
                return opener, text[len(opener) : i], tok
    return None


_MATRIX = re.compile(r"^\\begin\{([pbB]?matrix|array)\}(?:\{[lcr|]*\})?(.*)\\end\{\1\}$", re.S)


VALUE, REFERENCE, EQUATION = "value", "reference", "equation"
_LIST_SEPARATOR = re.compile("[,;]")
# A label names an answer without being math: |AB|, \frac{NO}{BO}, V_1:V_2, (p, q), m\angle ABC.
_LABEL_COMMANDS = re.compile(
    r"\\(?:frac|dfrac|tfrac|angle|measuredangle|overline|triangle|widehat|overarc|arc|vert|lvert|rvert|mathrm|text"
    r"|operatorname|left|right)\b"
)
_SUBSCRIPT = re.compile(r"_\{?[A-Za-z0-9]+\}?")


def _is_label(lhs: str, rhs: str) -> bool:
    """``lhs`` only names the value on ``rhs`` (letters, subscripts, bars, a fraction of names; no digits or
    operators), and ``rhs`` is a constant (no variables): ``|AB| = 1``, ``(p, q) = (3, 2)``."""
    bare = _SUBSCRIPT.sub("", _LABEL_COMMANDS.sub("", lhs))
    if not re.fullmatch(r"[A-Za-z|{}():,/\s']*[A-Za-z][A-Za-z|{}():,/\s']*", bare):
        return False
    return re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", rhs)) is None


def _name_key(name: str) -> str:
    """A name compared as written, minus spacing, braces and bars: ``a_{3}`` is ``a_3``, ``|AB|`` is ``AB``."""
    return re.sub(r"[\s{}|]|\\left|\\right", "", name)


def parse_structure(text: str, equations: str = VALUE):
    """The top-level shape of a normalized answer: Leaf, Collection, Chain or Matrix.

    ``equations`` says what ``=`` means. VALUE (a candidate for a value): ``x = 3`` is the value 3
    and ``2 + 1 = 3`` is a chain whose parts must all match. REFERENCE: the same, except that an
    equation whose left side is not a bare name (``x^2 + y^2 = 1``) stays one leaf, compared as an
    equation. EQUATION (a candidate for such a reference): every two-sided equation stays a leaf.
    """
    if m := _MATRIX.match(text):
        rows = [r for r in (row.strip() for row in m.group(2).split(r"\\")) if r]
        cells = tuple(tuple(Leaf(normalize(cell)) for cell in row.split("&")) for row in rows)
        if sum(len(r) for r in cells) > MAX_ITEMS:
            raise TooComplex("matrix too large")
        return Matrix(cells)
    hedge = _split_top(text, _OR_WORDS)
    if len(hedge) > 1:
        return _collection([parse_structure(p, equations) for p in hedge], ordered=False, brackets="set")
    if r"\pm" in text or "+-" in text:
        sign_split = _split_top(text, re.compile(r"\\pm|\+-"))
        if len(sign_split) == 1:
            pass  # every \pm is inside brackets: handled per element
        elif len(sign_split) == 2:
            head, tail = sign_split
            plus = f"{head}+({tail})" if head else tail
            return _collection([Leaf(plus), Leaf(f"{head}-({tail})")], ordered=False, brackets="set")
        else:
            raise Unparseable(r"more than one \pm")
    union = _split_top(text, re.compile(r"\\cup|\bU\b"))
    if len(union) > 1:
        return _collection([parse_structure(p, equations) for p in union], ordered=False, brackets="set")
    if r"\in" in text and not _RELATIONS.search(text):
        head, sep, tail = text.partition(r"\in")
        if _NAME.match(head.strip()):
            return parse_structure(tail.strip(), equations)
    assignments = _split_top(text, _LIST_SEPARATOR)
    if len(assignments) > 1 and sum("=" in part for part in assignments) >= 2:  # x = -5, p = 14/3
        if any(not p for p in assignments):
            raise Unparseable("empty element")
        return _collection([parse_structure(p, equations) for p in assignments], ordered=False, brackets="set")
    if "=" in text and not _RELATIONS.search(text):
        parts = _split_top(text, re.compile(r"(?<![<>!\\])=(?!=)"))
        if len(parts) > 1:
            if equations == EQUATION and len(parts) == 2 and not _is_label(parts[0], parts[1]):
                return Leaf("=".join(parts), equation=True)
            names = []
            while len(parts) > 1 and (_NAME.match(parts[0]) or (len(parts) == 2 and _is_label(parts[0], parts[1]))):
                names.append(_name_key(parts[0]))
                parts = parts[1:]
            if equations == REFERENCE and len(parts) == 2:
                return Leaf("=".join(parts), equation=True)
            if any(not p for p in parts):
                raise Unparseable("empty side of an equation")
            nodes = [parse_structure(p, equations) for p in parts]
            if len(nodes) == 1:
                node = nodes[0]
                if names and isinstance(node, Leaf) and not node.name:
                    return Leaf(node.text, node.equation, names[-1])
                return node
            return Chain(tuple(nodes))
    if outer := _outer_brackets(text):
        opener, inner, closer = outer
        items = _split_top(inner, re.compile(","))
        if len(items) == 1 and ";" in inner:
            items = _split_top(inner, re.compile(";"))  # (0;-2;6)
        if len(items) > 1 or opener == r"\{" or (opener == "{" and len(items) > 1):
            if any(not i for i in items):
                raise Unparseable("empty element")
            nodes = [parse_structure(i, VALUE) for i in items]
            if opener in (r"\{", "{"):
                return _collection(nodes, ordered=False, brackets="set")
            return _collection(nodes, ordered=True, brackets=opener + closer)
        if (opener, closer) in (("(", ")"), ("{", "}"), ("[", "]")) and _MATRIX.match(inner.strip()):
            return parse_structure(inner.strip(), equations)  # \left[\begin{array}...\end{array}\right]
        if (opener, closer) in (("(", ")"), ("{", "}")):
            return parse_structure(inner.strip(), equations)
    if ("," in text and not _THOUSANDS.match(text)) or ";" in text:
        items = _split_top(text, _LIST_SEPARATOR)
        if len(items) > 1:
            if any(not i for i in items):
                raise Unparseable("empty element")
            return _collection([parse_structure(i, equations) for i in items], ordered=False, brackets="set")
    return Leaf(text)


_INEQUALITY = re.compile(r"(<|>|\\leq?|\\geq?)(?![A-Za-z])")
_INTERVAL_BRACKETS = frozenset({"()", "[]", "[)", "(]"})


def _constant(text: str) -> bool:
    return bool(text) and re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text)) is None


def inequality_interval(text: str) -> Collection | None:
    r"""``-2 \le x \le 7`` -> the interval ``[-2, 7]``; ``x > 3`` -> ``(3, \infty)``; else None.

    Only one named variable (``x``, ``f(x)``) between constant bounds: the set of values it may
    take is then exactly the interval, so either spelling of the answer is the same answer.
    """
    parts = [p.strip() for p in _INEQUALITY.split(text)]
    if len(parts) not in (3, 5):
        return None
    values, relations = parts[0::2], parts[1::2]
    less = [r in ("<", r"\le", r"\leq") for r in relations]
    closed = [r.startswith(("\\le", "\\ge")) for r in relations]
    if len(values) == 3:
        low, name, high = values
        if not (_NAME.match(name) and _constant(low) and _constant(high)) or less[0] != less[1]:
            return None
        if not less[0]:  # 7 \ge x \ge -2
            low, high, closed = high, low, closed[::-1]
        brackets = ("[" if closed[0] else "(") + ("]" if closed[1] else ")")
        return Collection((Leaf(low), Leaf(high)), ordered=True, brackets=brackets)
    left, right = values
    if _NAME.match(left) and _constant(right):  # x < 5
        upper = less[0]
        bound = right
    elif _NAME.match(right) and _constant(left):  # 5 > x
        upper = not less[0]
        bound = left
    else:
        return None
    if upper:
        return Collection((Leaf(r"-\infty"), Leaf(bound)), ordered=True, brackets="(" + ("]" if closed[0] else ")"))
    return Collection((Leaf(bound), Leaf(r"\infty")), ordered=True, brackets=("[" if closed[0] else "(") + ")")


_ABS_NAME = re.compile(r"^\|\s*(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?\s*\|$")


def _fraction_text(value) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def abs_inequality_set(text: str) -> Collection | None:
    r"""``1 \le |z| \le \frac{3}{2}`` -> ``[-3/2, -1] \cup [1, 3/2]``; ``|x| < 2`` -> ``(-2, 2)``; else None.

    Plain-number bounds only (``rewards.math.exact_numbers``), so the sign of each bound is known exactly.
    """
    from rewards.math.exact_numbers import NumberTooLarge, parse_number

    parts = [p.strip() for p in _INEQUALITY.split(text)]
    if len(parts) == 3:  # |x| < b, |x| >= a, b > |x|
        left, relation, right = parts
        less = relation in ("<", r"\le", r"\leq")
        if _ABS_NAME.match(right):
            left, right, less = right, left, not less
        if not _ABS_NAME.match(left):
            return None
        closed = relation.startswith(("\\le", "\\ge"))
        parts = ["0", r"\le", left, relation, right] if less else [right, relation, left, "<", r"\infty"]
        if not less:
            parts[1] = r"\le" if closed else "<"
    if len(parts) != 5 or not _ABS_NAME.match(parts[2]):
        return None
    low_text, rel_low, _, rel_high, high_text = parts
    if rel_low not in ("<", r"\le", r"\leq") or rel_high not in ("<", r"\le", r"\leq"):
        return None
    try:
        low = parse_number(low_text)
        high = None if high_text == r"\infty" else parse_number(high_text)
    except NumberTooLarge:
        return None
    if low is None or low.value < 0 or (high_text != r"\infty" and (high is None or high.value <= low.value)):
        return None
    low_closed, high_closed = rel_low != "<", rel_high != "<"
    hi = r"\infty" if high is None else _fraction_text(high.value)
    neg_hi = r"-\infty" if high is None else _fraction_text(-high.value)
    if low.value == 0 and low_closed:  # 0 <= |x| <= b: one interval
        return Collection((Leaf(neg_hi), Leaf(hi)), True, ("[" if high_closed else "(") + ("]" if high_closed else ")"))
    lo, neg_lo = _fraction_text(low.value), _fraction_text(-low.value)
    negative = Collection(
        (Leaf(neg_hi), Leaf(neg_lo)), True, ("[" if high_closed else "(") + ("]" if low_closed else ")")
    )
    positive = Collection((Leaf(lo), Leaf(hi)), True, ("[" if low_closed else "(") + ("]" if high_closed else ")"))
    return Collection((negative, positive), False, "set")


def as_interval_set(text: str) -> Collection | None:
    """The set an inequality in one variable describes, as an interval or a union of intervals (or None)."""
    return inequality_interval(text) or abs_inequality_set(text)


def is_interval_set(node) -> bool:
    """An interval, or a union (set) of intervals."""
    if isinstance(node, Collection) and not node.ordered and node.brackets == "set":
        return bool(node.items) and all(is_interval(item) for item in node.items)
    return is_interval(node)


def is_interval(node) -> bool:
    return (
        isinstance(node, Collection) and node.ordered and len(node.items) == 2 and node.brackets in _INTERVAL_BRACKETS
    )


def _collection(nodes: list, ordered: bool, brackets: str) -> Collection:
    if not ordered:  # {1 \pm \sqrt{5}, -2} and "19, 46, and 82" are flat sets
        nodes = [n for node in nodes for n in (node.items if _is_set(node) else (node,))]
    if len(nodes) > MAX_ITEMS:
        raise TooComplex(f"more than {MAX_ITEMS} elements")
    return Collection(tuple(nodes), ordered, brackets)


def _is_set(node) -> bool:
    return isinstance(node, Collection) and not node.ordered


# ---- units, currency, percent ------------------------------------------------------------

# Only these words (singular, lower case) are read as a unit; anything else after a number
# ("12 is incorrect", "3 unsure", "5 apples") stays in the answer, which then does not parse.
_UNITS = frozenset(
    "mm cm m km nm meter metre millimeter millimetre centimeter centimetre kilometer kilometre"
    " in inch ft foot yd yard mi mile"
    " mg g kg gram milligram kilogram lb pound oz ounce ton tonne"
    " ml l liter litre milliliter millilitre gallon gal quart pint cup tablespoon tbsp teaspoon tsp cc"
    " s sec second ms millisecond min minute h hr hour day week month year yr decade century"
    " mph kph kmh knot"
    " dollar cent euro yuan rupee usd"
    " degree radian rad"
    " unit square sq cubic"
    " v volt a amp ampere w watt kw kwh j joule n newton hz pa kpa cal kcal calorie".split()
)
_UNIT_SYNONYMS = {"degrees": "degree", "deg": "degree", "feet": "foot", "inches": "inch", "units": "unit"}
_UNIT_TOKEN = re.compile(r"(?P<word>[A-Za-z]+)\.?(?:\^\{?(?P<power>\d)\}?)?|(?P<per>/)")
_QUANTITY = re.compile(r"^(?P<core>.*?[\d}.])\s+(?P<unit>(?:[A-Za-z]+\.?(?:\^\{?\d\}?)?(?:\s*/\s*|\s+|$))+)$")


def _canonical_unit(word: str) -> str:
    word = word.lower()
    return _UNIT_SYNONYMS.get(word) or _singular(word)


def _singular(word: str) -> str:
    if word.endswith("es") and word[:-2].endswith(("ch", "sh", "x", "ss")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 2:
        return word[:-1]
    return word


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
        words = [_canonical_unit(t.group("word")) for t in tokens if t.group("word")]
        if words and all(w in _UNITS for w in words) and (explicit or len(words) > 1 or len(words[0]) > 1):
            text = _unwrap_command(m.group("core"), _TEXT_CMD).strip()
            unit = " ".join(
                "/"
                if t.group("per")
                else _canonical_unit(t.group("word")) + ("^" + t.group("power") if t.group("power") else "")
                for t in tokens
            )
    if not percent and text.endswith("%"):
        percent, text = True, text[:-1].rstrip()
    return Quantity(" ".join(text.split()), unit, percent)


# Compared as text, exactly: words (``Monday``, ``\\text{(C)}``), times (``12:00``), and numbers in a
# base (``204_5``: its value is not 204, so it must never meet the numeric path).
_TEXT_ANSWER = re.compile(r"^\(?[A-Za-z][A-Za-z ']*\)?$|^\d{1,2}:\d{2}$|^[0-9A-Za-z]+_\d+$")


def text_answer(text: str) -> str | None:
    """Lower-cased words when the leaf is a textual answer (``\\text{(C)}``, ``Monday``), else None."""
    plain = _unwrap_command(text, _TEXT_CMD).strip().replace("{", "").replace("}", "")
    if _TEXT_ANSWER.match(plain) and not _NAME.match(plain.strip("()")) or re.fullmatch(r"\(?[A-Z]\)", plain):
        return " ".join(plain.strip("()").lower().split())
    return None


def plain_words(text: str) -> str:
    """A candidate leaf as lower-cased words without wrappers or parentheses, to compare with ``text_answer``."""
    plain = _unwrap_command(text, _TEXT_CMD).replace("{", "").replace("}", "")
    return " ".join(plain.strip().strip("()").lower().split())
