r"""Inequalities, intervals, unions and set-builder sets in one variable, read as the set of values they allow.

``x \in [-2, 7]``, ``-2 \le x \le 7``, ``[-2, 7]`` and ``\{x \mid -2 \le x \le 7\}`` are one answer; so are
``x < -1 \text{ or } x > 3`` and ``(-\infty, -1) \cup (3, \infty)``. The reading is exact and narrow, because
every leniency here is a reward a policy can find:

* one variable (a letter, ``f(x)``, ``|x|``) between constant bounds; strict vs non-strict ends are kept;
* ``or`` joins into a union; ``and`` is an intersection, read only as one lower and one upper bound
  (``x > -1 \text{ and } x < 3`` is ``(-1, 3)``; ``x < -1 \text{ and } x > 3`` is empty and equals no union);
  commas between inequalities (a system? a union?) are not read as intervals at all;
* a set-builder set only over the reals (``\{x \in \mathbb{Z} \mid 1 \le x \le 3\}`` is ``\{1, 2, 3\}``,
  never ``[1, 3]``), and ``\mathbb{R}`` alone is ``(-\infty, \infty)``;
* a union equals another only interval by interval (never "covers the same points" by overlap).
"""

from __future__ import annotations

import re

from rewards.math.answer_tree import Collection, Leaf, collection, is_set, split_top
from rewards.math.exact_numbers import NumberTooLarge, parse_number

# a letter or command with an optional subscript, an inverse mark and one argument: x, a_1, \theta, f(x), f^{-1}(x)
NAME = re.compile(r"^(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?(?:\^\{?-1\}?(?=\())?(?:\([A-Za-z]\))?$")
_INEQUALITY = re.compile(r"(<|>|\\leq?(?![A-Za-z])|\\geq?(?![A-Za-z]))")
_INTERVAL_BRACKETS = frozenset({"()", "[]", "[)", "(]"})
_OR = re.compile(r"\\text\{\s*or\s*\}|\bor\b|\\lor\b|\\vee\b")
_AND = re.compile(r"\\text\{\s*and\s*\}|\band\b|\\land\b|\\wedge\b")
_REALS = re.compile(r"^(?:\\mathbb\s*\{?\s*R\s*\}?|\\R|\\Bbb\s*\{?\s*R\s*\}?|\\reals)$")
_BUILDER = re.compile(
    r"^\\\{\s*(?P<name>[A-Za-z])\s*(?:\\in\s*(?P<domain>[^|:]+?))?\s*(?:\\mid|\||:)(?P<condition>.+)\\\}$"
)
_ABS_NAME = re.compile(  # |x|, \lvert x \rvert, and abs(x) in plain syntax
    r"^(?:\|\s*(?P<name>(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?)\s*\|"
    r"|\\(?P<bar>l?vert)\s*(?P<barred>(?:[A-Za-z]|\\[A-Za-z]+)(?:_\{?[A-Za-z0-9]+\}?)?)\s*\\(?:rvert|vert)"
    r"|abs\s*\(\s*(?P<plain>[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?)\s*\))$"
)
# Commands that are a free symbol to the parser (Greek letters other than pi). Anything else (``\pi``, ``\infty``,
# ``\sin(x)``) or the letter ``e`` (Euler's number to the parser) is a constant or an operation: ``\pi < 4`` is a
# true statement, not the ray ``(-\infty, 4)``.
_GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho sigma tau"
    " upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Phi Psi Omega".split()
)
INFINITY, MINUS_INFINITY = r"\infty", r"-\infty"
_INFINITE = re.compile(r"([-+]?)\s*(?:\\infty|infinity|oo)")


def is_variable(name: str) -> bool:
    r"""``name`` is a variable (``x``, ``a_1``, ``\theta``, ``f(x)``), never a constant (``\pi``, ``e``, ``\infty``).

    >>> [is_variable(n) for n in ("x", r"\theta", "f(x)", r"\pi", "e", r"\infty", r"\sin(x)")]
    [True, True, True, False, False, False, False]
    """
    name = name.strip()
    if not NAME.match(name):
        return False
    head = re.match(r"\\?[A-Za-z]+|[A-Za-z]", name).group()
    if head.startswith("\\"):
        return head[1:] in _GREEK
    return name != "e"


