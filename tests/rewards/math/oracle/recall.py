r"""Shapes for issue #50's "recall within the policy": spellings the verifier now reads, and their wrong twins.

Each shape builds the object first (a mixed number, a product with a fraction or radical coefficient, an ordinal, a
time of day, a solved system, a repeating decimal, a set of reals, complex roots, a product of letters, a matrix),
renders it in the new spellings (``33\frac{1}{3}\%``, ``\frac{1}{2}\sqrt{3}``, ``\sqrt{2}(1+\sqrt{3})``,
``7^\text{th}``, ``3\text{ p.m.}``, ``\begin{cases}``, ``\frac{{1}}{{3}}``, ``0.\bar{3}``, ``2 > |x|``,
``abs(x) < 2``, ``x \ge 1 \text{ or } 1 \le x``, ``x = 2i, x = -2i``, ``yx``, ``\\[4pt]``) on either side, and
mutates it into wrong twins: another value, the other half of the day, a wrong ordinal suffix, a contradictory
system, two values side by side in the new coefficient positions, a strictness flipped, a root dropped. Truth comes
from the objects (``objects.truth``: exact fractions, mpmath, interval membership), never from a parser.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from fractions import Fraction
from math import gcd
from typing import TYPE_CHECKING

from tests.rewards.math.oracle import objects as o
from tests.rewards.math.oracle import render as r
from tests.rewards.math.oracle.objects import E, Interval, Meaning

if TYPE_CHECKING:
    from tests.rewards.math.oracle.pairs import Pair

NON_SQUARES = [2, 3, 5, 6, 7, 10, 11, 13, 15]


def _pair(shape: str, cand: str, ref: str, cm: Meaning, rm: Meaning, twin: str = "", completion: bool = False):
    from tests.rewards.math.oracle.pairs import Pair  # pairs.py imports this module at its end

    return Pair(shape, cand, ref, o.truth(cm, rm), twin, completion)


def _swap(rng: random.Random, cand, ref, cm, rm):
    """Either side may carry the new spelling (a reference the verifier refused before is the point)."""
    return (ref, cand, rm, cm) if rng.random() < 0.5 else (cand, ref, cm, rm)


def _frac(s: r.Style, p: int, q: int) -> str:
    return f"{s.frac}{{{p}}}{{{q}}}" if s.latex else f"{p}/{q}"


# ---------------------------------------------------------------- mixed numbers with a percent sign


def _percent(s: r.Style) -> str:
    return s.rng.choice([r"\%", r"\%", "%", r" \%"])


def mixed_percent_pair(rng: random.Random) -> Pair:
    """``33\\frac{1}{3}\\%`` is the number 100/3 with a percent sign (a percent on one side only is ignored)."""
    q = rng.choice([2, 3, 4, 5, 6, 7, 8, 9])
    a = rng.choice([k for k in range(1, q) if gcd(k, q) == 1])  # a proper fraction in lowest terms
    whole = rng.choice([1, 2, 5, 12, 16, 33, 66, 83])
    value = whole + Fraction(a, q)
    cs, rs = r.draw_style(rng, latex=True), r.draw_style(rng)
    mixed = f"{whole}{cs.frac}{{{a}}}{{{q}}}{_percent(cs)}"
    spellings = [f"{r._fraction(rs, value)}{_percent(rs) if rs.latex else '%'}", r._fraction(rs, value)]
    decimal = next((d for d in (_decimal(value, k) for k in range(4)) if d), None)
    if decimal:
        spellings.append(f"{decimal}{_percent(rs) if rs.latex else '%'}")
    ref, rm = rng.choice(spellings), o.value(o.num(value))
    change = rng.randrange(6)
    if change == 0:
        other = value + rng.choice([-1, 1])
        mixed, cm, what = (
            f"{whole + (other - value)}{cs.frac}{{{a}}}{{{q}}}{_percent(cs)}",
            o.value(o.num(other)),
            "whole",
        )
    elif change == 1 and q > 2:
        b = next(k for k in [*range(a + 1, q), *range(1, a)] if gcd(k, q) == 1)
        other = whole + Fraction(b, q)
        mixed, cm, what = f"{whole}{cs.frac}{{{b}}}{{{q}}}{_percent(cs)}", o.value(o.num(other)), "numerator"
    elif change == 2:  # an improper fraction beside a whole number is two values, never a mixed number
        b = q + a
        mixed = f"{whole}{cs.frac}{{{b}}}{{{q}}}{_percent(cs)}"
        cm, what = o.values([o.num(whole), o.num(Fraction(b, q))]), "an improper fraction beside a number"
        return _pair("recall:mixed_percent", mixed, ref, cm, rm, what)
    else:
        cm, what = o.value(o.num(value)), ""
    return _pair("recall:mixed_percent", *_swap(rng, mixed, ref, cm, rm), what)


def _decimal(value: Fraction, places: int) -> str | None:
    scaled = value * 10**places
    if scaled.denominator != 1:
        return None
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    sign = "-" if scaled < 0 else ""
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


# ---------------------------------------------------------------- coefficients: a fraction or a radical before a value


def _radical(s: r.Style, n: int) -> str:
    return rf"\sqrt{{{n}}}"


def coefficient_pair(rng: random.Random) -> Pair:
    r"""``\frac{1}{2}\sqrt{3}``, ``\frac{2}{3}(1+\sqrt{5})``, ``\sqrt{2}(1+\sqrt{3})``, ``(1+\sqrt{3})\sqrt{2}``:
    a product written by juxtaposition, against the same value written another way; twins put two numbers side by
    side in the same positions (``\frac{1}{2}\frac{1}{3}``, ``\sqrt{2}(3)``, ``\frac{1}{2}\,3``,
    ``2\frac{1}{2}\sqrt{3}``), which stay two values."""
    cs, rs = r.draw_style(rng, latex=True), r.draw_style(rng)
    p, q = rng.randint(1, 7), rng.choice([2, 3, 4, 5, 7])
    if p % q == 0:
        p += 1
    n, m = rng.sample(NON_SQUARES, 2)
    k = rng.choice([-3, -2, -1, 1, 2, 3])
    frac, root = o.num(Fraction(p, q)), o.sqrt(o.num(n))
    total = o.add(o.num(k), o.sqrt(o.num(m)))
    ktxt = f"{k}" if k != 1 else "1"
    sum_text = rf"{ktxt}+\sqrt{{{m}}}" if rng.random() < 0.5 else rf"\sqrt{{{m}}}{'+' if k > 0 else '-'}{abs(k)}"
    paren = (lambda t: rf"\left({t}\right)") if cs.left_right else (lambda t: f"({t})")
    kind = rng.randrange(4)
    if kind == 0:
        tree, cand = o.mul(frac, root), f"{_frac(cs, p, q)}{_radical(cs, n)}"
    elif kind == 1:
        tree, cand = o.mul(frac, total), f"{_frac(cs, p, q)}{paren(sum_text)}"
    elif kind == 2:
        tree, cand = o.mul(root, total), f"{_radical(cs, n)}{paren(sum_text)}"
    else:
        tree, cand = o.mul(total, root), f"{paren(sum_text)}{_radical(cs, n)}"
    twin = rng.random() < 0.45
    if twin:
        pick = rng.randrange(5)
        if pick == 0:
            mutated, what = _mutate_number(tree, rng)
            cand = _render_product(cs, mutated, kind, p, q, n, sum_text, paren)
            cm = o.value(mutated)
            what = f"{what} changed"
        elif pick == 1:  # a fraction after a fraction: two values
            a, b = rng.randint(1, 5), rng.choice([2, 3, 7])
            cand = f"{_frac(cs, p, q)}{_frac(cs, a, b)}"
            tree = o.mul(frac, o.num(Fraction(a, b)))
            cm, what = o.values([frac, o.num(Fraction(a, b))]), "a fraction beside a fraction"
        elif pick == 2:  # a radical before a bare number in brackets, or a fraction before a bare number
            c = rng.randint(2, 9)
            if rng.random() < 0.5:
                cand, tree = f"{_radical(cs, n)}{paren(str(c))}", o.mul(root, o.num(c))
                cm = o.values([root, o.num(c)])
            else:
                gap = rng.choice(["", " ", r"\,"])
                cand, tree = f"{_frac(cs, p, q)}{gap}{c}", o.mul(frac, o.num(c))
                cm = o.values([frac, o.num(c)])
            what = "a number beside a coefficient"
        elif pick == 3:  # the fraction of a mixed number cannot also be a coefficient: which product is meant?
            whole = rng.randint(1, 4)
            proper = Fraction(min(p, q - 1), q)
            cand = f"{whole}{_frac(cs, proper.numerator, proper.denominator)}{_radical(cs, n)}"
            tree = o.mul(o.num(whole + proper), root)
            cm, what = Meaning("nothing"), "a mixed number before a radical"
        else:  # two radicals side by side stay two values (round 5)
            cand, tree = f"{_radical(cs, n)}{_radical(cs, m)}", o.mul(root, o.sqrt(o.num(m)))
            cm, what = o.values([root, o.sqrt(o.num(m))]), "two radicals side by side"
        return _pair("recall:coefficient", cand, r.expr(rs, tree), cm, o.value(tree), what)
    ref_tree = _rewrite(tree, rng)
    return _pair("recall:coefficient", *_swap(rng, cand, r.expr(rs, ref_tree), o.value(tree), o.value(ref_tree)), "")


def _mutate_number(tree: E, rng: random.Random) -> tuple[E, str]:
    """The same product with one factor's number changed (so the juxtaposed spelling still applies)."""
    a, b = tree.args
    if a.op == "num":
        return o.mul(o.num(a.value + rng.choice([-1, 1]) * Fraction(1, a.value.denominator)), b), "the fraction"
    if a.op == "sqrt":
        return o.mul(o.sqrt(o.num(a.args[0].value + 1)), b), "the radicand"
    return o.mul(o.add(o.num(a.args[0].value + rng.choice([-1, 1])), a.args[1]), b), "the sum"


