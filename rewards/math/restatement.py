r"""The question-restatement rule: an answer that copies an expression of the question is not an answer.

Why: symbolic equivalence is kept (``(x+2)(x-3)`` *is* ``x^2-x-6``), so on "Expand $(x+2)(x-3)$" the question's own
expression is paid for the expanded reference, on "Factor $x^2-x-6$" the expanded form for the factored one,
``\frac{d}{dx}(x^3 \sin x)`` for its derivative and ``\pi \cdot 5^2`` for ``25\pi``: the cheapest strategy a policy
has on MATH-style problems. ``rewards.grade(..., question=...)`` sees the question (the TRL rewards read it from
TRL's ``prompts``, the Inspect scorers from ``state.input``, both with ``rewards.common.question_text``), and a
candidate that restates one of the question's expressions holding an operator or a function is refused with the
reason ``restated_question``, before any equivalence is tried.

"Restates" is decided on the verifier's own reading, never on raw strings: each side is normalized by
``structure.normalize`` and read into tokens by ``tokens.lex`` (so ``\dfrac``/``\frac``, ``\left(``, spacing,
``{2}``/``2``, ``\cdot``/``\times``/``*``/juxtaposition are one spelling; ``A/B`` with one number, letter or bracket
each side is ``\frac{A}{B}``; a factor ``1`` and a term ``0`` are left out), then put in a canonical order where the
order is free: the terms of a sum and the factors of a product (no ``/``, ``\div`` or unbraced function among them),
inside brackets too. So ``(x-3)(x+2)``, ``-x + x^2 - 6`` and ``5^2 \pi`` restate ``(x+2)(x-3)``, ``x^2-x-6`` and
``\pi \cdot 5^2``. What is compared:

* the question's expressions: every math segment (``$...$``, ``$$...$$``, ``\(...\)``, ``\[...\]``) and every run
  of plain-text math ("Expand (x+2)(x-3)", "What is 7 + 9?"), whole and split at relations and separators
  (``f(x) = (x+2)(x-3)`` gives both sides); only those holding an operator or a function count: a bare number or
  name does not ("Which is larger, 7 or 9?" is answered ``9``);
* the candidate: whole, the last side of a relation (``y = (x+2)(x-3)``, a chain ``... = (x+2)(x-3)``) and each
  item of a top-level list;
* the exemption: a question expression that is the reference itself (same canonical reading) may be copied: the
  question then states its answer ("Which is larger, $2^{10}$ or $10^3$?" answered ``2^{10}``).

Bounded and cheap: the question's expressions are read once per question (cached) from its first
``MAX_QUESTION_CHARS`` characters, at most ``MAX_EXPRESSIONS`` of them, each within the verifier's length screen;
a bare candidate (a number, a name) is never read at all. No clock is involved: the verdict is the same at any load.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rewards.math import structure, tokens
from rewards.math.answer_tree import TooComplex, Unparseable
from rewards.math.vocabulary import ARGUMENT_MACROS, CONSTANTS, FUNCTIONS, RELATIONS

MAX_QUESTION_CHARS = 20_000  # of a question, read for expressions (a question is not model text, but bound it)
MAX_EXPRESSIONS = 256  # expressions of one question compared (each whole and split at relations)

_MULTIPLY = frozenset({"*", r"\cdot", r"\times"})
_DIVIDE = frozenset({"/", r"\div"})
_SIGNS = frozenset({"+", "-"})
_OPERATOR_TOKENS = frozenset({"+", "-", "*", "/", "^", "!", r"\times", r"\cdot", r"\div", r"\pm", r"\mp"})
_RELATION_TOKENS = frozenset(RELATIONS) | {r"\approx", r"\simeq", r"\sim", r"\Rightarrow", r"\implies"}
_SEPARATOR_TOKENS = frozenset({",", ";", ":", r"\mid", r"\colon", "and", "or"})
_OPENERS = {"(": ")]", "[": ")]", "{": "}", r"\{": r"\}"}
_CLOSERS = frozenset(")]}") | {r"\}"}
_FUNCTION_NAMES = frozenset(FUNCTIONS)
# functions whose operand may be unbraced (\sin x, \log 8): their factors are not reordered
_OPEN_OPERAND = frozenset(name for name, count in FUNCTIONS.items() if count == 0)
_BRACED_ARGS = {**ARGUMENT_MACROS, r"\sqrt": 1, r"\operatorname": 1}
_NAMED_WORDS = frozenset(name for name in (*FUNCTIONS, *CONSTANTS) if not name.startswith("\\"))

# a bare value the rule never reads: a number, one letter or a constant (optionally signed)
_BARE = re.compile(r"\s*[-+]?\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+|[A-Za-z]|\\[A-Za-z]+)\s*")
# plain-text math in a question: numbers, single letters, functions, operators and brackets, with spaces between
_PLAIN_RUN = re.compile(
    r"(?:(?:\\[A-Za-z]+|\d+(?:\.\d+)?|(?<![A-Za-z])(?:sqrt|cbrt|sin|cos|tan|cot|sec|csc|log|ln|exp|abs)(?![A-Za-z'])"
    r"|(?<![A-Za-z'])[A-Za-z](?![A-Za-z'])|[-+*/^=<>()\[\]{}_!|]|\\[{}])[ \t]*)+"
)
_MATH_OPENERS = (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]"))


class _Group(tuple):
    """A bracketed group of the token tree: (opener, items, closer)."""


def _tree(toks: list[str]) -> list | None:
    """Tokens as nested groups (``(``, ``[``, ``{``, ``\\{``; ``(a, b]`` closes either way); None when unbalanced."""
    stack: list[tuple[str, list]] = [("", [])]
    for tok in toks:
        if tok in _OPENERS:
            stack.append((tok, []))
        elif tok in _CLOSERS:
            opener, items = stack.pop() if len(stack) > 1 else ("", None)
            if items is None or tok not in _OPENERS[opener]:
                return None
            stack[-1][1].append(_Group((opener, tuple(items), tok)))
        else:
            stack[-1][1].append(tok)
    return stack[0][1] if len(stack) == 1 else None


def _split(items: list, separators: frozenset) -> list[list]:
    parts: list[list] = [[]]
    for item in items:
        if isinstance(item, str) and item in separators:
            parts.append([])
        else:
            parts[-1].append(item)
    return parts


def _canon_item(item) -> str:
    if not isinstance(item, _Group):
        return item
    opener, items, closer = item
    inner = _canon(list(items))
    if opener == "{" and _single_factor(list(items)):
        return inner  # {2}, {x^2}: a brace around one factor only groups
    return f"{opener}{inner}{closer}"


def _single_factor(items: list) -> bool:
    terms = _terms(items)
    factors = _factors_or_none(terms[0][1]) if len(terms) == 1 else None
    return factors is not None and len(factors) == 1


def _terms(items: list) -> list[tuple[str, list]]:
    """(sign, items) of each term of a sum: split at a ``+``/``-`` that follows an operand."""
    terms: list[tuple[str, list]] = []
    sign, current = "+", []
    for item in items:
        binary = current and not (isinstance(current[-1], str) and current[-1] in _OPERATOR_TOKENS | {"^", "_"})
        if isinstance(item, str) and item in _SIGNS and (binary or not current):
            if current:
                terms.append((sign, current))
            sign, current = item, []
            continue
        current.append(item)
    terms.append((sign, current))
    return terms


def _factors_or_none(items: list) -> list[list] | None:
    """The factors of one term (an atom with its arguments, exponents, subscripts and postfixes), or None when their
    order is not free (a division, or a function whose operand is not braced)."""
    items = [item for item in items if not (isinstance(item, str) and item in _MULTIPLY)]
    factors: list[list] = []
    i = 0
    while i < len(items):
        item = items[i]
        if isinstance(item, str) and (item in _DIVIDE or item in _OPEN_OPERAND):
            return None
        factor = [item]
        i += 1
        if isinstance(item, str) and item in _BRACED_ARGS:
            if item == r"\sqrt" and i < len(items) and isinstance(items[i], _Group) and items[i][0] == "[":
                factor.append(items[i])
                i += 1
            for _ in range(_BRACED_ARGS[item]):
                if i < len(items):
                    factor.append(items[i])
                    i += 1
        while i < len(items) and isinstance(items[i], str) and items[i] in ("^", "_", "!", "'", "%", r"\prime"):
            mark = items[i]
            factor.append(mark)
            i += 1
            if mark in ("^", "_") and i < len(items):
                if isinstance(items[i], str) and items[i] in _SIGNS and i + 1 < len(items):  # x^-2
                    factor.append(items[i])
                    i += 1
                factor.append(items[i])
                i += 1
        factors.append(factor)
    return factors


def _slash_as_frac(items: list) -> list:
    r"""``A / B`` with one item each side (a number, a letter or a bracket) as ``\frac{A}{B}``, where nothing binds
    either side more tightly (no exponent, subscript or operand reaching into it): ``(2x+4)/2`` is ``\frac{2x+4}{2}``,
    never ``x^2/2`` (the ``2`` is the exponent's) or ``a/b^2``."""
    if "/" not in items:
        return items
    out: list = []
    i = 0
    while i < len(items):
        item = items[i]
        nxt = items[i + 1] if i + 1 < len(items) else None
        after = items[i + 3] if i + 3 < len(items) else None
        before = out[-1] if out else None
        if (
            nxt == "/"
            and i + 2 < len(items)
            and _slash_operand(item)
            and _slash_operand(items[i + 2])
            and (before is None or (isinstance(before, str) and before in _SIGNS | _MULTIPLY))
            and (after is None or (isinstance(after, str) and after in _SIGNS | _MULTIPLY))
        ):
            out += [r"\frac", _braced(item), _braced(items[i + 2])]
            i += 3
            continue
        out.append(item)
        i += 1
    return out


def _slash_operand(item) -> bool:
    if isinstance(item, _Group):
        return item[0] == "(" and item[2] == ")"
    return bool(re.fullmatch(r"\d+|[A-Za-z]", item))


def _braced(item) -> _Group:
    return _Group(("{", item[1] if isinstance(item, _Group) else (item,), "}"))


def _plain_bracket(item) -> bool:
    """Parentheses or braces around one expression (no separator: a tuple's brackets are its own)."""
    return (
        isinstance(item, _Group)
        and (item[0], item[2]) in (("(", ")"), ("{", "}"))
        and not any(isinstance(inner, str) and inner in _SEPARATOR_TOKENS for inner in item[1])
    )


def _vacuous(part: list, unit: str) -> bool:
    r"""A factor ``1`` of a product or a term ``0`` of a sum (``1\cdot(x+2)(x-3)``, ``(x+2)(x-3) + 0``): nothing."""
    return len(part) == 1 and part[0] == unit


def _canon(items: list) -> str:
    r"""A canonical string of a token tree: sums and products in sorted order where the order is free, ``A/B`` as
    ``\frac{A}{B}``, a factor 1 and a term 0 left out."""
    items = _slash_as_frac(items)
    if len(items) == 1 and _plain_bracket(items[0]):
        return _canon(list(items[0][1]))  # redundant outer parentheses or braces: (x+2), {(x+2)(x-3)}
    terms = _terms(items)
    if len(terms) > 1 and any(_vacuous(term, "0") for _, term in terms):
        terms = [(sign, term) for sign, term in terms if not _vacuous(term, "0")] or terms[:1]
    if len(terms) == 1 and terms[0][0] == "+" and (factors := _factors_or_none(terms[0][1])) is not None:
        kept = [factor for factor in factors if not _vacuous(factor, "1")]
        if len(kept) == 1 and len(kept[0]) == 1 and _plain_bracket(kept[0][0]):
            return _canon(list(kept[0][0][1]))  # 1\cdot(x^2-x-6), (x^2-x-6) + 0: what the bracket holds
    shown = []
    for sign, term in terms:
        factors = _factors_or_none(term)
        if factors is None:
            body = " ".join(_canon_item(item) for item in term)
        else:
            if len(factors) > 1:
                factors = [factor for factor in factors if not _vacuous(factor, "1")] or factors[:1]
            body = "·".join(sorted(" ".join(_canon_item(item) for item in factor) for factor in factors))
        shown.append(sign + body)
    if len(shown) == 1:
        return shown[0][1:] if shown[0].startswith("+") else shown[0]
    return "⟨" + " ".join(sorted(shown)) + "⟩"


def _has_operation(items: list) -> bool:
    """Whether an expression holds an operator or a function (a product of two factors counts), beyond a sign."""
    terms = _terms(items)
    if len(terms) > 1:
        return True
    term = terms[0][1]
    factors = _factors_or_none(term)
    if factors is None or len(factors) > 1:
        return True
    for item in term:
        if isinstance(item, _Group):
            if _has_operation(list(item[1])):
                return True
        elif item in _OPERATOR_TOKENS or item in _FUNCTION_NAMES or item in _BRACED_ARGS:
            return True
    return False


def _words_as_letters(toks: list[tuple[str, str]]) -> list[str]:
    """Token texts, a word that is no function, constant or unit spelled as its letters (``dx`` is ``d x``)."""
    out = []
    for kind, text in toks:
        if kind == "word" and len(text) > 1 and text not in _NAMED_WORDS and text not in ("and", "or"):
            out.extend(text)
        else:
            out.append(text)
    return out


def _reading(text: str) -> list | None:
    """The token tree of ``text`` as the verifier normalizes it; None when the verifier cannot read it."""
    try:
        normalized = structure.normalize(text)
        return _tree(_words_as_letters([tok for tok in tokens.lex(normalized) if tok[0] != "space"]))
    except (Unparseable, TooComplex, RecursionError):
        return None


def _derivative_operand(items: list) -> list | None:
    r"""The operand of a leading derivative, ``\frac{d}{dx}(E)`` or ``\frac{d^2}{dx^2} E``: E (None: no derivative).

    A derivative left unevaluated around the question's expression restates it ("Differentiate $x^3 \sin x$"
    answered ``\frac{d}{dx}(x^3 \sin x)``, which sympy evaluates to the derivative)."""
    if len(items) < 4 or items[0] not in (r"\frac", r"\dfrac") or not isinstance(items[1], _Group):
        return None
    top, bottom = list(items[1][1]), items[2]
    if top[:1] != ["d"] or len(top) not in (1, 3) or not isinstance(bottom, _Group) or bottom[1][:1] != ("d",):
        return None
    rest = items[3:]
    if len(rest) == 1 and isinstance(rest[0], _Group) and rest[0][0] == "(":
        return list(rest[0][1])
    return rest


def _keys(items: list, *, every_side: bool) -> set[str]:
    r"""Canonical keys of an expression's parts that hold an operation: the whole, each side of a relation (or only
    the last: ``every_side=False``), each item of a top-level list, and the operand of a leading derivative (on both
    sides: ``\frac{d}{dx} x^3 \sin x`` restates "Find $\frac{d}{dx}(x^3 \sin x)$" without its brackets)."""
    keys: set[str] = set()
    if _has_operation(items):
        keys.add(_canon(items))
    for listed in _split(items, _SEPARATOR_TOKENS):
        sides = _split(listed, _RELATION_TOKENS)
        for side in sides if every_side else sides[-1:]:
            if side and _has_operation(side):
                keys.add(_canon(side))
            operand = _derivative_operand(side)
            if operand and _has_operation(operand):
                keys.add(_canon(operand))
    return keys


def _math_segments(text: str) -> tuple[list[str], str]:
    """The math-delimited segments of ``text`` and the plain text around them, in one linear pass."""
    segments, plain = [], []
    missing: set[str] = set()  # delimiters with no closing one left: never searched for again
    i = last = 0
    while i < len(text):
        for opener, closer in _MATH_OPENERS:
            if opener in missing or not text.startswith(opener, i) or (opener == "$" and i and text[i - 1] == "\\"):
                continue
            end = text.find(closer, i + len(opener))
            if end < 0:
                missing.add(opener)
                continue
            plain.append(text[last:i])
            segments.append(text[i + len(opener) : end])
            i = last = end + len(closer)
            break
        else:
            i += 1
    plain.append(text[last:])
    return segments, " ".join(plain)


@lru_cache(maxsize=4096)
def question_expressions(question: str) -> frozenset[str]:
    r"""The canonical keys of the question's expressions that hold an operator or a function.

    >>> sorted(question_expressions("Expand $(x+2)(x-3)$. Which is larger, 7 or 9?")) == sorted(
    ...     question_expressions("Expand (x-3)(x+2).")) != []
    True
    """
    text = question[:MAX_QUESTION_CHARS]
    segments, plain = _math_segments(text)
    pieces = segments + [m.group().strip() for m in _PLAIN_RUN.finditer(plain)]
    keys: set[str] = set()
    for piece in pieces[:MAX_EXPRESSIONS]:
        if not piece or _BARE.fullmatch(piece):
            continue
        items = _reading(piece)
        if items is None:  # an expression the normalizer refuses whole (text, a list with \quad): its parts
            for part in re.split(r"=|<|>|,|;|\\quad|\\qquad|\\text\{[^{}]*\}", piece)[:16]:
                part_items = None if _BARE.fullmatch(part) else _reading(part)
                if part_items:
                    keys |= _keys(part_items, every_side=True)
            continue
        keys |= _keys(items, every_side=True)
    return frozenset(keys)


@lru_cache(maxsize=8192)
def answer_keys(answer: str) -> frozenset[str]:
    """The canonical keys of an answer (candidate or reference): whole, the last side of a relation, each list item."""
    if _BARE.fullmatch(answer):
        return frozenset()
    items = _reading(answer)
    return frozenset() if items is None else frozenset(_keys(items, every_side=False))


def restated_expression(candidate: str, question: str | None, reference: str) -> str | None:
    r"""The canonical reading of the question expression ``candidate`` restates, or None.

    >>> restated_expression("(x-3)(x+2)", "Expand $(x+2)(x-3)$.", "x^2 - x - 6") is not None
    True
    >>> restated_expression("x^2-x-6", "Expand $(x+2)(x-3)$.", "x^2 - x - 6") is None
    True
    >>> restated_expression("9", "Which is larger, 7 or 9?", "9") is None
    True
    """
    if not question or _BARE.fullmatch(candidate):
        return None
    copied = question_expressions(question) & answer_keys(candidate)
    if not copied:
        return None
    copied -= answer_keys(reference)  # the question states the answer itself: copying it is answering
    return min(copied) if copied else None
