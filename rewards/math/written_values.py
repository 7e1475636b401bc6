r"""Which exact answers may round to a decimal reference: a *written value*, never a computation.

Why: a decimal reference with two or more significant digits (``1.41``, ``27.5``, ``0.33``) may be an exact value
rounded, so an exact candidate that rounds to it is paid (``\sqrt{2}`` for ``1.41``). Round 5 opened that door to
any candidate holding a name, a constant or a function, and it paid computations and near misses:
``5.5 \times 5 \cdot e^{0}`` (a computation times a vacuous factor), ``\log_4 32`` and ``\sqrt{6.25}`` for ``2.5``,
``\sin^2 60^\circ`` for ``0.75``, ``\max(5.5 \times 5, 0)``, ``27.54 + 10^{-20}\pi`` for ``27.5`` (a near miss plus a
term below the precision). Listing those spellings would leave the next one open, so the door is a grammar on
the answer's tokens (the closed vocabulary of ``rewards.math.tokens``), and rules on each part's value:

* **Grammar** (nothing else is a written value): whole numerals (no decimal point: ``5.5`` in an exact form is a
  computation's operand), ``\pi`` and ``e``; a radical ``\sqrt{r}``, ``\sqrt[k]{r}``, ``sqrt(r)``, ``cbrt(r)`` of a
  whole number or a fraction; ``\ln n`` and ``\log_b n`` of whole numbers; ``\pi^k`` and ``e^k`` for a whole
  ``k`` other than 0 and 1; ``n^{p/q}`` (a radical); products (side by side, ``\cdot``, ``\times``, ``*``),
  ``\frac{A}{B}`` or ``A/B`` (nothing after the denominator), sums and differences, brackets. Names, decimals,
  scientific notation, trigonometric and other functions, powers of numerals (``10^{-20}``, ``1^{5}``), powers
  of anything else, and a sum in a denominator or a radicand are not written values.
* **Every part is needed** (checked on the value, exactly, with whole-number arithmetic): no factor of 1
  (``\cdot 1``, ``\frac{\pi}{\pi}``, ``\frac{A}{1}``: the same constant or radical twice in one product is
  refused, so nothing cancels); no two numerals multiplied (``2 \cdot 3\pi``, ``2(\frac{1}{2} + \sqrt{2})``); no
  fraction that reduces (``\frac{2\pi}{4}``, ``\frac{2}{\sqrt{2}}``); no radical of a perfect power
  (``\sqrt{6.25}``, ``\sqrt{\frac{25}{4}}``, ``\sqrt{4}``), no rational logarithm (``\log_4 32``); no two radicals in
  one product and at most one logarithm in the answer; no zero term and no like terms (``\sqrt{8} + \sqrt{2}``,
  ``1 + 2 + \sqrt{2}``), so nothing in it cancels or combines (a radical need not be simplified: ``\sqrt{8}``).
* **No term below the reference's precision**: in a sum, every term (after distributing a factor over a
  bracket or a numerator) must be at least one unit of the reference's last place (``10^{-N}`` for ``N``
  decimals): ``\frac{83}{3} + \frac{\pi}{1000000000}`` is a near miss with a negligible term, not a value.

The value then still has to round to the reference (``rewards.math.symbolic.rounds_to``, in a worker). This module
decides only whether the door is open. Plain Python (``fractions``, ``math``): it runs on the host, before any
worker, on inputs already bounded by the screen (whole numbers here are at most 12 digits, radicands and
logarithms' arguments at most 10^6, exponents and root indices at most 12).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from rewards.math.answer_tree import Unparseable
from rewards.math.tokens import lex
from rewards.math.vocabulary import MODIFIERS, SPACING

MAX_DIGITS = 12  # a whole numeral in a written value
MAX_RADICAND = 10**6  # a radicand's numerator and denominator, a logarithm's argument and base
MAX_EXPONENT = 12  # |k| in \pi^k, e^k; a root's index
MAX_TERMS = 6  # terms of the sum, after distributing


class NotWritten(ValueError):
    """The answer is not a written exact value; the message says which rule (shown in the verdict)."""


@dataclass(frozen=True)
class _Mono:
    """One term: ``coef * prod(atom ** exponent)``; ``size`` its absolute value (a float: only compared with the
    reference's precision). Atom keys: ``("pi",)``, ``("e",)``, ``("log",)``, ``("root", k, kernel)``, where the
    kernel is the radicand with every k-th power taken out (``\\sqrt{8}`` and ``\\sqrt{2}`` share one)."""

    coef: Fraction
    atoms: tuple
    size: float

    @property
    def keys(self) -> set:
        return {key for key, _ in self.atoms}


def _times(a: _Mono, b: _Mono) -> _Mono:
    if a.keys & b.keys:
        raise NotWritten("the same constant or radical twice in one product: a computation, not a written value")
    if abs(a.coef) != 1 and abs(b.coef) != 1:
        raise NotWritten(f"numbers multiplied ({a.coef} and {b.coef}): a computation, not a written value")
    atoms = tuple(sorted(a.atoms + b.atoms))
    if sum(key[0] == "root" for key, _ in atoms) > 1:
        raise NotWritten("two radicals multiplied: a computation, not a written value")
    return _Mono(a.coef * b.coef, atoms, a.size * b.size)


def _factor_small(n: int) -> dict[int, int]:
    """Prime exponents of ``0 < n <= MAX_RADICAND`` (trial division up to 1000)."""
    found: dict[int, int] = {}
    p = 2
    while p * p <= n:
        while n % p == 0:
            found[p] = found.get(p, 0) + 1
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        found[n] = found.get(n, 0) + 1
    return found


def _radical(radicand: Fraction, index: int) -> _Mono:
    r"""``radicand ** (1/index)`` as one atom; refused when its value is rational (``\sqrt{4}``, ``\sqrt{6.25}``)."""
    if radicand <= 0:
        raise NotWritten("a root of a number that is not positive")
    if not 2 <= index <= MAX_EXPONENT:
        raise NotWritten(f"a root of index {index}")
    if max(radicand.numerator, radicand.denominator) > MAX_RADICAND:
        raise NotWritten(f"a radicand beyond {MAX_RADICAND}")
    kernel = {p: e % index for p, e in _factor_small(radicand.numerator).items()}
    kernel.update({p: -e % index for p, e in _factor_small(radicand.denominator).items()})
    kernel = tuple(sorted((p, e) for p, e in kernel.items() if e))
    if not kernel:
        raise NotWritten(f"a root of a perfect power ({radicand}): a computation of a rational number")
    size = math.exp(math.log(radicand.numerator / radicand.denominator) / index)
    return _Mono(Fraction(1), ((("root", index, kernel), 1),), size)


def _logarithm(argument: int, base: int | None) -> _Mono:
    r"""``\ln n`` or ``\log_b n``; refused when the value is rational (``\log_4 32``, ``\log_2 8``, ``\ln 1``)."""
    if not 2 <= argument <= MAX_RADICAND or (base is not None and not 2 <= base <= MAX_RADICAND):
        raise NotWritten("a logarithm of a number outside 2 .. 10^6")
    if base is None:
        return _Mono(Fraction(1), ((("log",), 1),), math.log(argument))
    a, b = _factor_small(argument), _factor_small(base)
    if set(a) == set(b) and len({Fraction(a[p], b[p]) for p in a}) == 1:
        raise NotWritten(f"log base {base} of {argument} is rational: a computation, not a written value")
    return _Mono(Fraction(1), ((("log",), 1),), math.log(argument) / math.log(base))


def _exact_fraction(form: list[_Mono]) -> Fraction | None:
    """The rational number a form is when it is one numeral or fraction of numerals (no atoms, one term)."""
    if len(form) == 1 and not form[0].atoms:
        return form[0].coef
    return None


class _Reader:
    """Recursive descent over the answer's tokens (spacing and look-only modifiers dropped)."""

    def __init__(self, text: str) -> None:
        try:
            toks = lex(text)
        except Unparseable as exc:
            raise NotWritten(str(exc)) from None
        self.toks = [(k, t) for k, t in toks if k != "space" and t not in SPACING and t not in MODIFIERS]
        self.i = 0
        self.logs = 0

    def peek(self) -> str | None:
        return self.toks[self.i][1] if self.i < len(self.toks) else None

    def kind(self) -> str | None:
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        if self.i >= len(self.toks):
            raise NotWritten("the answer ends early")
        text = self.toks[self.i][1]
        if expected is not None and text != expected:
            raise NotWritten(f"'{expected}' expected, found '{text}'")
        self.i += 1
        return text

    # ---- sums
    def whole(self) -> list[_Mono]:
        form = self.sum()
        if self.peek() is not None:
            raise NotWritten(f"'{self.peek()}' is not part of a written value")
        return form

    def sum(self, closer: str | None = None) -> list[_Mono]:
        sign = -1 if self.peek() == "-" else 1
        if self.peek() == "-":
            self.take()
        terms = [_Mono(m.coef * sign, m.atoms, m.size) for m in self.product()]
        while self.peek() in ("+", "-"):
            sign = -1 if self.take() == "-" else 1
            if self.peek() in ("+", "-"):
                raise NotWritten("two signs in a row")
            terms += [_Mono(m.coef * sign, m.atoms, m.size) for m in self.product()]
        if closer is not None:
            self.take(closer)
        return terms

    # ---- products
    def product(self) -> list[_Mono]:
        factors = [self.factor()]
        while True:
            tok = self.peek()
            if tok in (r"\cdot", r"\times", "*"):
                self.take()
                factors.append(self.factor())
            elif tok == "/":
                self.take()
                result = _divide(_multiply(factors), self.factor())
                if self._starts_factor():
                    raise NotWritten("a factor after a slash's denominator: which is divided is not written")
                return result
            elif self._starts_factor():
                factors.append(self.factor())
            else:
                return _multiply(factors)

    def _starts_factor(self) -> bool:
        kind, tok = self.kind(), self.peek()
        if tok is None:
            return False
        return kind in ("number", "sci", "word", "macro") or tok in ("(", "{")

    # ---- factors
    def factor(self) -> list[_Mono]:
        base, written = self.atom()
        if self.peek() != "^":
            return base
        self.take()
        exponent = self.exponent()
        if written in ("pi", "e"):
            if exponent.denominator != 1 or exponent in (0, 1) or abs(exponent) > MAX_EXPONENT:
                raise NotWritten(f"{written} to the power {exponent}: not a written value")
            k = int(exponent)
            ((key, _),) = base[0].atoms
            return [_Mono(Fraction(1), ((key, k),), base[0].size ** k)]
        if written == "numeral":
            number = _exact_fraction(base)
            if exponent.denominator == 1 or number < 2:
                raise NotWritten("a power of numbers: a computation, not a written value")
            if exponent < 0 or exponent.numerator * len(str(number)) > 24:
                raise NotWritten(f"{number} to the power {exponent}: not a written value")
            return [_radical(Fraction(int(number) ** exponent.numerator), exponent.denominator)]
        raise NotWritten("a power of anything but pi, e or a whole number: a computation, not a written value")

    def exponent(self) -> Fraction:
        """``^2``, ``^{-1}``, ``^{\\frac{1}{3}}``, ``^{1/3}``, ``^-1``, ``^(-1)``: a whole number or a fraction of two."""
        closer = {"{": "}", "(": ")"}.get(self.peek() or "")
        braced = closer is not None
        if braced:
            self.take()
        sign = 1
        if self.peek() in ("-", "+"):
            sign = -1 if self.take() == "-" else 1
        bottom = 1
        if self.peek() == r"\frac":
            self.take()
            top, bottom = self._braced_whole(), self._braced_whole()
        else:
            top = self._whole_numeral(single_digit=not braced)
            if braced and self.peek() == "/":
                self.take()
                bottom = self._whole_numeral()
        if braced:
            self.take(closer)
        if bottom == 0 or (bottom != 1 and math.gcd(top, bottom) != 1):
            raise NotWritten("an exponent that is not a reduced fraction")
        return sign * Fraction(top, bottom)

    def _braced_whole(self) -> int:
        if self.peek() == "{":
            self.take()
            value = self._whole_numeral()
            self.take("}")
            return value
        return self._whole_numeral(single_digit=True)

    def _whole_numeral(self, single_digit: bool = False) -> int:
        if self.kind() != "number" or "." in (self.peek() or "."):
            raise NotWritten(f"a whole number expected, found '{self.peek()}'")
        text = self.take()
        if single_digit and len(text) > 1:
            raise NotWritten("an unbraced exponent of several digits: ambiguous")
        if len(text) > MAX_DIGITS:
            raise NotWritten(f"a numeral over {MAX_DIGITS} digits")
        return int(text)

    def atom(self) -> tuple[list[_Mono], str]:
        """One atom and what it is as a power's base: "pi", "e", "numeral" or "other"."""
        kind, tok = self.kind(), self.peek()
        if tok is None:
            raise NotWritten("the answer ends early")
        if kind == "number":
            if "." in tok:
                raise NotWritten(f"a decimal ({tok}) inside an exact form: a computation's operand, not a value")
            value = self._whole_numeral()
            if value == 0:
                raise NotWritten("a zero term or factor")
            return [_Mono(Fraction(value), (), float(value))], "numeral"
        if kind == "sci":
            raise NotWritten("scientific notation inside an exact form")
        if tok in (r"\pi", "pi"):
            self.take()
            return [_Mono(Fraction(1), ((("pi",), 1),), math.pi)], "pi"
        if tok == "e":
            self.take()
            return [_Mono(Fraction(1), ((("e",), 1),), math.e)], "e"
        if tok in ("(", "{"):
            self.take()
            return self.sum(closer=")" if tok == "(" else "}"), "other"
        if tok == r"\frac":
            self.take()
            numerator = self._argument()
            return _divide(numerator, self._argument()), "other"
        if tok in (r"\sqrt", "sqrt", "cbrt"):
            self.take()
            index = 3 if tok == "cbrt" else 2
            if tok == r"\sqrt" and self.peek() == "[":
                self.take()
                index = self._whole_numeral()
                self.take("]")
            radicand = _exact_fraction(self._argument(round_brackets=True))  # sqrt(2), √(2) as \sqrt(2)
            if radicand is None:
                raise NotWritten("a root of anything but a number: a computation, not a written value")
            return [_radical(radicand, index)], "other"
        if tok in (r"\ln", "ln", r"\log"):
            self.take()
            base = None
            if tok == r"\log":
                if self.peek() != "_":
                    raise NotWritten(r"\log without its base: which logarithm is not written")
                self.take()
                base = self._braced_whole()
            self.logs += 1
            if self.logs > 1:
                raise NotWritten("more than one logarithm: a computation, not a written value")
            bare = self.peek() not in ("{", "(")
            number = _exact_fraction(self._argument(round_brackets=True, bare=True))
            if number is None or number.denominator != 1:
                raise NotWritten("a logarithm of anything but a whole number")
            if bare and self._starts_factor():  # \ln 2\pi: ln(2) pi or ln(2 pi)? not written
                raise NotWritten("a factor right after an unbracketed logarithm's argument: ambiguous")
            return [_logarithm(int(number), base)], "other"
        raise NotWritten(f"'{tok}' is not part of a written value (a radical, pi, e, a logarithm, a fraction)")

    def _argument(self, round_brackets: bool = False, bare: bool = False) -> list[_Mono]:
        """A braced group (``{2}``), a parenthesized one (``(2)``, for plain ``sqrt(2)``, ``\\ln(2)``), an unbraced
        digit (``\\frac12``), or a bare numeral after ``\\ln``."""
        tok = self.peek()
        if tok == "{":
            self.take()
            return self.sum(closer="}")
        if round_brackets and tok == "(":
            self.take()
            return self.sum(closer=")")
        if self.kind() == "number" and "." not in tok and (bare or len(tok) == 1):
            value = self._whole_numeral()
            if value == 0:
                raise NotWritten("a zero term or factor")
            return [_Mono(Fraction(value), (), float(value))]
        raise NotWritten(f"an argument expected, found '{tok}'")


def _multiply(factors: list[list[_Mono]]) -> list[_Mono]:
    """The product of factors, distributed over at most one sum; a written factor of 1 is refused."""
    if len(factors) > 1 and any(len(f) == 1 and not f[0].atoms and abs(f[0].coef) == 1 for f in factors):
        raise NotWritten("a factor of 1: a computation, not a written value")
    if sum(len(f) > 1 for f in factors) > 1:
        raise NotWritten("two sums multiplied: a computation, not a written value")
    result = [_Mono(Fraction(1), (), 1.0)]
    for factor in factors:
        result = [_times(a, b) for a in result for b in factor]
    return result


def _divide(numerator: list[_Mono], denominator: list[_Mono]) -> list[_Mono]:
    if len(denominator) != 1:
        raise NotWritten("a sum in a denominator: a computation, not a written value")
    (den,) = denominator
    if den.coef.denominator != 1 or den.coef < 1:
        raise NotWritten("a denominator that is not a whole number times constants or a radical")
    if den.coef == 1 and not den.atoms:
        raise NotWritten("a division by 1: a computation, not a written value")
    if any(m.coef.denominator != 1 for m in numerator):
        raise NotWritten("a fraction inside a numerator: a computation, not a written value")
    common = int(den.coef)
    for key, _ in den.atoms:
        if key[0] == "root":
            common *= math.prod(p for p, _ in key[2])
    if math.gcd(common, *(m.coef.numerator for m in numerator)) != 1:
        raise NotWritten("a fraction that reduces: a computation, not a written value")
    inverse = _Mono(Fraction(1, int(den.coef)), tuple((key, -power) for key, power in den.atoms), 1 / den.size)
    out = []
    for m in numerator:
        if m.keys & den.keys:
            raise NotWritten("the same constant or radical above and below: a computation, not a written value")
        atoms = tuple(sorted(m.atoms + inverse.atoms))
        if sum(key[0] == "root" for key, _ in atoms) > 1:
            raise NotWritten("two radicals in one term: a computation, not a written value")
        out.append(_Mono(m.coef * inverse.coef, atoms, m.size * inverse.size))
    return out


def check(text: str, places: int) -> None:
    r"""Return if ``text`` is a written exact value that a reference rounded to ``places`` decimals may stand for;
    raise ``NotWritten`` (its message is the rule) otherwise.

    >>> check(r"\frac{1 + \sqrt{5}}{2}", 2)
    >>> check(r"5.5 \times 5 \cdot e^{0}", 1)
    Traceback (most recent call last):
    ...
    rewards.math.written_values.NotWritten: a decimal (5.5) inside an exact form: a computation's operand, not a value
    """
    reader = _Reader(text)
    form = reader.whole()
    if len(form) > MAX_TERMS:
        raise NotWritten(f"more than {MAX_TERMS} terms")
    signatures = [m.atoms for m in form]
    if len(set(signatures)) != len(signatures):
        raise NotWritten("terms that combine (like terms): a computation, not a written value")
    if not any(m.atoms for m in form):
        raise NotWritten("numbers only: a computation, not a written value")
    if len(form) > 1:
        precision = 10.0**-places
        small = [m for m in form if m.size < precision]
        if small:
            raise NotWritten(
                f"a term below the reference's precision ({small[0].size:.3g} < {precision:g}): "
                "a negligible term is not part of a written value"
            )