def _render_product(s: r.Style, tree: E, kind: int, p, q, n, sum_text, paren) -> str:
    a, b = tree.args
    if kind in (0, 1):
        value = a.value
        left = _frac(s, value.numerator, value.denominator) if value.denominator != 1 else str(value.numerator)
        right = _radical(s, n) if kind == 0 else paren(sum_text)
        return f"{left}{right}" if value > 0 else f"{left} \\cdot {right}"
    if kind == 2:
        return f"{_radical(s, a.args[0].value)}{paren(sum_text)}"
    k, root = a.args
    inner = f"{k.value}+\\sqrt{{{root.args[0].value}}}"
    return f"{paren(inner)}{_radical(s, n)}"


def _rewrite(tree: E, rng: random.Random) -> E:
    """The product multiplied out, or its factors in the other order: the same value, spelled differently."""
    a, b = tree.args
    if b.op == "add" and rng.random() < 0.6:
        return o.add(*(o.mul(a, t) for t in b.args))
    if a.op == "add" and rng.random() < 0.6:
        return o.add(*(o.mul(t, b) for t in a.args))
    if a.op == "num" and b.op == "sqrt" and rng.random() < 0.5:
        return o.div(o.mul(o.num(a.value.numerator), b), o.num(a.value.denominator))
    return o.mul(b, a)


