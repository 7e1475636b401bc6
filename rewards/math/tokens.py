r"""The closed front end: an answer as tokens of the vocabulary, and where one value may stand beside another.

Why tokens: a LaTeX parser multiplies whatever stands side by side, so ``{9}{3}``, ``\text{9}\text{3}``,
``$9$ $3$``, ``(9)(3)``, ``9^{1}3^{1}``, ``\frac{9}{1}{3}`` and ``\sqrt{81}\sqrt{9}`` would all be 27: a policy
copying the question's two numbers is paid on every product. Deciding this on the raw string, wrapper by
wrapper, reopened the class with every wrapper learnt later. Here it is decided once, on tokens:

* every ``\name`` must be in ``rewards.math.vocabulary.KNOWN_MACROS`` (else ``unsupported notation: \name``)
  and every character in a closed set (else ``unsupported character``);
* wrappers (``WRAPPERS``: braces, ``\text``-family, ``\mathbf``, ``$``, boxes) and spacing are transparent:
  what they hold stands where they stand, so no wrapper can join two values;
* two factors side by side with no operator between them are a product only where the grammar says so:
  a numeral coefficient before a name, a constant, a function or radical, or a bracket that holds more
  than a bare number (``2x``, ``3\pi``, ``3\sqrt{2}``, ``2(x+1)``), a factor holding a name or constant
  before anything but a number (``x y``, ``\pi r^2``, ``(x+1)(x-1)``, ``f(3)``), and a mixed number (a whole
  number before a proper fraction of digits, ``2\frac{1}{3}``; ``2 1/3`` only as a value of its own).
  **Never two numbers**, whatever wraps them: ``9(3)``, ``(9)(3)``, ``\sqrt{2}\sqrt{3}``, ``3 5/2``, ``x 3``;
* after a wide gap (``\quad``, a newline, ``\hspace``) a new value is a second answer (``3\quad 4``, ``2\quad x``);
  only a unit or a separator may follow;
* a number in scientific notation (``1e1``) is one number and stands alone (never ``1 \cdot e \cdot 1``).

``read`` returns what the verifier needs later (whether names or functions occur); it is linear in the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewards.math.answer_tree import Unparseable
from rewards.math.vocabulary import (
    ARGUMENT_MACROS,
    BRACKETS,
    CONSTANTS,
    FUNCTIONS,
    KNOWN_MACROS,
    MODIFIERS,
    RELATIONS,
    SEPARATORS,
    SPACING,
    UNITS,
    WRAPPERS,
)

# ---- lexer ---------------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<rows>\\\\)"
    r"|(?P<macro>\\[A-Za-z]+)"
    r"|(?P<escaped>\\[^A-Za-z])"
    r"|(?P<sci>\d+(?:\.\d*)?[eE][-+]?\d+(?![A-Za-z\d.]))"
    r"|(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<space>\s+)"
    r"|(?P<relation><=|>=|!=|[=<>])"
    r"|(?P<char>[+\-*/^_!',;:.()\[\]{}|&%$~?])"
)
_SINGLE_DIGIT_ARGS = frozenset({r"\frac", r"\dfrac", r"\tfrac", r"\cfrac", r"\binom", r"\sqrt"})
_TEXT_OPEN = frozenset(name for name in WRAPPERS if name.startswith("\\"))
_BARS = frozenset(opener for opener, closer in BRACKETS.items() if opener == closer)  # |x|, \vert x \vert
_OPEN_BRACKETS = {o: c for o, c in BRACKETS.items() if o not in _BARS and o not in ("(", "[")}  # \{, \lfloor ...
_CLOSERS = frozenset(_OPEN_BRACKETS.values())
_SEPARATOR_MACROS = frozenset(
    {r"\mid", r"\colon", r"\lor", r"\land", r"\vee", r"\wedge", r"\dots", r"\ldots", r"\cdots", r"\approx"}
    | {r"\simeq", r"\sim", r"\thickapprox"}
)
_OPERATOR_MACROS = frozenset(
    {r"\times", r"\cdot", r"\div", r"\pm", r"\mp", r"\cup", r"\cap", r"\setminus", r"\mod", r"\bmod", r"\circ"}
)
_POSTFIX_MACROS = frozenset({r"\prime", r"\degree", r"\%", r"\circ"})
_GAP_MACROS = frozenset({r"\(", r"\)", r"\[", r"\]", r"\$"})
_PREFIX_MACROS = frozenset({r"\sum", r"\prod", r"\int", r"\lim", r"\angle", r"\measuredangle", r"\triangle"})
_SYMBOLIC_MACROS = frozenset({r"\mathbb", r"\mathcal", r"\Bbb"})
_PLAIN_FUNCTIONS = frozenset(name for name in FUNCTIONS if not name.startswith("\\"))
_PLAIN_CONSTANTS = frozenset(name for name in CONSTANTS if not name.startswith("\\"))
_WORD_SEPARATORS = frozenset(name for name in SEPARATORS if re.fullmatch(r"[a-z]+", name))
_PLAIN_NUMBER = re.compile(
    r"\s*[-+]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+|\\[dt]?frac\{\d+\}\{\d+\}|\d+\s*/\s*\d+)\s*%?\s*"
)
_MAX_CHARS = 4096  # the front end runs after the length screen; this only bounds direct callers


@dataclass(frozen=True)
class _Tok:
    kind: str  # rows, macro, escaped, sci, number, word, space, relation, char
    text: str
    start: int


def _lex(text: str) -> list[_Tok]:
    r"""Tokens in order; an unbraced argument of ``\frac``/``\sqrt``/``\binom`` is one digit (``\frac12``)."""
    out: list[_Tok] = []
    pos, single_digits = 0, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            raise Unparseable(f"unsupported character {ch!r} in an answer")
        kind, value = m.lastgroup, m.group()
        if single_digits and kind in ("number", "sci") and value[0].isdigit():
            out.append(_Tok("number", value[0], pos))
            pos += 1
            single_digits -= 1
            continue
        if kind in ("macro", "escaped") and value not in KNOWN_MACROS and value not in SPACING:
            raise Unparseable(f"unsupported notation: {value}")
        if kind == "macro" and value in _SINGLE_DIGIT_ARGS:
            single_digits = ARGUMENT_MACROS.get(value, FUNCTIONS.get(value, 0))
        elif kind != "space":
            single_digits = 0
        out.append(_Tok(kind, value, pos))
        pos = m.end()
    return out


def lex(text: str) -> list[tuple[str, str]]:
    r"""The answer's tokens as ``(kind, text)`` pairs, for readers of a narrower grammar over the same vocabulary
    (``rewards.math.written_values``, ``rewards.math.restatement``). Kinds: rows, macro, escaped, sci, number, word,
    space, relation, char.

    >>> lex(r"\frac12\pi")
    [('macro', '\\frac'), ('number', '1'), ('number', '2'), ('macro', '\\pi')]
    """
    if len(text) > _MAX_CHARS:
        raise Unparseable(f"answer longer than {_MAX_CHARS} characters")
    return [(tok.kind, tok.text) for tok in _lex(text)]


# ---- factors -------------------------------------------------------------------------------------------


@dataclass
class _Factor:
    kind: str  # numeral, sci, fraction, function, bracket, name, constant, group
    numeric: bool  # holds no name or constant
    start: int
    end: int
    integer: bool = False  # a bare whole numeral (a mixed number's whole part, a coefficient)
    proper: bool = False  # a fraction of two digit numerals, numerator below denominator
    bare: bool = False  # a bracket around one number and nothing else
    scripted: bool = False  # carries an exponent, subscript or postfix (x^2, 3!, 5\%)
    unit: bool = False  # a word that is a unit
    grouped: bool = False  # digits in groups of three after a narrow gap (1\,000, 12 345): one number
    digits: bool = False  # a fraction of two whole numerals (\frac{1}{2}): a coefficient, like a numeral
    radical: bool = False  # \sqrt{...} or \sqrt[n]{...} with its braced radicand
    percent: bool = False  # its only script is a percent sign (12\frac{1}{2}\%)
    mixed: bool = False  # the fraction of a mixed number (the 1/3 of 2\frac{1}{3}): no coefficient of more


@dataclass
class Reading:
    """What the front end saw: names or constants (``names``), functions or radicals (``functions``)."""

    names: bool = False
    functions: bool = False


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _lex(text)
        self.i = 0
        self.reading = Reading()
        self.bars = _bar_roles(self.toks)

    # -- helpers
    def peek(self, skip_space: bool = True) -> _Tok | None:
        j = self.i
        while skip_space and j < len(self.toks) and self.toks[j].kind == "space":
            j += 1
        return self.toks[j] if j < len(self.toks) else None

    def skip_space(self) -> None:
        while self.i < len(self.toks) and self.toks[self.i].kind == "space":
            self.i += 1

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def end_pos(self) -> int:
        if self.i == 0:
            return 0
        tok = self.toks[self.i - 1]
        return tok.start + len(tok.text)

    # -- groups
    def group(self) -> tuple[bool, list]:
        """A braced group ``{...}`` or one token, read as its own sequence: (numeric, items)."""
        self.skip_space()
        tok = self.peek()
        if tok is None:
            raise Unparseable("a macro without its argument")
        if tok.text == "{":
            self.take()
            items = self.sequence(closer="}")
            return all(f.numeric for f in items if isinstance(f, _Factor)), items
        factor = self.atom()
        if factor is None:
            raise Unparseable(f"a macro without its argument (got {tok.text!r})")
        if factor.kind == "numeral" and len(self.text[factor.start : factor.end]) > 1:
            raise Unparseable("an unbraced argument of several digits (\\frac{1}23): ambiguous")
        return factor.numeric, [factor]

    def raw_group(self) -> None:
        """Skip ``{name}`` (an environment's name, a column spec, an ``\\hspace`` length) without reading it."""
        self.skip_space()
        if self.peek() is not None and self.peek().text == "{":
            self.take()
            depth = 1
            while self.i < len(self.toks) and depth:
                t = self.take().text
                depth += 1 if t == "{" else -1 if t == "}" else 0
            if depth:
                raise Unparseable("unbalanced braces")

    # -- one factor (with its scripts), or None when the next token does not start one
    def atom(self) -> _Factor | None:
        self.skip_space()
        while (tok := self.peek()) is not None and (tok.text in MODIFIERS or SPACING.get(tok.text) is False):
            self.take()  # \sin\left(x\right), \sin\,x: what follows is still the operand
            if (
                tok.text in (r"\left", r"\right", r"\big", r"\Big")
                and self.peek(False)
                and self.peek(False).text == "."
            ):
                self.take()
            self.skip_space()
        tok = self.peek()
        if tok is None:
            return None
        start = tok.start
        kind, text = tok.kind, tok.text
        if kind == "number":
            self.take()
            return _Factor("numeral", True, start, self.end_pos(), integer="." not in text)
        if kind == "sci":
            self.take()
            return _Factor("sci", True, start, self.end_pos())
        if kind == "word":
            return self.word()
        if kind in ("macro", "escaped"):
            return self.macro()
        if text in ("(", "["):
            return self.bracket(text)
        if text == "|" and self.bar_opens():
            return self.bracket("|")
        return None

    def word(self) -> _Factor | None:
        tok = self.peek()
        if tok.text in _WORD_SEPARATORS:
            return None
        self.take()
        start = tok.start
        if tok.text in _PLAIN_FUNCTIONS:
            return self.apply(start, arguments=0)
        self.reading.names = True
        kind = "constant" if tok.text in _PLAIN_CONSTANTS else "name"
        return _Factor(kind, False, start, self.end_pos(), unit=tok.text in UNITS)

    def macro(self) -> _Factor | None:
        tok = self.peek()
        name, start = tok.text, tok.start
        if name in _OPEN_BRACKETS:
            return self.bracket(name)
        if name in _BARS and self.bar_opens():
            return self.bracket(name)
        if name in FUNCTIONS:
            self.take()
            return self.apply(start, arguments=FUNCTIONS[name], radical=name == r"\sqrt")
        if name in _PREFIX_MACROS:
            self.take()
            return self.apply(start, arguments=0, always_symbolic=name in (r"\angle", r"\measuredangle", r"\triangle"))
        if name in ARGUMENT_MACROS:
            self.take()
            numerics, whole = [], []
            for _ in range(ARGUMENT_MACROS[name]):
                numeric, items = self.group()
                numerics.append(numeric)
                one = items[0] if len(items) == 1 and isinstance(items[0], _Factor) else None
                plain = one is not None and one.kind == "numeral" and one.integer and not one.scripted
                whole.append(int(self.text[one.start : one.end]) if plain else None)
            if name in _SYMBOLIC_MACROS:
                self.reading.names = True
                return _Factor("name", False, start, self.end_pos())
            fraction = name in (r"\frac", r"\dfrac", r"\tfrac", r"\cfrac") and None not in whole
            proper = fraction and 0 < whole[0] < whole[1]
            return _Factor("fraction", all(numerics), start, self.end_pos(), proper=proper, digits=fraction)
        if name in CONSTANTS:
            self.take()
            self.reading.names = True
            return _Factor("constant", False, start, self.end_pos())
        if name in _TEXT_OPEN or name in (r"\begin", r"\end") or name in _SEPARATOR_MACROS:
            return None
        if name in _OPERATOR_MACROS or name in RELATIONS or name in MODIFIERS or name in SPACING:
            return None
        if name in _GAP_MACROS or name in _POSTFIX_MACROS or name in _CLOSERS or name in (r"\pmod",):
            return None
        if name.startswith("\\") and name[1:].isalpha():  # Greek letters, \ell, \R: a name
            self.take()
            self.reading.names = True
            return _Factor("name", False, start, self.end_pos())
        return None

    def apply(self, start: int, arguments: int, radical: bool = False, always_symbolic: bool = False) -> _Factor:
        r"""A function or radical and what it applies to: ``\sqrt[3]{8}``, ``\sin^2 x``, ``\log_2 8``, ``sqrt(2)``."""
        self.reading.functions = True
        self.scripts()
        if radical and self.peek() is not None and self.peek().text == "[":
            self.take()
            self.sequence(closer="]")
        numeric = True
        for _ in range(arguments):
            arg_numeric, _ = self.group()
            numeric = numeric and arg_numeric
        if arguments == 0 or (arguments == 1 and not radical):  # \sin x, \operatorname{lcm}(4, 6)
            operand = self.factor()
            if operand is None:  # a function's name alone (f = \sin): a name, not a value
                self.reading.names = True
                return _Factor("name", False, start, self.end_pos())
            numeric = numeric and operand.numeric
        if always_symbolic:
            numeric = False
        return _Factor("function", numeric, start, self.end_pos(), radical=radical)

    def bar_opens(self) -> bool:
        """Whether the bar here opens an absolute value (another bar closes it in the same group)."""
        return self.bars.get(self.i) == "open"

    def bracket(self, opener: str) -> _Factor:
        tok = self.take()
        start = tok.start
        if opener in _BARS:
            closer = "bar"
        elif opener in ("(", "["):
            closer = "round"
        else:
            closer = _OPEN_BRACKETS[opener]
        items = self.sequence(closer=closer)
        factors = [f for f in items if isinstance(f, _Factor)]
        ops = [x for x in items if not isinstance(x, _Factor)]
        numeric = all(f.numeric for f in factors)
        bare = len(factors) == 1 and factors[0].numeric and all(op in ("+", "-") for op in ops)
        bare = bare and (not ops or items[0] in ("+", "-"))
        return _Factor("bracket", numeric, start, self.end_pos(), bare=bare)

    def scripts(self) -> bool:
        """Exponents, subscripts and postfix marks after a factor (``^{2}``, ``_1``, ``!``, ``'``, ``\\%``)."""
        found = False
        while (tok := self.peek(skip_space=False)) is not None:
            if tok.text in ("^", "_"):
                self.take()
                self.skip_space()
                nxt = self.peek()
                if nxt is not None and nxt.text in ("-", "+"):
                    self.take()
                if nxt is not None and nxt.kind in ("macro", "escaped") and nxt.text in _POSTFIX_MACROS:
                    self.take()  # ^\circ, ^\prime
                elif self.peek() is not None and self.peek().text == "{":
                    self.group()
                else:
                    if self.atom() is None:
                        raise Unparseable(f"{tok.text} without its argument")
                found = True
            elif tok.text in ("!", "'", "%") or tok.text in _POSTFIX_MACROS:
                nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
                if tok.text == "!" and nxt is not None and nxt.text == "=":
                    break
                self.take()
                found = True
            else:
                break
        return found

    def factor(self) -> _Factor | None:
        f = self.atom()
        if f is None:
            return None
        if f.kind == "numeral" and self.peek(skip_space=False) is not None:
            nxt = self.peek(skip_space=False)
            decimal = "." in self.text[f.start : f.end]
            if nxt.text == r"\overline" or (nxt.text == r"\bar" and decimal):  # 0.\overline{3}, 0.\bar{3}: one number
                self.take()
                self.group()
                f.integer = False
                f.end = self.end_pos()
        first = self.i
        if self.scripts():
            f.scripted = True
            f.percent = all(t.kind == "space" or t.text in ("%", r"\%") for t in self.toks[first : self.i])
            f.end = self.end_pos()
        return f

    # -- a sequence of factors and operators up to ``closer``
    def sequence(self, closer: str | None) -> list:
        items: list = []
        wrappers: list[str] = []
        last: _Factor | None = None
        gap = ""  # "", "narrow" or "wide": what stands between ``last`` and the next token
        while self.i < len(self.toks):
            tok = self.toks[self.i]
            text, kind = tok.text, tok.kind
            if kind == "space":
                self.i += 1
                gap = "wide" if "\n" in text or "\r" in text else (gap or "narrow")
                continue
            if text in _GAP_MACROS or text == "$" or text == "~" or text in SPACING or text == ".":
                self.i += 1
                if text == r"\hspace":
                    if self.peek(skip_space=False) is not None and self.peek(skip_space=False).text == "*":
                        self.i += 1
                    self.raw_group()
                if SPACING.get(text):
                    gap = "wide"
                elif text != "." or gap:
                    gap = gap or "narrow"
                continue
            if text in MODIFIERS:
                self.i += 1
                if text in (r"\left", r"\right") and self.peek(skip_space=False) is not None:
                    if self.peek(skip_space=False).text == ".":
                        self.i += 1
                continue
            if wrappers and text == "}":
                self.i += 1
                wrappers.pop()
                continue
            if closer is not None and self._closes(tok, closer):
                self.i += 1
                return items
            if text in _TEXT_OPEN or text == "{":  # a wrapper: what it holds stands where it stands
                self.i += 1
                if text != "{":
                    self.skip_space()
                    if self.peek() is None or self.peek().text != "{":
                        raise Unparseable(f"{text} without its braced argument")
                    self.i += 1
                wrappers.append("}")
                continue
            if text in (r"\begin", r"\end"):
                self.i += 1
                env_start = self.i
                self.raw_group()
                if text == r"\begin" and "array" in "".join(t.text for t in self.toks[env_start : self.i]):
                    self.raw_group()
                items.append(",")
                last, gap = None, ""
                continue
            if kind == "rows" or text in ("&", ",", ";", ":", "?") or text in _SEPARATOR_MACROS or self._lone_bar():
                self.i += 1
                items.append(",")
                last, gap = None, ""
                continue
            if kind == "word" and text in _WORD_SEPARATORS:
                self.i += 1
                items.append(",")
                last, gap = None, ""
                continue
            if kind == "relation" or text in RELATIONS:
                self.i += 1
                items.append("=")
                last, gap = None, ""
                continue
            if text in ("+", "-", "*", "/") or text in _OPERATOR_MACROS or text == r"\pmod":
                if last is not None and gap == "wide" and text in ("+", "-"):
                    self._refuse_wide(last)
                self.i += 1
                items.append("+" if text in ("+", r"\pm", r"\mp") else "-" if text == "-" else text)
                last, gap = None, ""
                continue
            if text in ("^", "_", "!", "'", "%") or text in _POSTFIX_MACROS:
                self.i += 1  # a script or mark with nothing before it: read, not a value
                if text in ("^", "_"):
                    self.group()
                continue
            if text in (")", "]", "}") or text in _CLOSERS or (text in _BARS and not self.bar_opens()):
                raise Unparseable(f"unbalanced brackets ({text!r} closes nothing)")
            factor = self.factor()
            if factor is None:
                raise Unparseable(f"unsupported notation: {text}")
            if last is not None and gap == "narrow" and self._thousands(last, factor):
                last.end, last.grouped = factor.end, True  # 1\,000: one number (the number rules decide)
                gap = ""
                continue
            if last is not None:
                self._check_pair(last, factor, gap, items)
            items.append(factor)
            last, gap = factor, ""
        if closer is not None:
            raise Unparseable("unbalanced brackets")
        if wrappers:
            raise Unparseable("unbalanced braces")
        return items

    def _closes(self, tok: _Tok, closer: str) -> bool:
        if closer == "round":
            return tok.text in (")", "]")
        if closer == "bar":
            return self.bars.get(self.i) == "close"
        return tok.text == closer

    def _lone_bar(self) -> bool:
        """A bar that pairs with none (``\\{x | x > 0\\}``): a separator, like ``\\mid``."""
        return self.toks[self.i].text in _BARS and self.i not in self.bars

    def _thousands(self, left: _Factor, right: _Factor) -> bool:
        if left.kind != "numeral" or right.kind != "numeral" or left.scripted or right.scripted:
            return False
        digits = self.text[right.start : right.end]
        return left.integer and (left.grouped or left.end - left.start <= 3) and len(digits) == 3 and right.integer

    # -- the rule
    def _refuse(self, left: _Factor, right: _Factor, why: str) -> None:
        a = self.text[left.start : left.end].strip()
        b = self.text[right.start : right.end].strip()
        raise Unparseable(f"two values side by side ({a!r} and {b!r}): {why}")

    def _refuse_wide(self, left: _Factor) -> None:
        a = self.text[left.start : left.end].strip()
        raise Unparseable(f"a second value after a wide gap (after {a!r}): two answers, not one")

    def _check_pair(self, left: _Factor, right: _Factor, gap: str, items: list) -> None:
        if gap == "wide":
            if right.unit:
                return
            self._refuse_wide(left)
        if left.kind == "sci" or right.kind == "sci":
            self._refuse(left, right, "a number in scientific notation stands alone")
        plain = left.kind == "numeral" and not left.scripted
        if right.kind == "fraction":  # after any value, a fraction is a second value unless it ends a mixed number
            if plain and left.integer and right.proper and (not right.scripted or right.percent):
                right.mixed = True
                return  # 2\frac{1}{3}, 12\frac{1}{2}\%
            self._refuse(left, right, "a fraction after a value is a second value, not a product")
        if not right.numeric:  # a name, a constant or an expression holding one: 2x, \pi r, (x+1)(x-1)
            return
        if not left.numeric:  # a symbol, then numbers only
            if right.kind == "function" or (right.kind == "bracket" and (left.kind == "name" or not right.bare)):
                return  # x\sqrt{2}, f(3), (x+1)(3-2)
            self._refuse(left, right, "a number after a symbol is a second value, not a product")
        # a coefficient: a numeral, or a fraction of two numerals that does not end a mixed number
        coefficient = plain or (left.kind == "fraction" and left.digits and not left.scripted and not left.mixed)
        if coefficient and right.kind == "function" and not right.scripted:
            return  # 3\sqrt{2}, 2\sin 30, \frac{1}{2}\sqrt{3}
        if coefficient and right.kind == "bracket" and not right.bare:
            return  # 2(3+1), \frac{1}{2}(1+\sqrt{5})
        if left.radical and not left.scripted and right.kind == "bracket" and not right.bare:
            return  # \sqrt{2}(1+\sqrt{3}): a radical times a sum
        if left.kind == "bracket" and not left.bare and not left.scripted and right.radical and not right.scripted:
            return  # (1+\sqrt{3})\sqrt{2}
        if (
            plain
            and left.integer
            and right.kind == "numeral"
            and right.integer
            and gap
            and self._slash_mixed(left, right, items)
        ):
            return  # 2 1/3, as a value of its own
        self._refuse(left, right, "two numbers side by side are two answers, never their product")

    def _slash_mixed(self, left: _Factor, right: _Factor, items: list) -> bool:
        """``2 1/3`` standing alone: a boundary before the whole number, ``/``, a larger whole number, a boundary."""
        if right.scripted or (items and items[-1] is not left):
            return False
        before = items[-2] if len(items) >= 2 else ","
        if isinstance(before, _Factor) or before not in (",", "=", "+", "-"):
            return False
        if before in ("+", "-") and len(items) >= 3 and items[-3] not in (",", "="):
            return False
        j = self.i
        toks = [t for t in self.toks[j : j + 6] if t.kind != "space"]
        if len(toks) < 2 or toks[0].text != "/" or toks[1].kind != "number" or "." in toks[1].text:
            return False
        after = toks[2].text if len(toks) > 2 else ""
        numerator = int(self.text[right.start : right.end])
        return 0 < numerator < int(toks[1].text) and after in ("", ",", ";", "=", ")", "]", r"\}", "&", r"\\")


def _bar_roles(toks: list[_Tok]) -> dict[int, str]:
    """Which bars open and which close an absolute value: bars pair in order within one bracket level, and
    an odd one out (``\\{x | x > 0\\}``) pairs with none."""
    roles: dict[int, str] = {}
    stack: list[list[int]] = [[]]

    def pair(bars: list[int]) -> None:
        for a, b in zip(bars[0 : len(bars) - 1 : 2], bars[1::2]):
            roles[a], roles[b] = "open", "close"

    for k, tok in enumerate(toks):
        if tok.text in ("(", "[", "{") or tok.text in _OPEN_BRACKETS:
            stack.append([])
        elif tok.text in (")", "]", "}") or tok.text in _CLOSERS:
            if len(stack) > 1:
                pair(stack.pop())
        elif tok.text in _BARS:
            stack[-1].append(k)
    for bars in stack:
        if len(bars) % 2 == 0:
            pair(bars)
    return roles


def read(text: str) -> Reading:
    r"""Read ``text`` on tokens and refuse what the grammar does not allow; say what it holds.

    >>> read(r"2\pi + 3\sqrt{2}\, x").functions
    True
    >>> read(r"\text{9}\text{3}")
    Traceback (most recent call last):
    ...
    rewards.math.answer_tree.Unparseable: two values side by side ('9' and '3'): two numbers side by side are two answers, never their product
    """
    if len(text) > _MAX_CHARS:
        raise Unparseable(f"answer longer than {_MAX_CHARS} characters")
    if _PLAIN_NUMBER.fullmatch(text):  # the fast path: one numeral, nothing to decide
        return Reading()
    parser = _Parser(text)
    parser.sequence(closer=None)
    return parser.reading