def _abs_variable(text: str) -> str | None:
    """The variable inside ``|x|``, ``\\lvert x \\rvert`` or ``abs(x)``, or None when ``text`` is not one."""
    m = _ABS_NAME.match(text)
    name = m and (m.group("name") or m.group("barred") or m.group("plain"))
    return name if name and is_variable(name) else None


def _is_abs_variable(text: str) -> bool:
    return _abs_variable(text) is not None


def name_key(name: str) -> str:
    """A name compared as written, minus spacing, braces and bars: ``a_{3}`` is ``a_3``, ``|AB|`` is ``AB``."""
    return re.sub(r"[\s{}|]|\\left|\\right", "", name)


def _constant(text: str) -> bool:
    return bool(text) and re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text)) is None


def _empty(low: str, high: str, closed: bool) -> bool:
    """Bounds that leave nothing (``3 < x < -1``): such an "interval" would only ever equal the point ``(3, -1)``."""
    try:
        low_number, high_number = parse_number(low), parse_number(high)
    except NumberTooLarge:
        return False
    if low_number is None or high_number is None:
        return False
    return low_number.value > high_number.value or (low_number.value == high_number.value and not closed)


def _interval(low: str, high: str, closed_low: bool, closed_high: bool, name: str) -> Collection:
    brackets = ("[" if closed_low else "(") + ("]" if closed_high else ")")
    return Collection((Leaf(low), Leaf(high)), ordered=True, brackets=brackets, name=name)


def inequality_interval(text: str) -> Collection | None:
    r"""``-2 \le x \le 7`` -> the interval ``[-2, 7]`` named ``x``; ``x > 3`` -> ``(3, \infty)``; else None.

    Only one named variable (``x``, ``f(x)``) between constant bounds: the set of values it may
    take is then exactly the interval, so either spelling of the answer is the same answer.

    >>> inequality_interval("0<f(x)<1")
    Collection(items=(Leaf(text='0', equation=False, name=''), Leaf(text='1', equation=False, name='')), ordered=True, brackets='()', name='f(x)')
    """
    parts = [p.strip() for p in _INEQUALITY.split(text)]
    if len(parts) not in (3, 5):
        return None
    values, relations = parts[0::2], parts[1::2]
    less = [r in ("<", r"\le", r"\leq") for r in relations]
    closed = [r.startswith(("\\le", "\\ge")) for r in relations]
    if len(values) == 3:
        low, name, high = values
        if not (is_variable(name) and _constant(low) and _constant(high)) or less[0] != less[1]:
            return None
        if not less[0]:  # 7 \ge x \ge -2
            low, high, closed = high, low, closed[::-1]
        if _empty(low, high, closed[0] and closed[1]):
            return None
        return _interval(low, high, closed[0], closed[1], name_key(name))
    left, right = values
    if is_variable(left) and _constant(right):  # x < 5
        upper, bound, name = less[0], right, left
    elif is_variable(right) and _constant(left):  # 5 > x
        upper, bound, name = not less[0], left, right
    else:
        return None
    if upper:
        return _interval(MINUS_INFINITY, bound, False, closed[0], name_key(name))
    return _interval(bound, INFINITY, closed[0], False, name_key(name))


def _fraction_text(value) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def abs_inequality_set(text: str) -> Collection | None:
    r"""``1 \le |z| \le \frac{3}{2}`` -> ``[-3/2, -1] \cup [1, 3/2]``; ``|x| < 2`` -> ``(-2, 2)``; else None.

    Plain-number bounds only (``rewards.math.exact_numbers``), so the sign of each bound is known exactly.
    """
    parts = [p.strip() for p in _INEQUALITY.split(text)]
    if len(parts) == 3:  # |x| < b, |x| >= a, b > |x|, abs(x) < b
        left, relation, right = parts
        less = relation in ("<", r"\le", r"\leq")
        if _is_abs_variable(right):
            left, right, less = right, left, not less
        if not _is_abs_variable(left):
            return None
        strict = "<" if not relation.startswith(("\\le", "\\ge")) else r"\le"  # b > |x| is |x| < b
        parts = ["0", r"\le", left, strict, right] if less else [right, strict, left, "<", INFINITY]
    elif len(parts) == 5 and all(r in (">", r"\ge", r"\geq") for r in parts[1::2]):  # 2 > |x| > 1
        parts = [parts[4], "<" if parts[3] == ">" else r"\le", parts[2], "<" if parts[1] == ">" else r"\le", parts[0]]
    if len(parts) != 5 or not _is_abs_variable(parts[2]):
        return None
    return _abs_bounds(*parts)


