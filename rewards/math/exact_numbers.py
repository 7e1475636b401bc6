r"""Exact parsing of plain numbers: the fast path that never touches sympy.

Handles what GSM8K-style answers are made of: integers, valid thousands separators, decimals,
scientific notation, ``a/b`` and ``\frac{a}{b}``, mixed numbers, repeating decimals. Everything is a
``fractions.Fraction``, so ``0.1 + 0.2`` problems and float tolerance never arise. Written by
hand because it must be exact, bounded and ~100x faster than a grammar parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction

MAX_DIGITS = 100  # longer digit strings are rejected before int() sees them
MAX_EXPONENT = 400  # |e| in 1.5e<e> or 10^{<e>}

_INT = r"(?:\d{1,3}(?:,\d{3})+|\d+)"  # 1,234,567 or 1234567 ; never 1,2 or 12,34
_DECIMAL = rf"(?:{_INT}(?:\.\d*)?|\.\d+)"
_SCI = re.compile(
    rf"^(?P<sign>[-+]?)(?P<mant>{_DECIMAL})"
    r"(?:(?:[eE](?P<e>[-+]?\d+))|(?:\s*(?:\\times|\\cdot|\*|x|×)\s*10\s*(?:\^|\*\*)\s*"
    r"(?:\{\s*(?P<e2>[-+]?\d+)\s*\}|(?P<e3>[-+]?\d+))))?$"
)
_FRAC_SLASH = re.compile(r"^(?P<sign>[-+]?)(?:(?P<num>\d+)|\(\s*(?P<inner>-)\s*(?P<num2>\d+)\s*\))\s*/\s*(?P<den>\d+)$")
_FRAC_TEX = re.compile(
    r"^(?P<sign>[-+]?)\\frac\s*(?:\{\s*(?P<inner>-?)\s*(?P<num>\d+)\s*\}|(?P<num1>\d))\s*(?:\{\s*(?P<den>\d+)\s*\}|(?P<den1>\d))$"
)
_MIXED = re.compile(
    r"^(?P<sign>[-+]?)(?P<whole>\d+)\s*(?:\\frac\s*\{\s*(?P<num>\d+)\s*\}\s*\{\s*(?P<den>\d+)\s*\}"
    r"|\\frac(?P<num1>\d)(?P<den1>\d)|\s(?P<num2>\d+)/(?P<den2>\d+))$"
)


# 0.1\overline{6} and 0.1\bar{6}: the marked digits repeat (both marks are in use for a repetend)
_REPEATING = re.compile(r"^(?P<sign>[-+]?)(?P<whole>\d*)\.(?P<fixed>\d*)\\(?:overline|bar)\s*\{\s*(?P<cycle>\d+)\s*\}$")


_NUMERIC_CHARS = re.compile(r"[-+\d,.\s eE/]*")  # what a long numeric literal could be made of


class NumberTooLarge(ValueError):
    """A literal beyond the size bounds: the caller treats it as too complex."""


# A rounded reference must state at least this many significant digits before an exact candidate may round
# to it: one digit (``0.2``) is a window of up to +-50 % (``1/6`` would pay for an exact 1/5); two (``0.33``)
# at most +-5 %.
MIN_ROUNDING_DIGITS = 2


@dataclass(frozen=True)
class ExactNumber:
    value: Fraction
    decimal_places: int | None  # digits after the point when written as a decimal, else None
    # written in a canonical form: not an unreduced fraction (\frac{54}{2}, 4/2, \frac{27}{1}), which is a division
    canonical: bool = field(default=True, compare=False, repr=False)

    @property
    def rounding_places(self) -> int | None:
        """The decimal places an exact candidate may be rounded to for this reference, or None (exact only).

        Only a decimal with at least ``MIN_ROUNDING_DIGITS`` significant digits, as written, can be read as
        a rounded value: ``0.33`` (2 places), ``12.3`` (1 place), not ``0.2`` or ``0.05``. A trailing zero
        is not a significant digit of a rounding (``2.50``, ``16.0`` are exact: rounding 749/300 to ``2.50``
        would have been written 2.5 had the value been exact, and no writer pads a rounded value with zeros).

        >>> parse_number("0.33").rounding_places, parse_number("0.2").rounding_places, parse_number("12.3").rounding_places
        (2, None, 1)
        >>> parse_number("2.50").rounding_places, parse_number("16.0").rounding_places
        (None, None)
        >>> parse_number("2.3148e-3").rounding_places, parse_number("1.5e3").rounding_places
        (7, None)
        """
        if not self.decimal_places:
            return None
        scaled = abs((self.value * 10**self.decimal_places).numerator)
        if scaled % 10 == 0:
            return None
        return self.decimal_places if len(str(scaled)) >= MIN_ROUNDING_DIGITS else None


def _digits_ok(*parts: str | None) -> None:
    if sum(len(p) for p in parts if p) > MAX_DIGITS:
        raise NumberTooLarge("digit string too long")


def parse_number(text: str) -> ExactNumber | None:
    r"""Exact value of a plain numeric literal, or None if ``text`` is not one.

    >>> parse_number("1,234.50")
    ExactNumber(value=Fraction(2469, 2), decimal_places=2)
    >>> parse_number("\\frac{3}{4}").value
    Fraction(3, 4)
    >>> parse_number("1,2") is None
    True
    """
    text = text.strip()
    if not text:
        return None
    if len(text) > 3 * MAX_DIGITS:  # a long leaf is a number's business only when it could be one
        if _NUMERIC_CHARS.fullmatch(text):
            raise NumberTooLarge("numeric literal too long")
        return None
    if m := _SCI.match(text):
        mant = m.group("mant").replace(",", "")
        _digits_ok(mant)
        exponent_text = m.group("e") or m.group("e2") or m.group("e3")
        whole, _, frac = mant.partition(".")
        value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
        places = len(frac) if "." in mant else None
        if exponent_text is not None:
            exponent = int(exponent_text) if len(exponent_text) < 8 else MAX_EXPONENT + 1
            if abs(exponent) > MAX_EXPONENT:
                raise NumberTooLarge(f"exponent {exponent_text} beyond ±{MAX_EXPONENT}")
            value *= Fraction(10) ** exponent
            # 2.3148 \times 10^{-3} states 7 decimal places (it may be 1/432 rounded); 1.5e3 states none
            places = places - exponent if places is not None and places - exponent > 0 else None
        return ExactNumber(-value if m.group("sign") == "-" else value, places)
    if m := _REPEATING.match(text):  # 0.1\overline{6} = 1/6
        whole, fixed, cycle = m.group("whole") or "0", m.group("fixed"), m.group("cycle")
        _digits_ok(whole, fixed, cycle)
        repeating = Fraction(int(cycle), 10 ** len(cycle) - 1)
        value = int(whole) + (int(fixed or "0") + repeating) / 10 ** len(fixed)
        return ExactNumber(-value if m.group("sign") == "-" else value, None)
    for pattern in (_FRAC_SLASH, _FRAC_TEX, _MIXED):
        if m := pattern.match(text):
            groups = m.groupdict()
            num = groups.get("num") or groups.get("num1") or groups.get("num2")
            den = groups.get("den") or groups.get("den1") or groups.get("den2")
            whole = groups.get("whole")
            _digits_ok(num, den, whole)
            if int(den) == 0:
                return None  # 1/0 is not a number
            value = Fraction(int(num), int(den))
            reduced = value.denominator == int(den) and int(den) > 1  # 54/2 and 27/1 are divisions
            if whole is not None:
                if value >= 1:
                    return None  # "2 3/2" is not a mixed number
                value += int(whole)
            negative = m.group("sign") == "-"
            if groups.get("inner"):
                if m.group("sign"):
                    return None  # -\frac{-3}{4}: a computation of signs, not a written number
                negative = True
            return ExactNumber(-value if negative else value, None, reduced)
    return None