# ---------------------------------------------------------------- ordinals


def _suffix(n: int) -> str:
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _ordinal(s: r.Style, n: int, suffix: str | None = None) -> str:
    suffix = suffix or _suffix(n)
    forms = [f"{n}^\\text{{{suffix}}}", f"{n}^{{\\text{{{suffix}}}}}", f"{n}^{{{suffix}}}", f"{n}{suffix}"]
    forms += [f"{n}\\text{{{suffix}}}", f"{n}^\\mathrm{{{suffix}}}", f"\\text{{{n}{suffix}}}"]
    return s.rng.choice(forms)


def ordinal_pair(rng: random.Random) -> Pair:
    """``7^\\text{th}`` is 7 (an ordinal is its number), in any spelling, only with its English suffix."""
    n = rng.choice([rng.randint(1, 30), rng.randint(1, 130), 11, 12, 13, 21, 22, 23, 101, 112])
    cs, rs = r.draw_style(rng, latex=True), r.draw_style(rng, latex=True)
    ref, rm = _ordinal(rs, n), o.value(o.num(n))
    change = rng.randrange(5)
    if change == 0:
        other = n + rng.choice([-1, 1]) if n > 1 else 2
        cand, cm, what = rng.choice([_ordinal(cs, other), str(other)]), o.value(o.num(other)), "another ordinal"
    elif change == 1 and n > 1:  # a suffix English does not give this number: not read as an ordinal
        wrong = rng.choice([x for x in ("st", "nd", "rd", "th") if x != _suffix(n)])
        cand, cm, what = f"{n}^{{\\text{{{wrong}}}}}", Meaning("nothing"), "a wrong suffix"
    elif change == 2:
        cand, cm, what = str(n), o.value(o.num(n)), ""
    else:
        cand, cm, what = _ordinal(cs, n), o.value(o.num(n)), ""
    return _pair("recall:ordinal", *_swap(rng, cand, ref, cm, rm), what)


# ---------------------------------------------------------------- times of day


def _time_text(s: r.Style, minutes: int, clock: str) -> tuple[str, Meaning]:
    """A time of day in a 12-hour or 24-hour spelling, and what it says: a 24-hour spelling with an hour from 1
    to 12 and no leading zero (``3:05``, ``10:30``) does not say which half of the day it is, so it means only
    itself (``clock``: the hour and minute as written), never the time of day either half would be."""
    hour, minute = divmod(minutes, 60)
    if clock == "24":
        padded = hour < 10 and s.rng.random() < 0.85
        text = f"{hour:02d}:{minute:02d}" if padded else f"{hour}:{minute:02d}"
        if 1 <= hour <= 12 and not padded:
            return text, Meaning("clock", (hour, minute))
        return text, Meaning("time", (minutes,))
    half = "p" if hour >= 12 else "a"
    h12 = hour % 12 or 12
    clock_text = f"{h12}:{minute:02d}" if minute or s.rng.random() < 0.4 else str(h12)
    mark = s.rng.choice([f"{half}.m.", f"{half.upper()}M", f"{half}m", f"{half.upper()}.M."])
    gap = s.rng.choice([" ", "", r"\ ", r"\,"])
    if s.latex and s.rng.random() < 0.6:
        text = rf"{clock_text}{s.rng.choice(['', ' '])}\text{{{s.rng.choice(['', ' '])}{mark}}}"
    else:
        text = f"{clock_text}{gap}{mark}"
    return text, Meaning("time", (minutes,))