def _abs_bounds(low_text: str, rel_low: str, name: str, rel_high: str, high_text: str) -> Collection | None:
    if rel_low not in ("<", r"\le", r"\leq") or rel_high not in ("<", r"\le", r"\leq"):
        return None
    try:
        low = parse_number(low_text)
        high = None if high_text == INFINITY else parse_number(high_text)
    except NumberTooLarge:
        return None
    if low is None or low.value < 0 or (high_text != INFINITY and (high is None or high.value <= low.value)):
        return None
    low_closed, high_closed = rel_low != "<", rel_high != "<"
    name = name_key(_abs_variable(name) or "")  # |t| < 2 is a set of values of t: never one of x
    hi = INFINITY if high is None else _fraction_text(high.value)
    neg_hi = MINUS_INFINITY if high is None else _fraction_text(-high.value)
    if low.value == 0 and low_closed:  # 0 <= |x| <= b: one interval
        return _interval(neg_hi, hi, high_closed, high_closed, name)
    lo, neg_lo = _fraction_text(low.value), _fraction_text(-low.value)
    negative = _interval(neg_hi, neg_lo, high_closed, low_closed, name)
    positive = _interval(lo, hi, low_closed, high_closed, name)
    return Collection((negative, positive), False, "set", name)


def reals(text: str) -> Collection | None:
    r"""``\mathbb{R}`` (``\R``, ``\Bbb{R}``) alone -> ``(-\infty, \infty)``; ``\mathbb{R}^+``, ``\mathbb{Z}`` -> None."""
    return _interval(MINUS_INFINITY, INFINITY, False, False, "") if _REALS.match(text.strip()) else None


def as_interval_set(text: str) -> Collection | None:
    """The set an inequality in one variable describes, as an interval or a union of intervals (or None)."""
    return reals(text) or inequality_interval(text) or abs_inequality_set(text)


def _intersection(parts: list[Collection]) -> Collection | None:
    """``x > -1 \\text{ and } x < 3``: exactly one lower and one upper bound, one variable -> ``(-1, 3)``."""
    if len(parts) != 2 or not all(is_interval(p) for p in parts) or parts[0].name != parts[1].name:
        return None
    lows = [p for p in parts if p.items[1].text == INFINITY]
    highs = [p for p in parts if p.items[0].text == MINUS_INFINITY]
    if len(lows) != 1 or len(highs) != 1 or lows[0] is highs[0]:
        return None
    low, high = lows[0], highs[0]
    closed_low, closed_high = low.brackets[0] == "[", high.brackets[1] == "]"
    if _empty(low.items[0].text, high.items[1].text, closed_low and closed_high):
        return None  # x < -1 and x > 3: empty, which no interval or union answer means
    return _interval(low.items[0].text, high.items[1].text, closed_low, closed_high, low.name)


def connected_inequalities(text: str) -> Collection | None:
    r"""Inequalities in one variable joined by ``or`` (a union) or ``and`` (one interval), else None.

    >>> connected_inequalities(r"x < -1 \text{ or } x > 3").items[1]
    Collection(items=(Leaf(text='3', equation=False, name=''), Leaf(text='\\infty', equation=False, name='')), ordered=True, brackets='()', name='x')
    >>> connected_inequalities(r"x < -1 \text{ and } x > 3") is None
    True
    """
    if not _INEQUALITY.search(text):
        return None
    either, both = split_top(text, _OR), split_top(text, _AND)
    if len(either) > 1 and len(both) > 1:
        return None  # "a or b and c": no precedence is guessed
    parts = either if len(either) > 1 else both
    if len(parts) < 2:
        return None
    sets = [as_interval_set(part) for part in parts]
    if any(s is None for s in sets):
        return None
    names = {s.name for s in sets}
    if len(names) != 1 or "" in names:
        return None
    if len(both) > 1:
        return _intersection(sets)
    return collection(sets, ordered=False, brackets="set", name=names.pop())


