r"""Write a built object as text, in one of many spellings a model or a dataset uses.

A ``Style`` is drawn per rendering (candidate and reference draw their own): LaTeX or plain, ``\frac`` /
``\dfrac`` / ``\tfrac`` / ``\frac12``, ``\cdot`` / ``\times`` / ``×`` / juxtaposition, ``-`` or ``−``,
``\left(``, spacing macros (``\,`` ``\;`` ``\quad`` ``\!``) and newlines around operators, unicode ``√``,
``\boxed{}``, and every backslash doubled. Spacing goes only where it cannot join two values (around a
binary operator, inside brackets); putting two values side by side is a wrong twin, written on purpose
in ``pairs.py``.

The spellings the normalizer knows come from its own tables (``rewards.math.vocabulary``: every gap of
``SPACING``, the boxes and math delimiters of ``WRAPPERS``; ``pairs.py`` takes wrappers, modifiers, separators
and units from it too), so a spelling added there is rendered, and attacked, without an edit here. Only the
tables of spellings are shared: the oracle reads meanings from its own objects, never through the verifier's
parser.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from rewards.math import vocabulary
from tests.rewards.math.oracle.objects import E, Interval


def gap_text(spelling: str) -> str:
    """A gap of ``vocabulary.SPACING`` as written before anything (a macro ending in a letter needs a space after
    it, ``\\hspace`` a length)."""
    if spelling == r"\hspace":
        return spelling + "{1em}"
    return spelling + " " if spelling[-1:].isalpha() and spelling.startswith("\\") else spelling


SPACES = ["", *(gap_text(g) for g in vocabulary.SPACING)]
WIDE_GAPS = [gap_text(g) for g, wide in vocabulary.SPACING.items() if wide]
NARROW_GAPS = [gap_text(g) for g, wide in vocabulary.SPACING.items() if not wide]
# value wrappers whose content is math, not text: around a whole answer they keep its value (``\boxed{x+1}``)
MATH_WRAPPERS = [pair for name, pair in vocabulary.WRAPPERS.items() if name not in vocabulary.TEXT_MACROS]
BOXES = [pair for name, pair in vocabulary.WRAPPERS.items() if "box" in name and name not in vocabulary.TEXT_MACROS]
DELIMITERS = [pair for name, pair in vocabulary.WRAPPERS.items() if not name[1:2].isalpha() and name != "{"]


@dataclass
class Style:
    latex: bool
    frac: str
    times: str
    minus: str
    left_right: bool
    spaces: list[str]
    unicode_sqrt: bool
    rng: random.Random

    def gap(self) -> str:
        return self.rng.choice(self.spaces)


def draw_style(rng: random.Random, latex: bool | None = None) -> Style:
    latex = rng.random() < 0.7 if latex is None else latex
    if latex:
        spaces = rng.choice([[""], [" "], SPACES])
        times = rng.choice([r" \cdot ", r"\times ", " × ", "*", "JUX"])
        return Style(
            True,
            rng.choice([r"\frac", r"\dfrac", r"\tfrac"]),
            times,
            rng.choice(["-", "-", "−"]),
            rng.random() < 0.3,
            spaces,
            rng.random() < 0.15,
            rng,
        )
    return Style(
        False,
        "/",
        rng.choice(["*", " * ", "JUX"]),
        rng.choice(["-", "-", "−"]),
        False,
        ["", " "],
        rng.random() < 0.15,
        rng,
    )


def _paren(s: Style, text: str) -> str:
    return rf"\left({text}\right)" if s.left_right else f"({text})"


PREC = {"add": 1, "neg": 2, "mul": 2, "div": 2, "pow": 4}


def _prec(tree: E) -> int:
    if tree.op == "num":
        return 2 if tree.value < 0 else 3 if tree.value.denominator != 1 else 5
    if tree.op == "mul" and tree.args and tree.args[0].op == "num" and tree.args[0].value < 0:
        return 2
    return PREC.get(tree.op, 5)


def _wrap(s: Style, tree: E, at_least: int) -> str:
    text = expr(s, tree)
    return _paren(s, text) if _prec(tree) < at_least else text


def _fraction(s: Style, value: Fraction) -> str:
    sign = s.minus if value < 0 else ""
    p, q = abs(value.numerator), value.denominator
    if q == 1:
        return f"{sign}{p}"
    if not s.latex:
        return f"{sign}{p}/{q}"
    if p < 10 and q < 10 and s.rng.random() < 0.3:
        return f"{sign}{s.frac}{p}{q}"
    return f"{sign}{s.frac}{{{p}}}{{{q}}}"


def _starts_juxtaposable(text: str) -> bool:
    return text[:1].isalpha() or text.startswith(("\\sqrt", "\\pi", "\\sin", "\\cos", "\\left(", "(", "√", "\\mathrm"))


def expr(s: Style, tree: E) -> str:
    op, a = tree.op, tree.args
    g = s.gap
    if op == "num":
        return _fraction(s, tree.value)
    if op == "var":
        return tree.value
    if op == "pi":
        return r"\pi" if s.latex else s.rng.choice(["pi", "π"])
    if op == "e":
        return "e"
    if op == "i":
        return "i"
    if op == "add":
        out = _wrap(s, a[0], 1)
        for term in a[1:]:
            if term.op == "neg":
                out += f"{g()}{s.minus}{g()}{_wrap(s, term.args[0], 2)}"
            elif term.op == "num" and term.value < 0:
                out += f"{g()}{s.minus}{g()}{_fraction(s, -term.value)}"
            elif term.op == "mul" and term.args[0].op == "num" and term.args[0].value < 0:
                k = -term.args[0].value
                rest = term.args[1:] if k == 1 else (E("num", value=k), *term.args[1:])
                positive = rest[0] if len(rest) == 1 else E("mul", rest)
                out += f"{g()}{s.minus}{g()}{_wrap(s, positive, 2)}"
            else:
                out += f"{g()}+{g()}{_wrap(s, term, 2)}"
        return out
    if op == "neg":
        return f"{s.minus}{_wrap(s, a[0], 3)}"
    if op == "mul":
        parts = [_wrap(s, f, 3) for f in a]
        out = parts[0]
        for left, right in zip(a, parts[1:]):
            jux = s.times == "JUX" and left.op == "num" and left.value.denominator == 1 and _starts_juxtaposable(right)
            if s.times == "JUX" and not jux:
                out += r" \cdot " if s.latex else "*"
            else:
                out += "" if jux else (s.times if s.latex or "\\" not in s.times else "*")
            out += right
        return out
    if op == "div":
        if s.latex:
            return f"{s.frac}{{{expr(s, a[0])}}}{{{expr(s, a[1])}}}"
        return f"{_wrap(s, a[0], 3)}/{_wrap(s, a[1], 5)}"
    if op == "pow":
        exponent = int(a[1].value)
        base = _wrap(s, a[0], 5)
        if s.latex:
            return (
                f"{base}^{{{exponent}}}"
                if (exponent < 0 or exponent > 9 or s.rng.random() < 0.5)
                else f"{base}^{exponent}"
            )
        return f"{base}^{exponent}" if exponent >= 0 else f"{base}^({exponent})"
    if op == "sqrt":
        inner = expr(s, a[0])
        if s.unicode_sqrt:
            return f"√({inner})" if not inner.isdigit() else f"√{{{inner}}}" if s.latex else f"√({inner})"
        return rf"\sqrt{{{inner}}}" if s.latex else f"sqrt({inner})"
    if op in ("sin", "cos", "tan"):
        inner = expr(s, a[0])
        return rf"\{op}{_paren(s, inner)}" if s.latex else f"{op}({inner})"
    if op == "exp":
        return f"e^{{{expr(s, a[0])}}}" if s.latex else f"e^({expr(s, a[0])})"
    if op == "deg":
        return rf"\{tree.value}({expr(s, a[0])}^\circ)" if s.latex else f"{tree.value}({expr(s, a[0])}°)"
    if op == "ln":
        inner = expr(s, a[0])
        if not s.latex:
            return f"ln({inner})"
        return rf"\ln {inner}" if inner.isdigit() and s.rng.random() < 0.5 else rf"\ln{_paren(s, inner)}"
    if op == "log":  # a base is written as a subscript in any style (plain log(x, b) is another convention)
        inner = expr(s, a[0])
        return (
            rf"\log_{{{tree.value}}} {inner}"
            if inner.isdigit() and s.rng.random() < 0.5
            else (rf"\log_{{{tree.value}}}{_paren(s, inner)}")
        )
    if op == "root":
        inner = expr(s, a[0])
        if not s.latex and tree.value == 3:
            return f"cbrt({inner})"
        return rf"\sqrt[{tree.value}]{{{inner}}}"
    raise ValueError(op)


def finish(s: Style, text: str, may_box: bool = True) -> str:
    """Whole-answer spellings: a box, math delimiters (both from the normalizer's ``WRAPPERS``), doubled
    backslashes."""
    if may_box and s.latex and s.rng.random() < 0.1:
        before, after = s.rng.choice(BOXES)
        text = f"{before}{text}{after}"
    if s.latex and s.rng.random() < 0.05:
        before, after = s.rng.choice(DELIMITERS)
        text = f"{before}{text}{after}"
    if s.latex and "\\" in text and s.rng.random() < 0.08:
        text = text.replace("\\", "\\\\")
    return text


# ---------------------------------------------------------------- sets of reals


def _end(s: Style, end: Fraction | None, sign: int) -> str:
    if end is None:
        inf = r"\infty" if s.latex else s.rng.choice(["infinity", "∞"])
        return inf if sign > 0 else f"{s.minus}{inf}"
    return _fraction(s, end)


def interval_text(s: Style, piece: Interval) -> str:
    o, c = ("[" if piece.closed_low else "("), ("]" if piece.closed_high else ")")
    if s.left_right:
        o, c = rf"\left{o}", rf"\right{c}"
    return f"{o}{_end(s, piece.low, -1)},{s.gap()}{_end(s, piece.high, 1)}{c}"


def union_text(s: Style, pieces: list[Interval]) -> str:
    cup = r" \cup " if s.latex else s.rng.choice([" ∪ ", " U "])
    return cup.join(interval_text(s, p) for p in pieces)


def _le(s: Style, closed: bool) -> str:
    if s.latex:
        return s.rng.choice([r" \le ", r" \leq ", r"\leqslant "]) if closed else " < "
    return s.rng.choice([" <= ", "≤"]) if closed else " < "


def inequality_text(s: Style, piece: Interval, name: str, compound: str | None = None) -> str:
    """One piece as inequalities in ``name``; ``compound`` writes a bounded piece as two joined by that word."""
    low, high = piece.low, piece.high
    if low is None and high is None:
        return rf"{name} \in \mathbb{{R}}" if s.latex else f"-infinity < {name} < infinity"
    if low is None:
        if s.rng.random() < 0.2:
            flipped = _le(s, piece.closed_high).replace("<", ">").replace("le", "ge").replace("≤", "≥")
            return f"{_end(s, high, 1)}{flipped}{name}"
        return f"{name}{_le(s, piece.closed_high)}{_end(s, high, 1)}"
    if high is None:
        op = _le(s, piece.closed_low).replace("<", ">").replace("le", "ge").replace("≤", "≥")
        return f"{name}{op}{_end(s, low, -1)}"
    if compound:
        lower = f"{name}{_le(s, piece.closed_low).replace('<', '>').replace('le', 'ge').replace('≤', '≥')}{_end(s, low, -1)}"
        return f"{lower}{compound}{name}{_le(s, piece.closed_high)}{_end(s, high, 1)}"
    return f"{_end(s, low, -1)}{_le(s, piece.closed_low)}{name}{_le(s, piece.closed_high)}{_end(s, high, 1)}"


def or_word(s: Style) -> str:
    return s.rng.choice([r" \text{ or } ", r"\text{ or }", r" \quad\text{or}\quad ", r" \lor "]) if s.latex else " or "


def and_word(s: Style) -> str:
    return s.rng.choice([r" \text{ and } ", r" \land "]) if s.latex else " and "


def set_text(s: Style, items: list[str]) -> str:
    inner = f",{s.gap()}".join(items)
    if not s.latex:
        return "{" + inner + "}"
    return rf"\left\{{{inner}\right\}}" if s.left_right else rf"\{{{inner}\}}"