def time_pair(rng: random.Random) -> Pair:
    """``3\\text{ p.m.}`` is 15:00; a 24-hour time is a time of day where it has one reading (``15:00``,
    ``03:30``); ``3:00`` could be either half of the day and answers only ``3:00``; a bare number is no time."""
    minutes = rng.randrange(24 * 60) if rng.random() < 0.5 else 60 * rng.randrange(24)
    cs, rs = r.draw_style(rng), r.draw_style(rng)
    ref_clock = rng.choice(["12", "12", "24"])
    ref, rm = _time_text(rs, minutes, ref_clock)
    change = rng.randrange(8)
    cand_minutes, what = minutes, ""
    if change == 0:
        cand_minutes, what = (minutes + 12 * 60) % (24 * 60), "the other half of the day"
    elif change == 1:
        cand_minutes, what = (minutes + rng.choice([-60, 60, 1, -1, 30])) % (24 * 60), "another time"
    elif change == 2:  # the hour alone, as a number: no time of day
        hour = minutes // 60 % 12 or 12
        return _pair("recall:time", str(hour), ref, o.value(o.num(hour)), rm, "a number for a time")
    cand_clock = rng.choice(["12", "24"])
    cand, cm = _time_text(cs, cand_minutes, cand_clock)
    if "clock" in (cm.kind, rm.kind) and not what:
        what = "a time without its half of the day"
    return _pair("recall:time", *_swap(rng, cand, ref, cm, rm), what)


# ---------------------------------------------------------------- systems written as cases


def _system_text(s: r.Style, assignments: list[tuple[str, Fraction]]) -> str:
    spacing = s.rng.choice([r" \\ ", r"\\", r" \\[2pt] ", r"\\[0.5em]", r" \\[-1mm] "])
    end = s.rng.choice(["", "", ",", "."])
    rows = [f"{n} = {r._fraction(s, v)}" for n, v in assignments]
    if s.rng.random() < 0.3:
        rows = [f"{n} &= {r._fraction(s, v)}" for n, v in assignments]
        return r"\left\{\begin{array}{l}" + spacing.join(rows) + r"\end{array}\right."
    return r"\begin{cases} " + spacing.join(row + end for row in rows) + r" \end{cases}"


def cases_pair(rng: random.Random) -> Pair:
    """``\\begin{cases} x = 1 \\\\ y = 2 \\end{cases}`` is the assignment ``x = 1, y = 2``; a system that assigns one
    variable twice says nothing (no value satisfies it), and values swapped between names are another answer."""
    names = ["x", "y", "z"][: rng.choice([2, 2, 3])]
    values = [Fraction(v) for v in rng.sample(range(-9, 10), len(names))]
    cs, rs = r.draw_style(rng, latex=True), r.draw_style(rng, latex=True)
    truth = list(zip(names, values))
    ref, rm = _system_text(rs, truth), Meaning("assign", tuple((n, o.num(v)) for n, v in truth))
    change = rng.randrange(6)
    cand_pairs, what = list(truth), ""
    if change == 0:
        cand_pairs[0], cand_pairs[1] = (names[0], values[1]), (names[1], values[0])
        what = "values swapped between names"
    elif change == 1:
        cand_pairs[-1] = (names[-1], values[-1] + 1)
        what = "a value changed"
    elif change == 2:  # one variable assigned twice: a contradiction, not a list
        cand = _system_text(cs, [(names[0], values[0]), (names[0], values[1])])
        ref2 = f"{names[0]} = {r._fraction(rs, values[0])}, {names[0]} = {r._fraction(rs, values[1])}"
        rm2 = o.values([o.num(values[0]), o.num(values[1])], names[0])
        return _pair("recall:cases", cand, ref2, Meaning("nothing"), rm2, "one variable assigned twice")
    cm = Meaning("assign", tuple((n, o.num(v)) for n, v in cand_pairs))
    shown = rng.sample(cand_pairs, len(cand_pairs))
    form = rng.randrange(3)
    if form == 0:
        cand = _system_text(cs, shown)
    elif form == 1:
        cand = ", ".join(f"{n} = {r._fraction(cs, v)}" for n, v in shown)
    else:
        labels = ", ".join(n for n, _ in cand_pairs)
        cand = f"({labels}) = ({', '.join(r._fraction(cs, v) for _, v in cand_pairs)})"
        cm = Meaning("tuple", tuple(o.num(v) for _, v in cand_pairs), labels=tuple(n for n, _ in cand_pairs))
    return _pair("recall:cases", *_swap(rng, cand, ref, cm, rm), what)


# ---------------------------------------------------------------- braces that change nothing