def set_builder(text: str) -> Collection | None:
    r"""``\{x \mid -2 \le x \le 7\}`` (or ``:``, ``|``, ``\in \mathbb{R}``) -> ``[-2, 7]``; other domains -> None."""
    m = _BUILDER.match(text.strip())
    if not m:
        return None
    domain = (m.group("domain") or "").strip()
    if domain and not _REALS.match(domain):
        return None  # \{x \in \mathbb{Z} \mid 1 \le x \le 3\} is {1, 2, 3}, not [1, 3]
    condition = m.group("condition").strip()
    result = connected_inequalities(condition) or inequality_interval(condition)
    if result is None or result.name != m.group("name") or not is_variable(m.group("name")):
        return None
    return result


def _end_value(text: str, infinite: str):
    r"""An interval's end as an exact number (``±inf`` as the floats, which order against every Fraction), or None
    when it is not a number written out (``\sqrt{2}``, ``\frac{4}{2}``: those are compared as written)."""
    if m := _INFINITE.fullmatch(text.strip()):
        negative = m.group(1) == "-"
        return (float("-inf") if negative else float("inf")) if negative == (infinite == MINUS_INFINITY) else None
    try:
        number = parse_number(text)
    except NumberTooLarge:
        return None
    return number.value if number is not None and number.canonical else None


def merged(node):
    r"""The values of a variable as the union of disjoint pieces when every end is a number, else ``node`` unchanged.

    ``x \ge 1 \text{ or } 1 \le x`` is ``[1, \infty)``; ``[0, 2] \cup [1, 3]`` is ``[0, 3]``; ``(0, 1] \cup (1, 2)``
    is ``(0, 2)``; ``(0, 1) \cup (1, 2)`` stays two pieces (1 is in neither). Exact: the ends are compared as
    fractions (``rewards.math.exact_numbers``), so the union is the same set of reals; each end keeps its spelling.

    >>> merged(connected_inequalities(r"x \ge 1 \text{ or } 1 \le x"))
    Collection(items=(Leaf(text='1', equation=False, name=''), Leaf(text='\\infty', equation=False, name='')), ordered=True, brackets='[)', name='x')
    """
    pieces = node.items if is_set(node) and node.brackets == "set" else (node,)
    if not pieces or not all(is_interval(p) for p in pieces):
        return node
    if any(p.name not in ("", node.name) for p in pieces):
        return node  # x \in [0, 1], y \in [2, 3]: sets of two variables, never one union
    if not is_variable(node.name):
        return node  # only the values of a variable (a list [1, 3], [2, 4] may be two answers, or two points)
    spans = []  # [low, low open, high, high closed, low text, high text]
    for piece in pieces:
        low = _end_value(piece.items[0].text, MINUS_INFINITY)
        high = _end_value(piece.items[1].text, INFINITY)
        if low is None or high is None:
            return node
        closed_low, closed_high = piece.brackets[0] == "[", piece.brackets[1] == "]"
        if low > high or (low == high and not (closed_low and closed_high)):
            return node  # (2, 1) is no piece anyone means: compared as written (refused), never dropped as empty
        spans.append([low, not closed_low, high, closed_high, piece.items[0].text, piece.items[1].text])
    spans.sort(key=lambda span: (span[0], span[1]))  # by lower end, a closed end first
    joined = [spans[0]]
    for low, open_low, high, closed_high, low_text, high_text in spans[1:]:
        last = joined[-1]
        if low < last[2] or (low == last[2] and (last[3] or not open_low)):  # overlaps or touches at a kept point
            if high > last[2] or (high == last[2] and closed_high):
                last[2], last[3], last[5] = high, closed_high, high_text
        else:
            joined.append([low, open_low, high, closed_high, low_text, high_text])
    out = [_interval(lt, ht, not open_low, closed_high, node.name) for _, open_low, _, closed_high, lt, ht in joined]
    return out[0] if len(out) == 1 else Collection(tuple(out), False, "set", node.name)


def is_interval_set(node) -> bool:
    """An interval, or a union (set) of intervals."""
    if is_set(node) and node.brackets == "set":
        return bool(node.items) and all(is_interval(item) for item in node.items)
    return is_interval(node)


def is_interval(node) -> bool:
    return (
        isinstance(node, Collection) and node.ordered and len(node.items) == 2 and node.brackets in _INTERVAL_BRACKETS
    )
