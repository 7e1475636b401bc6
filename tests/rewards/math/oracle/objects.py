r"""What the generator builds, and whether two of them are equal: the oracle's ground truth.

No text is parsed here. An answer is a ``Meaning`` the generator built (a value tree, a set of values, a
union of intervals, a labeled tuple, ...); two meanings are compared the way the verifier's documented
policy says they should be (``x = 3`` is 3 against a bare 3, a named answer never equals an unnamed list,
a union equals only the same set of reals), with expressions decided by evaluating the generator's own
trees with mpmath at 60 digits at random points and a few points next to the zeros of every denominator,
and interval sets by the membership of every end, every end plus or minus a tiny step, and far points.
Hand-written because no library evaluates *our* trees: sharing sympy's or the verifier's parser would let
one bug agree with itself.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

import mpmath

mpmath.mp.dps = 60
TOLERANCE = mpmath.mpf(10) ** -40  # relative; and an absolute floor for cancellation (sin(pi) is ~1e-60, not 0)
FLOOR = mpmath.mpf(10) ** -48


@dataclass(frozen=True)
class E:
    """An expression tree: op is num (value: Fraction), var (value: name), pi, e, i, add, mul, neg, div,
    pow (args: base, Num exponent), sqrt, sin, cos, deg (value in degrees: args[0] * pi / 180), ln, log (value:
    the base), root (value: the index)."""

    op: str
    args: tuple = ()
    value: object = None


def num(value) -> E:
    return E("num", value=Fraction(value))


def var(name: str) -> E:
    return E("var", value=name)


PI, EULER, IMAG = E("pi"), E("e"), E("i")


def add(*terms: E) -> E:
    return E("add", tuple(terms))


def mul(*factors: E) -> E:
    return E("mul", tuple(factors))


def neg(a: E) -> E:
    return E("neg", (a,))


def div(a: E, b: E) -> E:
    return E("div", (a, b))


def power(a: E, n: int) -> E:
    return E("pow", (a, num(n)))


def sqrt(a: E) -> E:
    return E("sqrt", (a,))


def func(name: str, a: E) -> E:
    return E(name, (a,))


class Undefined(ArithmeticError):
    """The tree has no value at this point (a zero denominator)."""


def evaluate(tree: E, env: dict[str, object]):
    op, args = tree.op, tree.args
    if op == "num":
        return mpmath.mpf(tree.value.numerator) / tree.value.denominator
    if op == "var":
        return env[tree.value]
    if op == "pi":
        return +mpmath.pi
    if op == "e":
        return mpmath.e + 0
    if op == "i":
        return mpmath.mpc(0, 1)
    values = [evaluate(a, env) for a in args]
    if op == "add":
        return mpmath.fsum(values)
    if op == "mul":
        out = mpmath.mpf(1)
        for value in values:
            out *= value
        return out
    if op == "neg":
        return -values[0]
    if op == "div":
        if abs(values[1]) < TOLERANCE:
            raise Undefined
        return values[0] / values[1]
    if op == "pow":
        exponent = int(args[1].value)
        if exponent < 0 and abs(values[0]) < TOLERANCE:
            raise Undefined
        return values[0] ** exponent
    if op == "sqrt":
        return mpmath.sqrt(values[0])
    if op == "exp":
        return mpmath.exp(values[0])
    if op in ("sin", "cos", "tan"):
        return getattr(mpmath, op)(values[0])
    if op == "deg":
        return getattr(mpmath, tree.value)(values[0] * mpmath.pi / 180)
    if op == "ln":
        return mpmath.log(values[0])
    if op == "log":  # value: the base
        return mpmath.log(values[0]) / mpmath.log(tree.value)
    if op == "root":  # value: the index (a real root of a positive radicand)
        return mpmath.root(values[0], tree.value)
    raise ValueError(f"unknown op {op}")


def variables(tree: E) -> set[str]:
    if tree.op == "var":
        return {tree.value}
    return set().union(*(variables(a) for a in tree.args)) if tree.args else set()


def denominators(tree: E) -> list[E]:
    found = [tree.args[1]] if tree.op == "div" else []
    if tree.op == "pow" and tree.args[1].value < 0:
        found.append(tree.args[0])
    for a in tree.args:
        found += denominators(a)
    return found


def _close(a, b) -> bool:
    return abs(a - b) <= max(TOLERANCE * max(abs(a), abs(b)), FLOOR)


def exact_value(tree: E) -> Fraction | None:
    """The exact rational value of a tree without variables or irrational parts (None otherwise), so that
    ``10^{32} - 1`` and ``10^{32}``, or ``2^{-72}`` and 0, are told apart whatever the working precision."""
    op, args = tree.op, tree.args
    if op == "num":
        return tree.value
    if op not in ("add", "mul", "neg", "div", "pow"):
        return None
    if op == "pow":
        base = exact_value(args[0])
        exponent = int(args[1].value)
        if base is None or abs(exponent) > 400 or (base == 0 and exponent < 0):
            return None
        return base**exponent
    values = [exact_value(a) for a in args]
    if any(v is None for v in values):
        return None
    if op == "add":
        return sum(values, Fraction(0))
    if op == "mul":
        out = Fraction(1)
        for v in values:
            out *= v
        return out
    if op == "neg":
        return -values[0]
    return values[0] / values[1] if values[1] else None


def _points(trees: list[E], rng: random.Random) -> list[dict]:
    names = sorted(set().union(*(variables(t) for t in trees)))
    if not names:
        return [{}]
    points = [{n: mpmath.mpf(rng.randint(-3000, 3000)) / 997 for n in names} for _ in range(6)]
    points.append({n: mpmath.mpf(1) / 10**12 for n in names})  # next to a zero of x, 1/x, sqrt(x)
    # next to where a denominator vanishes: move one variable until the denominator changes sign
    for tree in trees:
        for d in denominators(tree):
            for name in variables(d):
                base = dict(points[0])
                for step in (mpmath.mpf(10) ** -8, -(mpmath.mpf(10) ** -8)):
                    root = _root_in(d, name, base)
                    if root is not None:
                        points.append({**base, name: root + step})
    return points


def _root_in(tree: E, name: str, base: dict):
    try:
        return mpmath.findroot(lambda t: evaluate(tree, {**base, name: t}), mpmath.mpf("0.3"))
    except (ValueError, ZeroDivisionError, Undefined, TypeError):
        return None


def expr_equal(a: E, b: E, rng: random.Random | None = None) -> bool | None:
    """Equal wherever both are defined (None when they are defined at too few of the sampled points)."""
    exact_a, exact_b = exact_value(a), exact_value(b)
    if exact_a is not None and exact_b is not None:
        return exact_a == exact_b
    rng = rng or random.Random(0)
    agree = 0
    for env in _points([a, b], rng):
        try:
            x, y = evaluate(a, env), evaluate(b, env)
        except (Undefined, ZeroDivisionError):
            continue
        if not _close(x, y):
            return False
        agree += 1
    return True if agree >= 1 else None


# ---------------------------------------------------------------- intervals

INF = None  # an unbounded end


@dataclass(frozen=True)
class Interval:
    low: Fraction | None
    high: Fraction | None
    closed_low: bool
    closed_high: bool

    def __contains__(self, t: Fraction) -> bool:
        above = self.low is None or t > self.low or (self.closed_low and t == self.low)
        below = self.high is None or t < self.high or (self.closed_high and t == self.high)
        return above and below


def intersect(a: Interval, b: Interval) -> Interval | None:
    def lower(p, q):
        if p.low is None:
            return q.low, q.closed_low
        if q.low is None or p.low > q.low:
            return p.low, p.closed_low
        if q.low > p.low:
            return q.low, q.closed_low
        return p.low, p.closed_low and q.closed_low

    def upper(p, q):
        if p.high is None:
            return q.high, q.closed_high
        if q.high is None or p.high < q.high:
            return p.high, p.closed_high
        if q.high < p.high:
            return q.high, q.closed_high
        return p.high, p.closed_high and q.closed_high

    (low, cl), (high, ch) = lower(a, b), upper(a, b)
    if low is not None and high is not None and (low > high or (low == high and not (cl and ch))):
        return None
    return Interval(low, high, cl, ch)


def same_set(a: list[Interval], b: list[Interval]) -> bool:
    """Same subset of the reals: membership of every end, both sides of it, midpoints and far points."""
    ends = sorted({e for piece in a + b for e in (piece.low, piece.high) if e is not None})
    step = Fraction(1, 10**9)
    probes = {Fraction(-(10**12)), Fraction(10**12)}
    for k, end in enumerate(ends):
        probes |= {end, end - step, end + step}
        if k + 1 < len(ends):
            probes.add((end + ends[k + 1]) / 2)
    return all(any(t in p for p in a) == any(t in p for p in b) for t in probes)


# ---------------------------------------------------------------- meanings


@dataclass(frozen=True)
class Meaning:
    """What an answer says. kind: value | set (order-free values, name optional) | intervals | tuple
    (labels optional) | tupleset | assign (name -> value) | matrix | lineq (coefficients, constant) |
    nothing (a statement, a tautology, mixed variables: no answer at all) | rounded (a decimal reference:
    items (its exact value,), labels (its decimal places,)) | computation (an unevaluated computation, a vacuous
    factor or a negligible term: answers no number) | setlist (sets listed: items are frozensets of Fractions) | time
    (a time of day: items (minutes after midnight,)) | clock (a time that does not say its half of the day, ``3:05``:
    items (hour, minute) as written; it means only itself) | word (a word answer: items (the word in lower case,))."""

    kind: str
    items: tuple = ()
    name: str | None = None
    labels: tuple | None = None


def value(tree: E, name: str | None = None) -> Meaning:
    return Meaning("value", (tree,), name)


def values(trees, name: str | None = None) -> Meaning:
    return Meaning("set", tuple(trees), name)


def _names_agree(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b


def _values_match(xs, ys) -> bool:
    """Order-free: every value on each side equals one on the other (a repeated value is not a new one)."""
    return all(any(expr_equal(x, y) for y in ys) for x in xs) and all(any(expr_equal(x, y) for x in xs) for y in ys)


def _distinct(items) -> int:
    kept: list = []
    for item in items:
        if not any(expr_equal(item, k) for k in kept):
            kept.append(item)
    return len(kept)


def _lineq_equal(a: Meaning, b: Meaning) -> bool:
    """sum(c_v * v) = k on each side: the same equation iff (c, k) are proportional with a nonzero factor."""
    ca, ka = dict(a.items[0]), a.items[1]
    cb, kb = dict(b.items[0]), b.items[1]
    names = set(ca) | set(cb)
    va = [ca.get(n, Fraction(0)) for n in sorted(names)] + [ka]
    vb = [cb.get(n, Fraction(0)) for n in sorted(names)] + [kb]
    if not any(va[:-1]) or not any(vb[:-1]):
        return False  # 1 = 1 (or 0 = 1) is no equation in the variables
    pivot = next(k for k, c in enumerate(va) if c)
    if not vb[pivot]:
        return False
    factor = vb[pivot] / va[pivot]
    return all(factor * x == y for x, y in zip(va, vb))


def terminates(value: Fraction) -> bool:
    """A finite decimal expansion: the denominator is 2^a 5^b."""
    q = value.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def rounds_to(tree: E, reference: Fraction, places: int) -> bool | None:
    """Whether the exact value ``tree`` rounds (half up) to ``reference`` at ``places`` decimals, as the rounding rule
    of docs/verifier.md reads it: a value with a finite decimal expansion must be equal, anything else must round.
    None when 60 digits cannot tell (the value is within 10^-30 of a rounding boundary)."""
    exact = exact_value(tree)
    if exact is not None:
        if terminates(exact):
            return exact == reference
        scaled = exact * 10**places + Fraction(1, 2)
        return Fraction(scaled.numerator // scaled.denominator, 10**places) == reference
    scaled = evaluate(tree, {}) * mpmath.mpf(10) ** places + mpmath.mpf(1) / 2
    if isinstance(scaled, mpmath.mpc):
        return False
    whole = mpmath.floor(scaled)
    if scaled - whole < mpmath.mpf(10) ** -30 or whole + 1 - scaled < mpmath.mpf(10) ** -30:
        return None
    return Fraction(int(whole), 10**places) == reference


def _as_set(m: Meaning) -> Meaning | None:
    """A single value (named or not) and a one-variable linear equation are a one-element set."""
    if m.kind == "value":
        return values(m.items, m.name)
    if m.kind == "lineq" and len(m.items[0]) == 1:
        ((name, c),) = m.items[0]
        return values([num(m.items[1] / c)], name) if c else None
    return m if m.kind == "set" else None


def truth(candidate: Meaning, reference: Meaning) -> bool:
    """Does the candidate say what the reference says (under the documented policy)?"""
    c, r = candidate, reference
    if "nothing" in (c.kind, r.kind) or "computation" in (c.kind, r.kind):
        return False  # a computation answers no number: 5.5 \times 5, a vacuous factor, a negligible term
    if "rounded" in (c.kind, r.kind):  # a decimal reference stated to ``labels[0]`` places
        if c.kind == r.kind:
            return c.items == r.items and c.labels == r.labels
        rounded, other = (r, c) if r.kind == "rounded" else (c, r)
        return other.kind == "value" and rounds_to(other.items[0], rounded.items[0], rounded.labels[0]) is True
    if {"time", "clock", "word"} & {c.kind, r.kind}:  # minutes after midnight; an hour as written; a word
        return c.kind == r.kind and c.items == r.items
    if "setlist" in (c.kind, r.kind):  # a list of sets: order-free, each set order-free, a repeated set is one
        return c.kind == r.kind and set(c.items) == set(r.items)
    if c.kind == "lineq" and r.kind == "lineq":
        return _lineq_equal(c, r)
    cs, rs = _as_set(c), _as_set(r)
    if cs is not None and rs is not None:
        if _distinct(rs.items) == 1 and _distinct(cs.items) > 1:
            return False  # several values for one: a hedge, even when equal
        return _names_agree(cs.name, rs.name) and _values_match(cs.items, rs.items)
    if c.kind != r.kind:
        if {c.kind, r.kind} == {"assign", "tuple"}:
            a, t = (c, r) if c.kind == "assign" else (r, c)
            return t.labels is not None and truth(a, Meaning("assign", tuple(zip(t.labels, t.items))))
        return False
    if c.kind == "intervals":
        return _names_agree(c.name, r.name) and same_set(list(c.items), list(r.items))
    if c.kind == "tuple":
        if c.labels is not None and r.labels is not None:
            return truth(
                Meaning("assign", tuple(zip(c.labels, c.items))), Meaning("assign", tuple(zip(r.labels, r.items)))
            )
        return len(c.items) == len(r.items) and all(expr_equal(x, y) for x, y in zip(c.items, r.items))
    if c.kind == "tupleset":
        if c.labels != r.labels and None not in (c.labels, r.labels):
            return False
        same = lambda s, t: len(s) == len(t) and all(expr_equal(x, y) for x, y in zip(s, t))  # noqa: E731
        return all(any(same(s, t) for t in r.items) for s in c.items) and all(
            any(same(s, t) for s in c.items) for t in r.items
        )
    if c.kind == "assign":
        ca, ra = dict(c.items), dict(r.items)
        return set(ca) == set(ra) and all(expr_equal(ca[n], ra[n]) for n in ca)
    if c.kind == "matrix":
        return [len(row) for row in c.items] == [len(row) for row in r.items] and all(
            expr_equal(x, y) for cr, rr in zip(c.items, r.items) for x, y in zip(cr, rr)
        )
    return False