def _braced_number(s: r.Style, value: Fraction) -> str:
    p, q = abs(value.numerator), value.denominator
    sign = "-" if value < 0 else ""
    if q == 1:
        return s.rng.choice([f"{sign}{{{p}}}", f"{{{{{sign}{p}}}}}", f"{sign}{{{{{p}}}}}"])
    return s.rng.choice(
        [
            rf"{sign}\frac{{{{{p}}}}}{{{{{q}}}}}",
            rf"{sign}\frac{{{p}}}{{{{{q}}}}}",
            rf"{sign}\frac{{{{{p}}}}}{{{q}}}",
            rf"{sign}{{\frac{{{p}}}{{{q}}}}}",
            f"{sign}{{{p}}}/{{{q}}}",
            rf"{sign}\dfrac{{{{{p}}}}}{{{{{q}}}}}",
        ]
    )


def braces_pair(rng: random.Random) -> Pair:
    """``\\frac{{1}}{{3}}``, ``{1}/{3}``, ``-{\\frac{1}{3}}``: braces are transparent; two braced numbers side by side
    (``{1}{3}``) stay two values."""
    value = Fraction(rng.randint(-40, 40), rng.choice([1, 1, 2, 3, 4, 6, 7, 9, 12]))
    cs, rs = r.draw_style(rng, latex=True), r.draw_style(rng)
    ref, rm = r._fraction(rs, value), o.value(o.num(value))
    change = rng.randrange(5)
    if change == 0:
        other = value + Fraction(1, value.denominator)
        return _pair("recall:braces", _braced_number(cs, other), ref, o.value(o.num(other)), rm, "another value")
    if change == 1 and value.denominator > 1 and value > 0:
        p, q = value.numerator, value.denominator
        cand = f"{{{p}}}{{{q}}}"
        return _pair("recall:braces", cand, ref, o.values([o.num(p), o.num(q)]), rm, "two braced numbers")
    return _pair("recall:braces", *_swap(rng, _braced_number(cs, value), ref, o.value(o.num(value)), rm), "")


# ---------------------------------------------------------------- repeating decimals


def _repeating(value: Fraction) -> tuple[str, str, str]:
    """(whole, fixed digits, repeating digits) of a positive fraction with no finite decimal."""
    whole, rest = divmod(value, 1)
    digits, seen, k = [], {}, rest
    while k not in seen:
        seen[k] = len(digits)
        k *= 10
        digits.append(str(int(k)))
        k -= int(k)
    start = seen[k]
    return str(int(whole)), "".join(digits[:start]), "".join(digits[start:])


def repeating_pair(rng: random.Random) -> Pair:
    """``0.\\bar{3}``, ``0.1\\overline{6}`` are 1/3 and 1/6 exactly; a rounded decimal (``0.333``) is not."""
    q = rng.choice([3, 6, 7, 9, 11, 12, 15, 18, 22, 27, 33, 37])
    p = rng.randint(1, 3 * q)
    while o.terminates(Fraction(p, q)):
        p += 1
    value = Fraction(p, q)
    whole, fixed, cycle = _repeating(value)
    if len(cycle) > 6:
        value, (whole, fixed, cycle) = Fraction(1, 3), ("0", "", "3")
    negative = rng.random() < 0.2
    sign = "-" if negative else ""
    exact = -value if negative else value
    rs = r.draw_style(rng)
    mark = rng.choice([r"\bar", r"\overline"])
    cand, cm = f"{sign}{whole}.{fixed}{mark}{{{cycle}}}", o.value(o.num(exact))
    ref, rm = r._fraction(rs, exact), o.value(o.num(exact))
    change = rng.randrange(6)
    what = ""
    if change == 0:
        wrong_cycle = str((int(cycle) + 1) % 10 ** len(cycle)).rjust(len(cycle), "0")
        other = Fraction(
            int(whole + fixed + wrong_cycle) - int(whole + fixed), 10 ** len(fixed) * (10 ** len(cycle) - 1)
        )
        other = -other if negative else other
        cand, cm, what = f"{sign}{whole}.{fixed}{mark}{{{wrong_cycle}}}", o.value(o.num(other)), "another repetend"
    elif change == 1:  # the decimal cut off: a rounded value is not the exact one
        digits = (fixed + cycle * 4)[:4]
        cut = Fraction(int(whole + digits), 10 ** len(digits))
        cand, cm, what = f"{sign}{whole}.{digits}", o.value(o.num(-cut if negative else cut)), "cut off"
        return _pair("recall:repeating", cand, ref, cm, rm, what)  # never swapped: a decimal reference may be rounded
    elif change == 2:  # the repetend against a rounded reference: an exact value with no finite decimal rounds
        places = rng.choice([2, 3])
        rounded = Fraction(round(exact * 10**places), 10**places)
        text = _decimal(rounded, places)
        if text and abs(rounded.numerator * 10**places // rounded.denominator) >= 10 and rounded * 10**places % 10:
            rm = Meaning("rounded", (rounded,), labels=(places,))
            return _pair("recall:repeating", cand, text, cm, rm, "")
    elif change == 3:
        other_mark = r"\overline" if mark == r"\bar" else r"\bar"
        ref = f"{sign}{whole}.{fixed}{other_mark}{{{cycle}}}"
    return _pair("recall:repeating", *_swap(rng, cand, ref, cm, rm), what)


# ---------------------------------------------------------------- sets of reals: |x|, abs(x), repeated or overlapping pieces


def _abs_text(s: r.Style, name: str) -> str:
    if not s.latex:
        return f"abs({name})"
    return s.rng.choice([f"|{name}|", rf"\left|{name}\right|", f"abs({name})", rf"\lvert {name} \rvert"])


def _rel(s: r.Style, less: bool, closed: bool) -> str:
    if less:
        return s.rng.choice([" <= ", r" \le ", r" \leq "]) if closed else s.rng.choice([" < ", "<"])
    return s.rng.choice([" >= ", r" \ge ", r" \geq "]) if closed else s.rng.choice([" > ", ">"])


def abs_inequality_pair(rng: random.Random) -> Pair:
    """``2 > |x|``, ``abs(x) < 2``, ``|x| \\ge 1`` against the interval or union they describe."""
    k = Fraction(rng.randint(1, 9), rng.choice([1, 1, 2]))
    name = rng.choice(["x", "t"])
    closed, inside = rng.random() < 0.5, rng.random() < 0.5
    cs, rs = r.draw_style(rng), r.draw_style(rng)

    def pieces(bound, is_closed, within):
        if within:
            return [Interval(-bound, bound, is_closed, is_closed)]
        return [Interval(None, -bound, False, is_closed), Interval(bound, None, is_closed, False)]

    def text(s, bound, is_closed, within):
        a, b = _abs_text(s, name), r._fraction(s, bound)
        if s.rng.random() < 0.5:
            return f"{a}{_rel(s, within, is_closed)}{b}"
        return f"{b}{_rel(s, not within, is_closed)}{a}"

    ref_pieces = pieces(k, closed, inside)
    ref = (
        r.union_text(rs, ref_pieces)
        if rng.random() < 0.5
        else r.or_word(rs).join(r.inequality_text(rs, p, name) for p in ref_pieces)
    )
    if inside and rng.random() < 0.3:
        low = r.inequality_text(rs, Interval(-k, None, closed, False), name)
        high = r.inequality_text(rs, Interval(None, k, False, closed), name)
        ref = f"{low}{r.and_word(rs)}{high}"
    rm = Meaning("intervals", tuple(ref_pieces))
    change = rng.randrange(7)
    cand_k, cand_closed, cand_inside, what = k, closed, inside, ""
    if change == 0:
        cand_closed, what = not closed, "strictness flipped"
    elif change == 1:
        cand_k, what = k + 1, "another bound"
    elif change == 2:
        cand_inside, what = not inside, "the other side of the bound"
    cand = text(cs, cand_k, cand_closed, cand_inside)
    cm = Meaning("intervals", tuple(pieces(cand_k, cand_closed, cand_inside)))
    return _pair("recall:abs_inequality", *_swap(rng, cand, ref, cm, rm), what)


def union_pair(rng: random.Random) -> Pair:
    """A variable's values written with a piece repeated, split or overlapping (``x \\ge 1 \\text{ or } 1 \\le x``,
    ``x \\in [0, 2] \\cup [1, 3]``) against the same set written once; membership decides."""
    name = rng.choice(["x", "t"])
    a, b = sorted(rng.sample(range(-9, 10), 2))
    closed_a, closed_b = rng.random() < 0.5, rng.random() < 0.5
    kind = rng.randrange(4)
    if kind == 0:
        whole = [Interval(Fraction(a), None, closed_a, False)]
    elif kind == 1:
        whole = [Interval(None, Fraction(b), False, closed_b)]
    else:
        whole = [Interval(Fraction(a), Fraction(b), closed_a, closed_b)]
    piece = whole[0]
    split = rng.randrange(3)
    if split == 0 or piece.low is None or piece.high is None:
        parts = [piece, piece]  # the same piece twice, in two spellings
    elif split == 1:  # two overlapping pieces
        mid1, mid2 = Fraction(a + b, 2) + Fraction(1, 2), Fraction(a + b, 2) - Fraction(1, 2)
        parts = [Interval(piece.low, mid1, piece.closed_low, True), Interval(mid2, piece.high, True, piece.closed_high)]
    else:  # two pieces touching at a point one of them holds
        mid = Fraction(a + b, 2)
        held = rng.random() < 0.5
        parts = [
            Interval(piece.low, mid, piece.closed_low, held),
            Interval(mid, piece.high, not held, piece.closed_high),
        ]
    twin = rng.random() < 0.45
    what = ""
    if twin:
        pick = rng.randrange(3)
        if pick == 0 and parts[1].low is not None:  # a gap at the seam: both pieces leave the point out
            p, q = parts
            parts, what = (
                [Interval(p.low, p.high, p.closed_low, False), Interval(q.low, q.high, False, q.closed_high)],
                "a gap",
            )
            if p.high is not None and q.low is not None and p.high < q.low:
                parts = (
                    [p, Interval(q.low + 1, q.high, q.closed_low, q.closed_high)]
                    if q.high is None or q.low + 1 < q.high
                    else parts
                )
        elif pick == 1:
            p = parts[0]
            parts = [
                Interval(p.low, p.high, not p.closed_low if p.low is not None else False, p.closed_high),
                *parts[1:],
            ]
            what = "an end opened or closed"
        else:
            q = parts[-1]
            moved = Interval(q.low, q.high + 1 if q.high is not None else None, q.closed_low, q.closed_high)
            if q.high is None:
                moved = Interval(q.low - 1 if q.low is not None else None, None, q.closed_low, False)
            parts, what = [*parts[:-1], moved], "an end moved"
    cs, rs = r.draw_style(rng), r.draw_style(rng)
    if rng.random() < 0.5:
        cand = r.or_word(cs).join(r.inequality_text(cs, p, name) for p in parts)
    else:
        word = r"\in" if cs.latex else "in"
        cand = f"{name} {word} {r.union_text(cs, parts)}"
    form = rng.randrange(3)
    if form == 0:
        ref = r.union_text(rs, whole)
    elif form == 1:
        ref = r.inequality_text(rs, whole[0], name)
    else:
        word = r"\in" if rs.latex else "in"
        ref = f"{name} {word} {r.union_text(rs, whole)}"
    cm = Meaning("intervals", tuple(parts), name)
    rm = Meaning("intervals", tuple(whole), name if form else None)
    return _pair("recall:union", cand, ref, cm, rm, what)


# ---------------------------------------------------------------- complex roots of an equation


def _complex_text(s: r.Style, a: int, b: int) -> str:
    im = "i" if b == 1 else "-i" if b == -1 else f"{b}i"
    if a == 0:
        return im
    sign = "+" if b > 0 else "-"
    mag = "i" if abs(b) == 1 else f"{abs(b)}i"
    return f"{a} {sign} {mag}" if s.rng.random() < 0.8 else f"{mag if b > 0 else '-' + mag} + {a}"


def complex_roots_pair(rng: random.Random) -> Pair:
    """``x = 2i, x = -2i`` (or ``... \\text{ or } ...``, ``x \\in \\{...\\}``) for ``x^2 + 4 = 0``: a reference equation
    in one variable asks for its roots, complex ones included; bare values (no variable) are not paid (roots
    copied from "the equation with roots 2i and -2i"), nor one root, nor a wrong conjugate."""
    a, b = rng.randint(-4, 4), rng.choice([1, 2, 3, 4, 5])
    name = rng.choice(["x", "z"])
    roots = [o.add(o.num(a), o.mul(o.num(b), o.IMAG)), o.add(o.num(a), o.mul(o.num(-b), o.IMAG))]
    p, q = -2 * a, a * a + b * b
    terms = [f"{name}^2"] + ([f"{'+' if p > 0 else '-'} {abs(p) if abs(p) != 1 else ''}{name}"] if p else [])
    ref = " ".join(terms) + f" + {q} = 0"
    rm = o.values(roots, name)
    cs = r.draw_style(rng)
    cand_roots, what = [(a, b), (a, -b)], ""
    change = rng.randrange(8)
    if change == 0:
        cand_roots, what = [(a, b)], "one root"
    elif change == 1:
        cand_roots, what = [(a, b), (-a if a else 1, -b)], "a wrong conjugate"
    elif change == 2:
        cand_roots, what = [(a + 1, b), (a + 1, -b)], "the real part changed"
    elif change == 3:
        cand_roots, what = [(a, b + 1), (a, -b - 1)], "the imaginary part changed"
    texts = [_complex_text(cs, x, y) for x, y in cand_roots]
    rng.shuffle(texts)
    form = rng.randrange(3)
    if form == 0:
        cand = ", ".join(f"{name} = {t}" for t in texts)
    elif form == 1:
        cand = r.or_word(cs).join(f"{name} = {t}" for t in texts)
    else:
        cand = rf"{name} \in \{{{', '.join(texts)}\}}" if cs.latex else f"{name} = {', '.join(texts)}"
    trees = [o.add(o.num(x), o.mul(o.num(y), o.IMAG)) for x, y in cand_roots]
    cm = o.values(trees, name) if len(trees) > 1 else o.value(trees[0], name)
    return _pair("recall:complex_roots", cand, ref, cm, rm, what)


# ---------------------------------------------------------------- products of letters


LETTERS = "bcfghjklmnpqrstvwxyz"  # no vowel but y, no d (a differential to the parser); one of x and z in each


WORDS = ["yes", "no", "odd", "even", "none", "one", "two", "ten", "neither", "both", "true", "false", "sum", "up"]
WORDS += ["cat", "sky", "math", "by", "fly", "tax", "gym", "lazy", "max"]  # a word's anagram is another word


def letter_product_pair(rng: random.Random) -> Pair:
    """``yx`` for ``xy``: a bare run of two to four distinct letters (none of a, d, e, i, o, u; one of them x or z) is a
    product of variables; a word (``yes``, ``no``, ``cat``, ``sky``, ``max``) stays a word, so its letters in another
    order (``sey``, ``act``, ``ksy``, ``xam``) are another word."""
    if rng.random() < 0.2:
        word = rng.choice(WORDS)
        shuffled = "".join(rng.sample(word, len(word)))
        spelled = rng.choice([word, word.capitalize(), rf"\text{{{word}}}", shuffled])
        cm = Meaning("word", (spelled.replace(r"\text{", "").rstrip("}").lower(),))
        what = "" if cm.items[0] == word else "its letters reordered"
        return _pair("recall:letter_product", spelled, word, cm, Meaning("word", (word,)), what)
    letters = [rng.choice("xz")]
    letters += rng.sample([ch for ch in LETTERS if ch != letters[0]], rng.choice([1, 1, 2, 3]))
    rng.shuffle(letters)
    tree = o.mul(*(o.var(ch) for ch in letters))
    ref, rm = "".join(letters), o.value(tree)
    change = rng.randrange(5)
    cand_letters, what = rng.sample(letters, len(letters)), ""
    if change == 0:
        swap = rng.choice([ch for ch in LETTERS if ch not in letters])
        cand_letters[rng.randrange(len(cand_letters))] = swap
        what = "a letter changed"
    elif change == 1:
        cand_letters, what = cand_letters[1:], "a letter dropped"
    cand_tree = o.mul(*(o.var(ch) for ch in cand_letters)) if len(cand_letters) > 1 else o.var(cand_letters[0])
    if change == 2:
        what = "a letter squared"
    s = r.draw_style(rng)
    sep = rng.choice(["", "", " ", r" \cdot ", "*", r"\,"]) if s.latex else rng.choice(["", " ", "*"])
    cand = sep.join(cand_letters)
    if change == 2:  # the last letter squared
        cand += "^2" if s.latex or sep else "^2"
        head = [o.var(ch) for ch in cand_letters[:-1]]
        cand_tree = o.mul(*head, o.power(o.var(cand_letters[-1]), 2))
    return _pair("recall:letter_product", *_swap(rng, cand, ref, o.value(cand_tree), rm), what)


# ---------------------------------------------------------------- matrices with spaced row breaks


def matrix_rows_pair(rng: random.Random) -> Pair:
    """``\\\\[4pt]`` (a row break with extra space) is a row break; a twin transposes or changes a cell."""
    rows, cols = rng.choice([(2, 2), (2, 3), (3, 2), (3, 3)])
    cells = [[rng.randint(-9, 9) for _ in range(cols)] for _ in range(rows)]

    def text(m, spaced: bool) -> str:
        env = rng.choice(["pmatrix", "bmatrix"])
        breaks = [r" \\[4pt] ", r"\\[2pt]", r" \\[1ex] ", r"\\[0.5em]", r" \\[-2mm] "] if spaced else [r" \\ "]
        body = "".join(
            " & ".join(str(c) for c in row) + (rng.choice(breaks) if k + 1 < len(m) else "") for k, row in enumerate(m)
        )
        return rf"\begin{{{env}}}{body}\end{{{env}}}"

    cand_cells, what = [list(row) for row in cells], ""
    if rng.random() < 0.45:
        if rows == cols and rng.random() < 0.5:
            cand_cells, what = [list(col) for col in zip(*cells)], "transposed"
        else:
            i, j = rng.randrange(rows), rng.randrange(cols)
            cand_cells[i][j] += rng.choice([-1, 1])
            what = "a cell changed"
    meaning = lambda m: Meaning("matrix", tuple(tuple(o.num(c) for c in row) for row in m))  # noqa: E731
    cand, ref = text(cand_cells, True), text(cells, rng.random() < 0.5)
    return _pair("recall:matrix_rows", *_swap(rng, cand, ref, meaning(cand_cells), meaning(cells)), what)


RECALL_SHAPES: dict[str, Callable[[random.Random], Pair]] = {
    "recall:mixed_percent": mixed_percent_pair,
    "recall:coefficient": coefficient_pair,
    "recall:ordinal": ordinal_pair,
    "recall:time": time_pair,
    "recall:cases": cases_pair,
    "recall:braces": braces_pair,
    "recall:repeating": repeating_pair,
    "recall:abs_inequality": abs_inequality_pair,
    "recall:union": union_pair,
    "recall:complex_roots": complex_roots_pair,
    "recall:letter_product": letter_product_pair,
    "recall:matrix_rows": matrix_rows_pair,
}
