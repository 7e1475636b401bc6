r"""Candidate/reference pairs: build an object, render it twice independently, or mutate it into a wrong twin.

Every pair carries the oracle's verdict (``objects.truth`` on the two *meanings* the generator built), never
a label assumed from how it was made: a mutation that happens to keep the value (a sign flip of 0) is an
equal pair, and a rewrite that changes it is a wrong one. ``SHAPES`` are the shapes the verifier's policy
accepts (docs/verifier.md); ``HELD_OUT`` are the shapes the issue lists for recall (either/or answers,
compound ``and``, plain CAS syntax, rearranged equations, complex numbers, degrees).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from math import gcd

import mpmath

from rewards.math import vocabulary
from tests.rewards.math.oracle import objects as o
from tests.rewards.math.oracle import render as r
from tests.rewards.math.oracle.objects import E, Interval, Meaning
from tests.rewards.math.oracle.recall import RECALL_SHAPES


@dataclass(frozen=True)
class Pair:
    shape: str
    candidate: str
    reference: str
    truth: bool
    twin: str  # "" for an independent rendering of the same object, else what was changed
    as_completion: bool = False  # grade "ANSWER: ..." / a box instead of is_correct on the answer


def _small(rng: random.Random, low: int = -9, high: int = 9, nonzero: bool = False) -> int:
    while True:
        k = rng.randint(low, high)
        if k or not nonzero:
            return k


def rand_fraction(rng: random.Random) -> Fraction:
    return Fraction(_small(rng, -30, 30), rng.choice([1, 1, 1, 2, 3, 4, 5, 6, 8, 12]))


NON_SQUARES = [2, 3, 5, 6, 7, 10, 11, 13, 15]


def rand_number(rng: random.Random) -> E:
    kind = rng.randrange(6)
    if kind == 0:
        return o.num(_small(rng, -50, 50))
    if kind == 1:
        return o.num(rand_fraction(rng))
    if kind == 2:
        n = rng.choice(NON_SQUARES)
        return scaled(_small(rng, 2, 5), o.sqrt(o.num(n))) if rng.random() < 0.5 else o.sqrt(o.num(n))
    if kind == 3:
        return o.add(o.num(_small(rng, -5, 5, True)), o.sqrt(o.num(rng.choice(NON_SQUARES))))
    if kind == 4:
        return scaled(_small(rng, 1, 4), o.PI) if rng.random() < 0.5 else o.div(o.PI, o.num(rng.choice([2, 3, 4, 6])))
    return o.div(o.num(_small(rng, -9, 9, True)), o.num(_small(rng, 2, 9)))


def rand_expr(rng: random.Random, names: tuple[str, ...], depth: int = 2) -> E:
    if depth == 0 or rng.random() < 0.3:
        pick = rng.random()
        if pick < 0.55:
            return o.var(rng.choice(names))
        if pick < 0.9:
            return o.num(_small(rng, -6, 6, True))
        return o.PI
    kind = rng.choice(["add", "add", "mul", "div", "pow", "sqrt", "trig"])
    sub = lambda: rand_expr(rng, names, depth - 1)  # noqa: E731
    if kind == "add":
        return o.add(sub(), sub())
    if kind == "mul":
        return o.mul(o.num(_small(rng, 2, 7)), sub()) if rng.random() < 0.5 else o.mul(sub(), sub())
    if kind == "div":
        return o.div(sub(), o.add(o.var(rng.choice(names)), o.num(_small(rng, -4, 4, True))))
    if kind == "pow":
        return o.power(sub(), rng.choice([2, 2, 3, -1]))
    if kind == "sqrt":
        return o.sqrt(o.add(o.power(o.var(rng.choice(names)), 2), o.num(_small(rng, 1, 9))))
    return o.func(rng.choice(["sin", "cos"]), sub())


def rewrite(tree: E, rng: random.Random) -> E:
    """A differently written tree the generator believes equal (the oracle checks it, it is not trusted)."""
    op, a = tree.op, tree.args
    if op == "num" and tree.value.denominator != 1 and rng.random() < 0.3:
        return o.div(o.num(tree.value.numerator), o.num(tree.value.denominator))
    if op == "add":
        terms = [rewrite(t, rng) for t in a]
        rng.shuffle(terms)
        return o.add(*terms)
    if op == "mul":
        factors = [rewrite(t, rng) for t in a]
        if len(factors) == 2 and factors[1].op == "add" and rng.random() < 0.5:
            return o.add(*(o.mul(factors[0], t) for t in factors[1].args))  # distribute
        if len(factors) == 2 and factors[0].op == "num" and factors[0].value == 2 and rng.random() < 0.3:
            return o.add(factors[1], factors[1])
        rng.shuffle(factors)
        return o.mul(*factors)
    if op == "div" and rng.random() < 0.4:
        return o.mul(rewrite(a[0], rng), o.power(rewrite(a[1], rng), -1))
    if op == "pow" and a[1].value == 2 and rng.random() < 0.4:
        base = rewrite(a[0], rng)
        return o.mul(base, base)
    if op == "sqrt" and a[0].op == "num" and a[0].value.denominator == 1 and rng.random() < 0.5:
        n = a[0].value.numerator
        for k in (5, 4, 3, 2):
            if n % (k * k) == 0:
                return o.mul(o.num(k), o.sqrt(o.num(n // (k * k))))
    if a:
        return E(op, tuple(rewrite(t, rng) if t.op != "num" or op != "pow" else t for t in a), tree.value)
    return tree


def mutate(tree: E, rng: random.Random) -> tuple[E, str]:
    """A wrong twin: one number, sign, operator, exponent or variable changed somewhere in the tree."""
    op, a = tree.op, tree.args
    if a and rng.random() < 0.65:
        k = rng.randrange(len(a))
        if op == "pow" and k == 1:
            k = 0
        child, what = mutate(a[k], rng)
        return E(op, a[:k] + (child,) + a[k + 1 :], tree.value), what
    choice = rng.randrange(4)
    if op == "num" and choice < 2:
        return o.num(tree.value + rng.choice([-1, 1])), "a number off by one"
    if op == "var" and choice == 2:
        return o.var("y" if tree.value != "y" else "x"), "a variable swapped"
    if op in ("sin", "cos") and choice == 3:
        return E("cos" if op == "sin" else "sin", a), "sin and cos swapped"
    if op == "pow" and choice == 3:
        return o.power(a[0], int(a[1].value) + 1), "an exponent raised"
    return o.neg(tree), "a sign flipped"


def scaled(k, tree: E) -> E:
    """k * tree written the way a person would (no ``1x``, ``-1x``)."""
    k = Fraction(k)
    return tree if k == 1 else o.neg(tree) if k == -1 else o.mul(o.num(k), tree)


def _pair(shape, cand: str, ref: str, cm: Meaning, rm: Meaning, twin: str = "", completion: bool = False) -> Pair:
    return Pair(shape, cand, ref, o.truth(cm, rm), twin, completion)


def _two(rng: random.Random, latex: bool | None = None) -> tuple[r.Style, r.Style]:
    return r.draw_style(rng, latex), r.draw_style(rng)


# ---------------------------------------------------------------- shapes the policy accepts


def number_pair(rng: random.Random) -> Pair:
    ref_tree = rand_number(rng)
    cs, rs = _two(rng)
    twin = rng.random() < 0.5
    cand_tree, what = mutate(ref_tree, rng) if twin else (rewrite(ref_tree, rng), "")
    named = rng.random() < 0.15
    cand = r.expr(cs, cand_tree)
    cand = f"x = {cand}" if named else cand
    if twin and rng.random() < 0.3:  # hedges: the right value with another one
        other, _ = mutate(ref_tree, rng)
        first, second = (ref_tree, other) if rng.random() < 0.5 else (other, ref_tree)
        a, b = r.expr(cs, first), r.expr(cs, second)
        hedge = rng.randrange(4)
        if hedge == 3:  # an equation chain with two values is no answer
            return _pair(
                "number",
                f"x = {a} = {b}",
                r.expr(rs, ref_tree),
                Meaning("nothing"),
                o.value(ref_tree),
                "an equation chain with two values",
            )
        separator, kind = rng.choice(list(vocabulary.SEPARATORS.items()))  # the normalizer's list and hedge words
        listed = f"{a}{separator} {b}" if kind == "list" else f"{a} {separator} {b}"
        cand = [listed, f"{a}{r.or_word(cs)}{b}", f"\\boxed{{{a}}} \\text{{ or }} \\boxed{{{b}}}"][hedge]
        return _pair(
            "number",
            cand,
            r.expr(rs, ref_tree),
            o.values([first, second]),
            o.value(ref_tree),
            "a hedge: two values for one",
            completion=hedge == 2,
        )
    return _pair(
        "number",
        r.finish(cs, cand),
        r.finish(rs, r.expr(rs, ref_tree)),
        o.value(cand_tree, "x" if named else None),
        o.value(ref_tree),
        what,
        completion=rng.random() < 0.15,
    )


def _decimal(value: Fraction, places: int) -> str | None:
    scaled = value * 10**places
    if scaled.denominator != 1:
        return None
    sign = "-" if scaled < 0 else ""
    digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


def decimal_pair(rng: random.Random) -> Pair:
    value = Fraction(_small(rng, -400, 400), rng.choice([2, 4, 5, 8, 10, 20, 25, 40]))
    places = next(p for p in range(8) if _decimal(value, p) is not None)
    cs, rs = _two(rng)
    ref = rng.choice([_decimal(value, places), r._fraction(rs, value)])
    twin = rng.random() < 0.5
    if twin and rng.random() < 0.5:
        third = Fraction(_small(rng, 1, 9), rng.choice([3, 7, 9, 11]))
        cand = _decimal(Fraction(round(third * 10**4), 10**4), 4)
        return _pair(
            "decimal",
            cand,
            r._fraction(rs, third),
            o.value(o.num(Fraction(cand))),
            o.value(o.num(third)),
            "a rounded decimal for an exact value",
        )
    cand_value = value + Fraction(rng.choice([-1, 1]), 10**places) if twin else value
    cand = _decimal(cand_value, places + rng.choice([0, 0, 1, 2]))
    if rng.random() < 0.3:
        cand = r._fraction(cs, cand_value)
    return _pair("decimal", cand, ref, o.value(o.num(cand_value)), o.value(o.num(value)), "last digit" if twin else "")


def expression_pair(rng: random.Random) -> Pair:
    names = rng.choice([("x",), ("x", "y"), ("t",)])
    ref_tree = rand_expr(rng, names)
    cs, rs = _two(rng)
    twin = rng.random() < 0.5
    cand_tree, what = mutate(ref_tree, rng) if twin else (rewrite(ref_tree, rng), "")
    return _pair(
        "expression",
        r.finish(cs, r.expr(cs, cand_tree)),
        r.finish(rs, r.expr(rs, ref_tree)),
        o.value(cand_tree),
        o.value(ref_tree),
        what,
    )


def pm_pair(rng: random.Random) -> Pair:
    a, b = o.num(_small(rng, -9, 9)), rng.choice([o.num(_small(rng, 1, 9)), o.sqrt(o.num(rng.choice(NON_SQUARES)))])
    both = [o.add(a, b), o.add(a, o.neg(b))]
    cs, rs = _two(rng, latex=True)
    pm = rng.choice([r"\pm", r"\pm "])
    ref = f"{r.expr(rs, a)} {pm} {r.expr(rs, b)}"
    named = rng.random() < 0.4
    kind = rng.randrange(4)
    if kind == 0:  # the two values listed
        items = [r.expr(cs, t) for t in both]
        rng.shuffle(items)
        cand, cm, what = ", ".join(items), o.values(both), ""
        if named:
            cand, cm = ", ".join(f"x = {t}" for t in items), o.values(both, "x")
    elif kind == 1:  # one of them: a missing root
        keep = rng.choice(both)
        cand, cm, what = r.expr(cs, keep), o.value(keep), "one value of two"
    elif kind == 2:  # a single value for the pair, or a pair for a single value
        cand, cm, what = ref, o.values(both), "a pm answer for one value"
        return _pair("pm", cand, r.expr(rs, both[0]), cm, o.value(both[0]), what)
    else:
        cand, cm, what = f"{r.expr(cs, a)} {pm} {r.expr(cs, b)}", o.values(both), ""
    return _pair("pm", r.finish(cs, cand), ref, cm, o.values(both, "x" if named else None), what)


def _interval_set(rng: random.Random) -> list[Interval]:
    count = rng.choice([1, 2])
    ends = sorted(rng.sample(range(-12, 13), 2 * count))
    pieces = []
    for k in range(count):
        low, high = Fraction(ends[2 * k], rng.choice([1, 1, 2])), Fraction(ends[2 * k + 1])
        if not (low < high and (k == 0 or low > pieces[-1].high)):  # halving a negative end moved it past another
            low = Fraction(ends[2 * k])
        pieces.append(Interval(low, high, rng.random() < 0.5, rng.random() < 0.5))
    if rng.random() < 0.4:
        pieces[0] = Interval(None, pieces[0].high, False, pieces[0].closed_high)
    if rng.random() < 0.4 and pieces[-1].low is not None:
        pieces[-1] = Interval(pieces[-1].low, None, pieces[-1].closed_low, False)
    return pieces


def _render_intervals(s: r.Style, pieces: list[Interval], name: str, form: str) -> str:
    if form == "notation":
        return r.union_text(s, pieces)
    if form == "in":
        return rf"{name} \in {r.union_text(s, pieces)}" if s.latex else f"{name} in {r.union_text(s, pieces)}"
    if form == "or-in":
        word = r"\in" if s.latex else "in"
        return r.or_word(s).join(f"{name} {word} {r.interval_text(s, p)}" for p in pieces)
    if form == "builder" and s.latex and len(pieces) == 1:
        bar = s.rng.choice([r" \mid ", " : ", r" \,|\, "])
        return rf"\{{{name}{bar}{r.inequality_text(s, pieces[0], name)}\}}"
    return r.or_word(s).join(r.inequality_text(s, p, name) for p in pieces)


INTERVAL_FORMS = ["notation", "in", "or-in", "builder", "inequalities"]


def interval_pair(rng: random.Random) -> Pair:
    pieces = _interval_set(rng)
    name = rng.choice(["x", "x", "t"])
    cs, rs = _two(rng)
    ref_form, cand_form = rng.choice(INTERVAL_FORMS), rng.choice(INTERVAL_FORMS)
    ref = _render_intervals(rs, pieces, name, ref_form)
    rm = Meaning("intervals", tuple(pieces), name if ref_form != "notation" else None)
    twin = rng.random() < 0.55
    cand_pieces, what, cand_name = list(pieces), "", name
    if twin:
        k = rng.randrange(len(pieces))
        p = pieces[k]
        change = rng.randrange(5)
        if change == 0 and p.low is not None:
            cand_pieces[k], what = Interval(p.low, p.high, not p.closed_low, p.closed_high), "an end opened/closed"
        elif change == 1 and p.high is not None:
            cand_pieces[k], what = Interval(p.low, p.high + 1, p.closed_low, p.closed_high), "an end moved"
        elif change == 2 and len(pieces) == 2:
            cand_pieces, what = [pieces[1 - k]], "a piece dropped"
        elif change == 3 and len(pieces) == 2:
            word = r.and_word(cs)
            rel = r"\in" if cs.latex else "in"
            cand = word.join(f"{name} {rel} {r.interval_text(cs, q)}" for q in pieces)
            both = o.intersect(*pieces)
            cm = Meaning("intervals", (both,) if both else (), name)
            return _pair("intervals", cand, ref, cm, rm, "and between two memberships")
        elif change == 4 and len(pieces) == 2:
            rel = r"\in" if cs.latex else "in"
            cand = r.or_word(cs).join(f"{v} {rel} {r.interval_text(cs, q)}" for v, q in zip((name, "y"), pieces))
            return _pair("intervals", cand, ref, Meaning("nothing"), rm, "mixed variables")
        else:
            cand_name, what = ("y" if name != "y" else "x"), "another variable"
            if cand_form == "notation" or ref_form == "notation":
                cand_form = "in"
    cand = _render_intervals(cs, cand_pieces, cand_name, cand_form)
    cm = Meaning("intervals", tuple(cand_pieces), cand_name if cand_form != "notation" else None)
    return _pair("intervals", r.finish(cs, cand), r.finish(rs, ref), cm, rm, what)


def _poly_from_roots(roots: list[Fraction], name: str) -> E:
    """(x - r1)(x - r2)... expanded into integer coefficients (leading coefficient clears denominators)."""
    coeffs = [Fraction(1)]
    for root in roots:
        coeffs = [a - root * b for a, b in zip([*coeffs, Fraction(0)], [Fraction(0), *coeffs])]
    scale = 1
    for c in coeffs:
        scale = scale * c.denominator // __import__("math").gcd(scale, c.denominator)
    degree = len(coeffs) - 1
    terms = []
    for k, c in enumerate(coeffs):
        c *= scale
        if c:
            power = degree - k
            base = o.var(name) if power == 1 else o.power(o.var(name), power) if power else None
            terms.append(o.num(c) if base is None else scaled(c, base))
    return o.add(*terms) if len(terms) > 1 else terms[0]


def _roots_text(s: r.Style, roots: list[E], name: str, form: str) -> str:
    items = [r.expr(s, t) for t in roots]
    if form == "list":
        return ", ".join(items)
    if form == "set":
        return r.set_text(s, items)
    if form == "eqs":
        return ", ".join(f"{name} = {t}" for t in items)
    if form == "or":
        return r.or_word(s).join(f"{name} = {t}" for t in items)
    return rf"{name} \in {r.set_text(s, items)}"


def roots_pair(rng: random.Random) -> Pair:
    """Solution sets written as a list, a set, equations or an or-list (and wrong twins: a root missing/extra)."""
    name = rng.choice(["x", "t"])
    roots = [
        o.num(q) for q in rng.sample([Fraction(k, d) for k in range(-6, 7) for d in (1, 2)], rng.choice([2, 2, 3]))
    ]
    roots = list({t.value: t for t in roots}.values())
    cs, rs = _two(rng)
    ref_form, cand_form = rng.choice(["list", "set", "eqs", "in"]), rng.choice(["list", "set", "eqs", "or", "in"])
    rm = o.values(roots, None if ref_form in ("list", "set") else name)
    cand_roots, what = list(roots), ""
    if rng.random() < 0.5:
        if rng.random() < 0.5:
            cand_roots, what = cand_roots[1:], "a root missing"
        else:
            cand_roots, what = [*cand_roots, o.num(_small(rng, 7, 12))], "an extra root"
    rng.shuffle(cand_roots)
    if len(roots) == 2 and not what and rng.random() < 0.15:  # two roots written as an interval or a point
        low, high = sorted(t.value for t in roots)
        if rng.random() < 0.5:
            cand = f"[{r._fraction(cs, low)}, {r._fraction(cs, high)}]"
            cm = Meaning("intervals", (Interval(low, high, True, True),))
        else:
            cand = f"({r._fraction(cs, low)}, {r._fraction(cs, high)})"
            cm = Meaning("tuple", (o.num(low), o.num(high)))
        return _pair(
            "roots",
            cand,
            r.finish(rs, _roots_text(rs, roots, name, ref_form)),
            cm,
            rm,
            "an interval or a point for two roots",
        )
    cm = o.values(cand_roots, None if cand_form in ("list", "set") else name)
    if len(cand_roots) == 1:
        cm = o.value(cand_roots[0], cm.name)
    return _pair(
        "roots",
        r.finish(cs, _roots_text(cs, cand_roots, name, cand_form)),
        r.finish(rs, _roots_text(rs, roots, name, ref_form)),
        cm,
        rm,
        what,
    )


def tuple_pair(rng: random.Random, as_assignment: bool = False) -> Pair:
    vals = [rand_number(rng) if rng.random() < 0.3 else o.num(_small(rng, -9, 9)) for _ in range(rng.choice([2, 2, 3]))]
    labels = ("x", "y", "z")[: len(vals)]
    cs, rs = _two(rng)
    labeled = as_assignment or rng.random() < 0.5
    body = lambda s, vs: r._paren(s, f",{s.gap()}".join(r.expr(s, v) for v in vs))  # noqa: E731
    lab = lambda s, ls: r._paren(s, ", ".join(ls))  # noqa: E731
    ref = f"{lab(rs, labels)} = {body(rs, vals)}" if labeled else body(rs, vals)
    rm = Meaning("tuple", tuple(vals), labels=labels if labeled else None)
    cand_vals, cand_labels, what = list(vals), labels, ""
    change = rng.randrange(6)
    if change == 0 and vals[0] != vals[1]:
        cand_vals[0], cand_vals[1], what = vals[1], vals[0], "two values swapped"
    elif change == 1 and labeled:
        cand_labels, what = (labels[1], labels[0], *labels[2:]), "labels swapped"
    elif change == 2:
        cand_vals[-1], what = mutate(vals[-1], rng)
    cand_labeled = labeled and (as_assignment or rng.random() < 0.8)
    cand = f"{lab(cs, cand_labels)} = {body(cs, cand_vals)}" if cand_labeled else body(cs, cand_vals)
    cm = Meaning("tuple", tuple(cand_vals), labels=cand_labels if cand_labeled else None)
    if as_assignment and cand_labeled:  # the same labeled tuple written as an assignment list
        cand = ", ".join(f"{n} = {r.expr(cs, v)}" for n, v in zip(cand_labels, cand_vals))
        cm = Meaning("assign", tuple(zip(cand_labels, cand_vals)))
    return _pair(
        "tuple_as_assignment" if as_assignment else "tuple", r.finish(cs, cand), r.finish(rs, ref), cm, rm, what
    )


def tuple_as_assignment_pair(rng: random.Random) -> Pair:
    """``x = 1, y = 2`` against ``(x, y) = (1, 2)`` (not promised by the policy: measured, no floor)."""
    return tuple_pair(rng, as_assignment=True)


def tupleset_pair(rng: random.Random) -> Pair:
    tuples = list({(_small(rng, -5, 5), _small(rng, -5, 5)) for _ in range(rng.choice([2, 3]))})
    cs, rs = _two(rng)
    text = lambda s, ts: f",{s.gap()}".join(f"({a}, {b})" for a, b in ts)  # noqa: E731
    meaning = lambda ts: Meaning("tupleset", tuple(tuple(o.num(v) for v in t) for t in ts))  # noqa: E731
    cand_tuples, what = list(tuples), ""
    change = rng.randrange(4)
    if change == 0 and len(tuples) > 1:
        cand_tuples, what = cand_tuples[1:], "a solution missing"
    elif change == 1:
        cand_tuples[0], what = (tuples[0][1], tuples[0][0]), "order inside a tuple"
    rng.shuffle(cand_tuples)
    return _pair("tupleset", text(cs, cand_tuples), text(rs, tuples), meaning(cand_tuples), meaning(tuples), what)


def named_tupleset_pair(rng: random.Random) -> Pair:
    """``p=5,q=2;p=7,q=2``: a set of named solutions; names may come in any order, values stay with their name."""
    names = rng.choice([("p", "q"), ("x", "y"), ("a", "b")])
    sols = list({(_small(rng, -9, 9), _small(rng, -9, 9)) for _ in range(rng.choice([2, 3]))})

    def text(order, ss, sep):
        return sep.join(",".join(f"{names[k]}={v[k]}" for k in order) for v in ss)

    def meaning(ss):
        return Meaning("tupleset", tuple(tuple(o.num(x) for x in v) for v in ss), labels=names)

    ref = text((0, 1), sols, rng.choice(["; ", ";"]))
    cand_sols, what = list(sols), ""
    change = rng.randrange(4)
    if change == 0:
        cand_sols, what = [(b, a) for a, b in sols], "values swapped between the names"
    elif change == 1 and len(sols) > 1:
        cand_sols, what = sols[1:], "a solution missing"
    rng.shuffle(cand_sols)
    order = rng.choice([(0, 1), (1, 0)])
    cand = text(order, cand_sols, rng.choice(["; ", ";", r" \text{ and } "]))
    return _pair("named_tupleset", cand, ref, meaning(cand_sols), meaning(sols), what)


def assign_pair(rng: random.Random) -> Pair:
    names = ["x", "y", "z"][: rng.choice([2, 2, 3])]
    vals = [o.num(v) for v in rng.sample(range(-9, 10), len(names))]
    cs, rs = _two(rng)
    ref = ", ".join(f"{n} = {r.expr(rs, v)}" for n, v in zip(names, vals))
    rm = Meaning("assign", tuple(zip(names, vals)))
    change = rng.randrange(5)
    order = list(zip(names, vals))
    rng.shuffle(order)
    if change == 0:  # unnamed, in some order: the names are lost
        items = [r.expr(cs, v) for _, v in order]
        cand = rng.choice([", ".join(items), "\n".join(f"ANSWER: {t}" for t in items)])
        return _pair(
            "assign", cand, ref, o.values([v for _, v in order]), rm, "an unnamed list", completion="ANSWER" in cand
        )
    if change == 1:
        order[0], order[1] = (order[0][0], order[1][1]), (order[1][0], order[0][1])
        what = "names swapped"
    else:
        what = ""
    sep = rng.choice([", ", r",\quad ", r" \text{ and } ", "; "]) if cs.latex else ", "
    cand = sep.join(f"{n} = {r.expr(cs, v)}" for n, v in order)
    return _pair("assign", r.finish(cs, cand), ref, Meaning("assign", tuple(order)), rm, what)


def matrix_pair(rng: random.Random) -> Pair:
    rows, cols = rng.choice([(2, 2), (2, 3), (3, 1)])
    cells = [[o.num(_small(rng, -9, 9)) for _ in range(cols)] for _ in range(rows)]
    cs, rs = _two(rng, latex=True)

    def text(s: r.Style, m) -> str:
        env = s.rng.choice(["pmatrix", "bmatrix"])
        rows_text = r" \\ ".join(" & ".join(r.expr(s, c) for c in row) for row in m)
        return rf"\begin{{{env}}}{rows_text}\end{{{env}}}"

    cand_cells, what = [list(row) for row in cells], ""
    if rng.random() < 0.5:
        if rows == cols and rng.random() < 0.5:
            cand_cells, what = [list(col) for col in zip(*cells)], "transposed"
        else:
            i, j = rng.randrange(rows), rng.randrange(cols)
            cand_cells[i][j], what = mutate(cells[i][j], rng)
    m = lambda c: Meaning("matrix", tuple(tuple(row) for row in c))  # noqa: E731
    return _pair("matrix", text(cs, cand_cells), text(rs, cells), m(cand_cells), m(cells), what)


def equation_pair(rng: random.Random) -> Pair:
    """``2x + 3y = 6`` against ``4x + 6y = 12``, ``6 = 3y + 2x``: the policy's equations equal up to a factor."""
    a, b, c = _small(rng, -6, 6, True), _small(rng, -6, 6, True), _small(rng, -9, 9)
    names = rng.choice([("x", "y"), ("a", "b")])
    rs, cs = _two(rng)
    lhs = o.add(scaled(a, o.var(names[0])), scaled(b, o.var(names[1])))
    ref = f"{r.expr(rs, lhs)} = {c}"
    ka, kb, kc, what = a, b, c, ""
    change = rng.randrange(6)
    if change == 0:
        kc, what = c + 1, "the constant changed"
    elif change == 1:
        kb, what = -b, "a sign flipped"
    elif change == 2:
        return _pair(
            "equation",
            rng.choice(["1 = 1", "0 = 0", f"{names[0]} = {names[0]}"]),
            ref,
            Meaning("nothing"),
            Meaning("lineq", (((names[0], Fraction(a)), (names[1], Fraction(b))), Fraction(c))),
            "a tautology",
        )
    k = rng.choice([1, 1, 2, -1, 3])
    terms = [scaled(k * ka, o.var(names[0])), scaled(k * kb, o.var(names[1]))]
    rng.shuffle(terms)
    left, right = r.expr(cs, o.add(*terms)), r.expr(cs, o.num(k * kc))
    cand = f"{left} = {right}" if rng.random() < 0.7 else f"{right} = {left}"
    cm = Meaning("lineq", (((names[0], Fraction(ka)), (names[1], Fraction(kb))), Fraction(kc)))
    rm = Meaning("lineq", (((names[0], Fraction(a)), (names[1], Fraction(b))), Fraction(c)))
    return _pair("equation", r.finish(cs, cand), r.finish(rs, ref), cm, rm, what)


def magnitude_pair(rng: random.Random) -> Pair:
    """Values a float cannot tell apart: ``10^{20} + 1`` against ``10^{20}``, ``2^{-60}`` against 0, and an
    irrational reference against its decimal expansion to many digits."""
    kind = rng.randrange(3)
    s = r.draw_style(rng)
    if kind == 0:
        base, k = rng.choice([(10, rng.randint(15, 40)), (2, rng.randint(55, 130)), (3, rng.randint(35, 80))])
        big = o.power(o.num(base), k)
        delta = rng.choice([0, 1, -1])
        cand_tree = o.add(big, o.num(delta)) if delta else big
        return _pair(
            "magnitude",
            r.expr(s, cand_tree),
            r.expr(r.draw_style(rng), big),
            o.value(cand_tree),
            o.value(big),
            "off by one at 10^k" if delta else "",
        )
    if kind == 1:
        k = rng.randint(20, 80)
        tiny = o.power(o.num(rng.choice([2, 10])), -k)
        return _pair("magnitude", r.expr(s, tiny), "0", o.value(tiny), o.value(o.num(0)), "a tiny value for 0")
    exact = rng.choice(
        [o.sqrt(o.num(2)), o.PI, o.div(o.num(1), o.num(3)), o.sqrt(o.num(3)), o.add(o.num(1), o.sqrt(o.num(5)))]
    )
    digits = rng.randint(6, 30)
    text = mpmath.nstr(o.evaluate(exact, {}), digits, strip_zeros=False)
    return _pair(
        "magnitude",
        text,
        r.expr(r.draw_style(rng), exact),
        o.value(o.num(Fraction(text))),
        o.value(exact),
        f"{digits} digits for an exact value",
    )


UNITS = sorted(vocabulary.UNITS)  # every spelling the normalizer knows; vocabulary.UNITS[u]: its unit


def units_pair(rng: random.Random) -> Pair:
    """``5\\text{ cm}`` against ``5\\text{ m}`` (different), ``5\\text{ meters}`` against ``5\\text{ m}`` (equal: one
    unit), against ``5`` (equal: a unit on one side is ignored). Spellings and which unit each names come from the
    normalizer's ``vocabulary.UNITS``."""
    value = _small(rng, 1, 99)
    unit = rng.choice(UNITS)
    ref = rng.choice([f"{value}\\text{{ {unit}}}", f"{value} \\mathrm{{{unit}}}", f"{value} {unit}"])
    change = rng.randrange(5)
    cand_value, cand_unit, what = value, unit, ""
    if change == 0:
        cand_unit, what = (
            rng.choice([u for u in UNITS if vocabulary.UNITS[u] != vocabulary.UNITS[unit]]),
            "another unit",
        )
    elif change == 1:
        cand_value, what = value + 1, "a number off by one"
    elif change == 2:
        cand_unit = None
    elif change == 3:  # another spelling of the same unit, or the same unit in another case (Mg is not mg)
        cand_unit = rng.choice([u for u in UNITS if u.lower() == unit.lower()] + [unit])
        what = "" if vocabulary.UNITS[cand_unit] == vocabulary.UNITS[unit] else "a unit in another case"
    cand = (
        str(cand_value)
        if cand_unit is None
        else rng.choice([f"{cand_value}\\text{{ {cand_unit}}}", f"{cand_value} {cand_unit}"])
    )
    same = cand_unit is None or vocabulary.UNITS[cand_unit] == vocabulary.UNITS[unit]
    truth_c = o.value(o.num(cand_value)) if same else Meaning("nothing")
    return _pair("units", cand, ref, truth_c, o.value(o.num(value)), what)


def side_by_side_pair(rng: random.Random) -> Pair:
    """Two values written next to each other (any gap of the normalizer's ``SPACING``, each value in one of its
    ``WRAPPERS`` or after one of its ``MODIFIERS``) are two answers, never their product."""
    a, b = rand_number(rng), rand_number(rng)
    cs, rs = _two(rng, latex=True)
    first, second = r.expr(cs, a), r.expr(cs, b)
    # a thin space before a root, pi or letter can be a product spelling (3\,\sqrt{2}): only wide gaps there
    clear = second[:1].isdigit() or second.startswith(("\\frac", "\\dfrac", "\\tfrac"))
    gap = rng.choice(r.WIDE_GAPS + r.NARROW_GAPS + ["", "  "] if clear else r.WIDE_GAPS)
    dress = rng.randrange(3) if clear else 0  # two numbers: never one value, whatever wraps them
    if dress == 1:
        before, after = rng.choice(list(vocabulary.WRAPPERS.values()))
        first, second = f"{before}{first}{after}", f"{before}{second}{after}"
    elif dress == 2:
        modifier = rng.choice([m for m in vocabulary.MODIFIERS if m not in (r"\left", r"\right")])
        first, second = f"{modifier} {first}", f"{modifier} {second}"
    elif not gap.strip(" ~"):  # bare numbers need a gap that is not nothing
        gap = rng.choice(r.WIDE_GAPS)
    cand = f"{first}{gap}{second}"
    completion = rng.random() < 0.3
    if completion:
        cand = rf"The answer is \boxed{{{cand}}}"
    return _pair(
        "side_by_side",
        cand,
        r.expr(rs, o.mul(a, b)),
        o.values([a, b]),
        o.value(o.mul(a, b)),
        "two values side by side",
        completion,
    )


def tautology_pair(rng: random.Random) -> Pair:
    k = _small(rng, -9, 9)
    name = rng.choice(["x", "y"])
    cand = rng.choice([f"{k} = {k}", "0 = 0", f"{name} = {name}", f"{name} - {name} = 0"])
    return _pair("tautology", cand, f"{name} = {k}", Meaning("nothing"), o.value(o.num(k), name), "a tautology")


def constant_variable_pair(rng: random.Random) -> Pair:
    """``\\pi < 4`` is a true statement about a constant, not the set of x below 4."""
    bound = Fraction(_small(rng, 4, 9))
    const = rng.choice([r"\pi", "e", r"\sqrt{2}", "2"])
    cs, rs = _two(rng, latex=True)
    cand = rng.choice([f"{const} < {bound}", f"{const} \\le {bound}", f"{const} \\in (-\\infty, {bound})"])
    ref = r.union_text(rs, [Interval(None, bound, False, False)])
    return _pair(
        "constant_variable",
        cand,
        ref,
        Meaning("nothing"),
        Meaning("intervals", (Interval(None, bound, False, False),)),
        "a constant as the variable",
    )


def unbraced_root_pair(rng: random.Random) -> Pair:
    """``√16`` is the root of 16 (not √1·6)."""
    n = rng.choice([16, 25, 36, 49, 64, 81, 12, 18, 27, 45])
    value = o.sqrt(o.num(n))
    first, rest = int(str(n)[0]), int(str(n)[1:])
    wrong = o.mul(o.num(first), o.num(rest)) if first == 1 else o.mul(o.sqrt(o.num(first)), o.num(rest))
    if rng.random() < 0.5:
        return _pair(
            "unbraced_root",
            f"√{n}",
            r.expr(r.draw_style(rng), wrong),
            o.value(value),
            o.value(wrong),
            "√ without braces",
        )
    return _pair("unbraced_root", f"√{n}", r.expr(r.draw_style(rng), value), o.value(value), o.value(value))


# ---------------------------------------------------------------- rounding (issue #50): written values, computations


def rand_written(rng: random.Random) -> E:
    """An exact value as a person writes one (the rounding row of docs/verifier.md): a radical, a multiple of pi, e,
    a logarithm, a fraction with no finite decimal; whole numbers, every part needed, nothing that cancels."""
    n = rng.choice(NON_SQUARES)
    kind = rng.randrange(10)
    if kind == 0:
        k = _small(rng, 1, 6)
        if k > 1 and rng.random() < 0.2:
            return o.sqrt(o.num(k * k * n))  # an unsimplified radical (\sqrt{8}) is a written value too
        return scaled(k, o.sqrt(o.num(n)))
    if kind == 1:
        k, d = _small(rng, 1, 5), _small(rng, 2, 9)
        while gcd(k, d) != 1:
            d += 1
        return o.div(scaled(k, o.sqrt(o.num(n))), o.num(d))
    if kind == 2:
        a, b, d = _small(rng, -9, 9, True), _small(rng, -3, 3, True), _small(rng, 2, 6)
        while gcd(gcd(a, b), d) != 1:
            d += 1
        return o.div(o.add(o.num(a), scaled(b, o.sqrt(o.num(n)))), o.num(d))
    if kind == 3:
        return o.add(o.num(_small(rng, -20, 20, True)), scaled(_small(rng, -5, 5, True), o.sqrt(o.num(n))))
    if kind == 4:
        k, d = _small(rng, 1, 9), rng.choice([1, 2, 3, 4, 5, 6, 8, 12])
        while gcd(k, d) != 1:
            k += 1
        return scaled(k, o.PI) if d == 1 else o.div(scaled(k, o.PI), o.num(d))
    if kind == 5:
        return o.add(o.num(_small(rng, -120, 120, True)), scaled(_small(rng, -40, 40, True), o.PI))
    if kind == 6:
        d = rng.choice([1, 6, 8, 12])
        return o.power(o.PI, 2) if d == 1 else o.div(o.power(o.PI, 2), o.num(d))
    if kind == 7:
        pick = rng.randrange(3)
        if pick == 0:
            return o.power(o.EULER, rng.choice([-2, -1, 2, 3]))
        return o.div(o.num(1), o.EULER) if pick == 1 else o.add(o.num(1), o.neg(o.div(o.num(1), o.EULER)))
    if kind == 8:
        if rng.random() < 0.5:
            return o.E("ln", (o.num(rng.randint(2, 30)),))
        base, arg = rng.choice([(2, 3), (2, 5), (2, 7), (3, 2), (3, 10), (10, 2), (10, 3), (5, 2), (6, 2), (2, 12)])
        return o.E("log", (o.num(arg),), base)
    if rng.random() < 0.5:
        q = rng.choice([3, 6, 7, 9, 11, 12, 13, 15])
        p = _small(rng, -40, 40, True)
        while gcd(p, q) != 1:
            p += 1
        return o.num(Fraction(p, q))
    return scaled(_small(rng, 1, 3), o.E("root", (o.num(rng.choice([2, 3, 4, 5, 6, 7, 9, 10])),), 3))


def _round_half_up(value, places: int) -> Fraction | None:
    """The decimal a reference writer gives for ``value`` at ``places`` (None within 10^-30 of a boundary)."""
    scaled = value * mpmath.mpf(10) ** places + mpmath.mpf(1) / 2
    whole = mpmath.floor(scaled)
    if scaled - whole < mpmath.mpf(10) ** -30 or whole + 1 - scaled < mpmath.mpf(10) ** -30:
        return None
    return Fraction(int(whole), 10**places)


def _rounded_reference(tree: E, rng: random.Random) -> tuple[Fraction, int] | None:
    """A decimal the rounding rule reads as rounded: at least two significant digits, no trailing zero."""
    value = o.evaluate(tree, {})
    for places in rng.sample([1, 2, 3, 4], 4):
        rounded = _round_half_up(value, places)
        if rounded is None:
            continue
        digits = abs(rounded.numerator * 10**places // rounded.denominator)
        if digits >= 10 and digits % 10:
            return rounded, places
    return None


VACUOUS = [  # factors equal to 1: written beside an answer, they leave its value and add nothing
    "e^{0}",
    "e^0",
    "x^{0}",
    r"\frac{\pi}{\pi}",
    r"\frac{e}{e}",
    r"\frac{\sqrt{2}}{\sqrt{2}}",
    "1^{7}",
    r"\frac{3}{3}",
    r"\sqrt{1}",
    "1",
    r"\log_{2} 2",
    r"\ln e",
    r"\cos 0",
    r"\pi^{0}",
    r"(\sqrt{3})^{0}",
    r"\frac{2\pi}{2\pi}",
    r"\left(\frac{\pi}{\pi}\right)^{2}",
    r"\sqrt[3]{1}",
    r"\frac{\ln 2}{\ln 2}",
    "n^{0}",
    r"\max(1, 0)",
]


def _epsilon(rng: random.Random, places: int) -> str:
    """A term below the reference's precision (``10^{-places}``), irrational so the sum has no finite decimal."""
    k = rng.randint(places + 2, 11)
    zeros = "1" + "0" * k
    return rng.choice(
        [
            rf"10^{{-{k}}}\pi",
            rf"\frac{{\pi}}{{10^{{{k}}}}}",
            rf"\frac{{\pi}}{{{zeros}}}",
            rf"\frac{{\sqrt{{2}}}}{{{zeros}}}",
            rf"10^{{-{k + 9}}}\sqrt{{3}}",
            rf"\frac{{1}}{{{zeros}\pi}}",
            rf"\frac{{e}}{{{zeros}}}",
            "e^{-12}" if places <= 4 else rf"\frac{{\pi}}{{{zeros}}}",
            rf"\frac{{\ln 2}}{{{zeros}}}",
        ]
    )


def _near_miss(rng: random.Random, reference: Fraction, places: int) -> str:
    """A decimal that is not the reference but rounds to it (``27.54`` for ``27.5``), or a fraction with a finite
    decimal that does (``\\frac{551}{20}`` for ``27.5``)."""
    step = Fraction(1, 10 ** (places + 1))
    value = reference + step * rng.choice([-4, -3, -2, -1, 1, 2, 3, 4])
    if rng.random() < 0.3:
        return rf"\frac{{{value.numerator}}}{{{value.denominator}}}" if value > 0 else _decimal(value, places + 1)
    return _decimal(value, places + 1)


EXACT_COMPUTATIONS = [  # (text, exact value): a computation a question asks to evaluate, whatever its value
    (r"\sin^2 60^\circ", Fraction(3, 4)),
    (r"\cos^{2} 30^{\circ}", Fraction(3, 4)),
    (r"\log_4 32", Fraction(5, 2)),
    (r"\log_8 2", Fraction(1, 3)),
    (r"\tan^2 30^\circ", Fraction(1, 3)),
    (r"\sqrt{\frac{1}{9}}", Fraction(1, 3)),
    (r"\log_{9} 27", Fraction(3, 2)),
    (r"\log_2 \sqrt{8}", Fraction(3, 2)),
    (r"\sqrt[3]{15.625}", Fraction(5, 2)),
    (r"\sqrt{\frac{25}{4}}", Fraction(5, 2)),
    (r"\frac{\ln 8}{\ln 2}", Fraction(3)),
    (r"e^{\ln 2.5}", Fraction(5, 2)),
    (r"\max(5.5 \times 5, 0)", Fraction(55, 2)),
    (r"\frac{1}{\sin 30^\circ}", Fraction(2)),
    (r"\frac{2}{3} \cdot e^{0}", Fraction(2, 3)),
]


def _computation(rng: random.Random, tree: E, written: str, reference: Fraction, places: int) -> tuple[str, str]:
    """(text, what): a candidate the rounding rule refuses though it may round to the reference."""
    exact = _decimal(reference, places)
    kind = rng.randrange(6)
    if kind <= 1:  # a vacuous factor on the written value, the reference, a near miss
        base = rng.choice([written, written, exact, _near_miss(rng, reference, places)])
        factor = rng.choice(VACUOUS)
        op = rng.choice([r" \cdot ", r" \times ", "*", r"\cdot "])
        if rng.random() < 0.5:
            return f"{factor}{op}\\left({base}\\right)", "a vacuous factor"
        return f"\\left({base}\\right){op}{factor}" if "+" in base or "-" in base[1:] else f"{base}{op}{factor}", (
            "a vacuous factor"
        )
    if kind <= 3:  # a term below the precision, on the written value, the reference or a near miss
        base = rng.choice([written, exact, _near_miss(rng, reference, places), _near_miss(rng, reference, places)])
        eps = _epsilon(rng, places)
        sign = rng.choice([" + ", " - "])
        text = f"{base}{sign}{eps}" if rng.random() < 0.7 else f"{eps} + {base}"
        return text, "a term below the precision"
    if kind == 4:  # the reference's value computed from decimals
        k = rng.choice([2, 4, 5])
        square = reference * reference
        spellings = [
            f"{_decimal(reference / k, places + 2) or _decimal(reference / k, places + 3)} \\times {k}",
            f"\\sqrt{{{_decimal(square, 2 * places)}}}",
            f"\\max({_decimal(reference / k, places + 2) or _decimal(reference / k, places + 3)} \\times {k}, 0)",
            f"\\frac{{{_decimal(reference * k, places)}}}{{{k}}}",
        ]
        return rng.choice(spellings), "the reference's value computed"
    k = _small(rng, 2, 9)  # the written value restated as a computation: like terms, a fraction that reduces
    return (
        rng.choice(
            [
                f"{written} + {k} - {k}",
                f"\\frac{{{k}\\left({written}\\right)}}{{{k}}}",
                f"{k} \\cdot \\frac{{{written}}}{{{k}}}",
                f"\\left({written}\\right) \\cdot \\frac{{{k}\\pi}}{{{k}\\pi}}",
                f"{written} + \\sqrt{{2}} - \\sqrt{{2}}",
            ]
        ),
        "the written value restated as a computation",
    )


def _scientific(value: Fraction, places: int) -> str:
    """``0.0231`` as ``2.31 \\times 10^{-2}`` (the same stated places), when the value is below 1; else the decimal."""
    shift = 0
    while 0 < abs(value) * 10**shift < 1:
        shift += 1
    if shift == 0 or places - shift < 1:
        return _decimal(value, places)
    return f"{_decimal(value * 10**shift, places - shift)} \\times 10^{{-{shift}}}"


def rounding_pair(rng: random.Random) -> Pair:
    """A decimal reference rounded from an exact value: the written value (``\\sqrt{2}`` for ``1.41``) is paid when
    it rounds, and nothing else is: not a near written value, not a computation of the reference's value, not a
    vacuous factor (``\\cdot e^{0}``), not a near miss plus a term below the precision (``27.54 + 10^{-20}\\pi``)."""
    cs, rs = _two(rng, latex=rng.random() < 0.8)
    if rng.random() < 0.08:  # a fixed computation with a rational value, against its own decimal
        text, value = rng.choice(EXACT_COMPUTATIONS)
        found = _rounded_reference(o.num(value), rng)
        if found is None:  # a whole number: no rounding at all
            return _pair("rounding", text, str(value), Meaning("computation"), o.value(o.num(value)), "a computation")
        reference, places = found
        rm = Meaning("rounded", (reference,), labels=(places,))
        return _pair("rounding", text, _decimal(reference, places), Meaning("computation"), rm, "a computation")
    while True:
        tree = rand_written(rng)
        found = _rounded_reference(tree, rng)
        if found is not None:
            break
    reference, places = found
    ref_text = _scientific(reference, places) if rng.random() < 0.15 else _decimal(reference, places)
    rm = Meaning("rounded", (reference,), labels=(places,))
    pick = rng.random()
    if pick < 0.5:
        return _pair("rounding", r.finish(cs, r.expr(cs, tree)), ref_text, o.value(tree), rm, "", rng.random() < 0.15)
    if pick < 0.6:
        twin, what = mutate(tree, rng)
        return _pair("rounding", r.expr(cs, twin), ref_text, o.value(twin), rm, what)
    if pick < 0.67:
        other = reference + Fraction(rng.choice([-1, 1]), 10**places)
        other_text = _decimal(other, places)
        om = Meaning("rounded", (other,), labels=(places,))
        return _pair("rounding", r.expr(cs, tree), other_text, o.value(tree), om, "the last digit of the reference")
    text, what = _computation(rng, tree, r.expr(r.draw_style(rng, latex=True), tree), reference, places)
    return _pair("rounding", text, ref_text, Meaning("computation"), rm, what, rng.random() < 0.1)


# ---------------------------------------------------------------- lists of sets (issue #50): never flattened


def set_list_pair(rng: random.Random) -> Pair:
    """``\\{1, 2\\}, \\{3\\}`` is a list of two sets: another partition of the same elements (``\\{1\\}, \\{2, 3\\}``),
    their union (``\\{1, 2, 3\\}``) or a single set for the list are different answers, whatever separates the sets
    (``,`` ``;`` ``and`` ``or``, boxes, two ``ANSWER:`` lines); ``A \\cup B`` is the union, one set."""
    elements = rng.sample(range(-9, 13), rng.choice([3, 4, 5]))
    cut = sorted(rng.sample(range(1, len(elements)), rng.choice([1, 2]) if len(elements) > 3 else 1))
    parts = [elements[a:b] for a, b in zip([0, *cut], [*cut, len(elements)])]
    cs, rs = r.draw_style(rng, latex=True), r.draw_style(rng, latex=True)  # plain {3} is a group, not a set

    def sets_text(s: r.Style, sets, sep: str) -> str:
        shown = [[r._fraction(s, Fraction(v)) for v in rng.sample(part, len(part))] for part in sets]
        return sep.join(r.set_text(s, items) for items in rng.sample(shown, len(shown)))

    def listing(sets) -> Meaning:
        return Meaning("setlist", tuple(frozenset(Fraction(v) for v in part) for part in sets))

    def one_set(values) -> Meaning:
        return o.values([o.num(v) for v in values])

    union_ref = rng.random() < 0.25
    ref_sep = rng.choice([", ", "; ", ",\\ "])
    ref = r.set_text(rs, [str(v) for v in elements]) if union_ref else sets_text(rs, parts, ref_sep)
    rm = one_set(elements) if union_ref else listing(parts)
    sep = rng.choice([", ", "; ", r" \text{ and } ", r" \text{ or } ", r"\text{or}", ",\\quad "])
    change = rng.randrange(6)
    cand_parts, what = [list(p) for p in parts], ""
    if change == 0 and len(elements) > 2:  # move one element to another set: another partition
        source = next(k for k, p in enumerate(cand_parts) if len(p) > 1)
        target = (source + 1) % len(cand_parts)
        cand_parts[target].append(cand_parts[source].pop())
        what = "another partition"
    elif change == 1:  # one set of every element, for a list of sets
        return _pair("set_lists", r.set_text(cs, [str(v) for v in elements]), ref, one_set(elements), rm, "flattened")
    elif change == 2:  # the union, written with \cup
        cup = r" \cup ".join(r.set_text(cs, [str(v) for v in part]) for part in parts)
        return _pair("set_lists", cup, ref, one_set(elements), rm, "" if union_ref else "a union for a list")
    elif change == 3 and len(cand_parts) > 1:
        cand_parts, what = cand_parts[1:], "a set dropped"
    how = rng.randrange(4)
    if how == 0:  # boxes, or ANSWER lines, read as one list by grade()
        boxes = [rf"\boxed{{{r.set_text(cs, [str(v) for v in p])}}}" for p in cand_parts]
        text = rng.choice([", ".join(boxes), "\n".join("ANSWER: " + b[7:-1] for b in boxes)])
        return _pair("set_lists", text, ref, listing(cand_parts), rm, what, completion=True)
    return _pair("set_lists", sets_text(cs, cand_parts, sep), ref, listing(cand_parts), rm, what)


SHAPES: dict[str, Callable[[random.Random], Pair]] = {
    "number": number_pair,
    "decimal": decimal_pair,
    "expression": expression_pair,
    "pm": pm_pair,
    "intervals": interval_pair,
    "roots": roots_pair,
    "tuple": tuple_pair,
    "tuple_as_assignment": tuple_as_assignment_pair,
    "tupleset": tupleset_pair,
    "assign": assign_pair,
    "named_tupleset": named_tupleset_pair,
    "matrix": matrix_pair,
    "equation": equation_pair,
    "magnitude": magnitude_pair,
    "units": units_pair,
    "side_by_side": side_by_side_pair,
    "tautology": tautology_pair,
    "constant_variable": constant_variable_pair,
    "unbraced_root": unbraced_root_pair,
    "rounding": rounding_pair,
    "set_lists": set_list_pair,
}
SHAPES.update(RECALL_SHAPES)  # issue #50's recall within the policy (recall.py): new spellings and their twins


# ---------------------------------------------------------------- held-out recall shapes (the list)


def either_or_pair(rng: random.Random) -> Pair:
    """``t^2 = 9`` against ``t = 3 or t = -3`` (either side may be the reference)."""
    name = rng.choice(["x", "t"])
    k = _small(rng, 1, 9)
    roots = [o.num(k), o.num(-k)]
    cs, rs = _two(rng)
    eq = f"{name}^2 = {k * k}" if rs.latex or rng.random() < 0.5 else f"{name}**2 = {k * k}"
    if rng.random() < 0.4:  # a general quadratic with rational roots, expanded: 2x^2 - 3x - 2 = 0
        pair = rng.sample([Fraction(a, d) for a in range(-6, 7) for d in (1, 2)], 2)
        roots = [o.num(v) for v in pair]
        eq = f"{r.expr(rs, _poly_from_roots(pair, name))} = 0"
    twin = rng.random() < 0.4
    cand_roots = roots[:1] if twin else roots
    words = _roots_text(cs, cand_roots, name, rng.choice(["or", "eqs"]))
    cm, rm = o.values(cand_roots, name), o.values(roots, name)
    if rng.random() < 0.5:
        return _pair("held:either_or", words, eq, cm, rm, "a root missing" if twin else "")
    return _pair("held:either_or", eq, words, rm, cm, "a root missing" if twin else "")


def compound_and_pair(rng: random.Random) -> Pair:
    low, high = sorted(rng.sample(range(-9, 10), 2))
    piece = Interval(Fraction(low), Fraction(high), rng.random() < 0.5, rng.random() < 0.5)
    cs, rs = _two(rng)
    name = rng.choice(["x", "t"])
    cand = r.inequality_text(cs, piece, name, compound=r.and_word(cs))
    twin = rng.random() < 0.4
    ref_piece = Interval(piece.low, piece.high, not piece.closed_low, piece.closed_high) if twin else piece
    ref = rng.choice([r.interval_text(rs, ref_piece), r.inequality_text(rs, ref_piece, name)])
    if -low == high and ref_piece.closed_low == ref_piece.closed_high and rng.random() < 0.5:
        ref = f"|{name}| {'<=' if ref_piece.closed_low else '<'} {high}"
    return _pair(
        "held:compound_and",
        cand,
        ref,
        Meaning("intervals", (piece,), name),
        Meaning("intervals", (ref_piece,), None),
        "an end opened" if twin else "",
    )


NESTED = [  # sqrt(a + b sqrt(c)) = p + q sqrt(c) with (p + q sqrt c)^2 = a + b sqrt c
    (3, 2, 2, 1, 1),
    (5, 2, 6, None, None),
    (7, 4, 3, 2, 1),
    (6, 2, 5, 1, 1),
    (11, 6, 2, 3, 1),
    (9, 4, 5, 2, 1),
]


def cas_radical_pair(rng: random.Random) -> Pair:
    a, b, c, p, q = rng.choice(NESTED)
    nested = o.sqrt(o.add(o.num(a), o.mul(o.num(b), o.sqrt(o.num(c)))))
    if p is None:  # sqrt(5 + 2 sqrt 6) = sqrt 2 + sqrt 3
        simple = o.add(o.sqrt(o.num(2)), o.sqrt(o.num(3)))
    else:
        simple = o.add(o.num(p), scaled(q, o.sqrt(o.num(c))))
    twin = rng.random() < 0.4
    if twin:
        simple, what = mutate(simple, rng)
    else:
        what = ""
    cand = f"sqrt({a}+{b}*sqrt({c}))"
    return _pair("held:cas_radical", cand, r.expr(r.draw_style(rng), simple), o.value(nested), o.value(simple), what)


def cas_exp_pair(rng: random.Random) -> Pair:
    """References with ``e^(...)`` exponents in plain CAS syntax."""
    k = _small(rng, 2, 5)
    name = rng.choice(["x", "t"])
    tree = o.E("exp", (o.mul(o.num(k), o.var(name)),))
    twin = rng.random() < 0.4
    cand_tree = o.E("exp", (o.mul(o.num(k + 1), o.var(name)),)) if twin else tree
    ref = f"e^({k}*{name})"
    cand = rng.choice([rf"e^{{{k}{name}}}", rf"\exp({k}{name})", f"e^({k}*{name})"]).replace(
        str(k), str(k + (1 if twin else 0)), 1
    )
    return _pair("held:cas_exp", cand, ref, o.value(cand_tree), o.value(tree), "exponent changed" if twin else "")


def trailing_dot_pair(rng: random.Random) -> Pair:
    p, q = _small(rng, 1, 30), rng.choice([2, 3, 4, 7])
    twin = rng.random() < 0.4
    value, cand_value = Fraction(p, q), Fraction(p + (1 if twin else 0), q)
    cs = r.draw_style(rng)
    return _pair(
        "held:trailing_dot",
        r._fraction(cs, cand_value),
        f"{p}/{q}.",
        o.value(o.num(cand_value)),
        o.value(o.num(value)),
        "numerator changed" if twin else "",
    )


def rearranged_pair(rng: random.Random) -> Pair:
    """``x + 2y = 3`` against ``x = 3 - 2y`` (and ``2 = y`` against ``y = 2``)."""
    a, b, c = _small(rng, -5, 5, True), _small(rng, -5, 5, True), _small(rng, -9, 9)
    ref_meaning = Meaning("lineq", ((("x", Fraction(a)), ("y", Fraction(b))), Fraction(c)))
    s = r.draw_style(rng, latex=rng.random() < 0.5)
    lhs = o.add(scaled(a, o.var("x")), scaled(b, o.var("y")))
    ref = f"{r.expr(s, lhs)} = {c}"
    twin = rng.random() < 0.4
    cc = c + (1 if twin else 0)
    # solved for y: y = (cc - a x) / b
    rhs = o.add(o.num(cc), scaled(-a, o.var("x")))
    rhs = rhs if b == 1 else o.neg(rhs) if b == -1 else o.div(rhs, o.num(b))
    cs = r.draw_style(rng)
    cand = rng.choice([f"y = {r.expr(cs, rhs)}", f"{r.expr(cs, rhs)} = y"])
    cand_meaning = Meaning("lineq", ((("x", Fraction(a)), ("y", Fraction(b))), Fraction(cc)))
    if rng.random() < 0.3:
        k = _small(rng, -9, 9)
        cand, ref = f"{k + (1 if twin else 0)} = y", f"y = {k}"
        cand_meaning = o.value(o.num(k + (1 if twin else 0)), "y")
        ref_meaning = o.value(o.num(k), "y")
    return _pair("held:rearranged", cand, ref, cand_meaning, ref_meaning, "constant changed" if twin else "")


def complex_pair(rng: random.Random) -> Pair:
    """``(1+2i)(3-i)`` against ``5+5i``."""
    a, b, c, d = (_small(rng, -5, 5, True) for _ in range(4))
    product = o.mul(o.add(o.num(a), scaled(b, o.IMAG)), o.add(o.num(c), scaled(d, o.IMAG)))
    re, im = a * c - b * d, a * d + b * c
    twin = rng.random() < 0.4
    im_c = im + (1 if twin else 0)
    s = r.draw_style(rng)
    flat = o.add(o.num(re), scaled(im_c, o.IMAG)) if re else scaled(im_c, o.IMAG)
    return _pair(
        "held:complex",
        r.expr(s, flat),
        r.expr(r.draw_style(rng), product),
        o.value(flat),
        o.value(product),
        "imaginary part changed" if twin else "",
    )


def degrees_pair(rng: random.Random) -> Pair:
    angle, exact = rng.choice(
        [
            (30, o.num(Fraction(1, 2))),
            (60, o.div(o.sqrt(o.num(3)), o.num(2))),
            (45, o.div(o.sqrt(o.num(2)), o.num(2))),
            (90, o.num(1)),
        ]
    )
    tree = o.E("deg", (o.num(angle),), "sin")
    twin = rng.random() < 0.4
    if twin:
        tree = o.E("deg", (o.num(angle),), "cos")
    cand = rf"\{tree.value} {angle}^\circ" if rng.random() < 0.5 else rf"\{tree.value}({angle}^{{\circ}})"
    return _pair(
        "held:degrees",
        cand,
        r.expr(r.draw_style(rng), exact),
        o.value(tree),
        o.value(exact),
        "cos for sin" if twin else "",
    )


def quadratic_inequality_pair(rng: random.Random) -> Pair:
    """``t^2 \\le 16`` against ``|t| \\le 4`` or ``[-4, 4]``: equivalent by more than a positive factor."""
    k, name, closed = _small(rng, 1, 9), rng.choice(["x", "t"]), rng.random() < 0.5
    piece = Interval(Fraction(-k), Fraction(k), closed, closed)
    twin = rng.random() < 0.4
    ref_piece = Interval(Fraction(-k), Fraction(k), not closed, not closed) if twin else piece
    cs = r.draw_style(rng)
    cand = f"{name}^2{r._le(cs, closed)}{k * k}"
    ref = rng.choice([f"|{name}|{r._le(cs, ref_piece.closed_low)}{k}", r.interval_text(cs, ref_piece)])
    return _pair(
        "held:quadratic_inequality",
        cand,
        ref,
        Meaning("intervals", (piece,), name),
        Meaning("intervals", (ref_piece,), None),
        "strictness changed" if twin else "",
    )


def big_power_pair(rng: random.Random) -> Pair:
    """``(b-y)^{5000}`` against ``(y-b)^{5000}``: equal for an even exponent, a sign apart for an odd one."""
    n = rng.choice([2, 4, 10, 50, 500, 5000, 3, 51, 4999])
    b, y = o.var("b"), o.var("y")
    left = o.power(o.add(b, o.neg(y)), n)
    right = o.power(o.add(y, o.neg(b)), n)
    s = r.draw_style(rng)
    return _pair(
        "held:big_power",
        r.expr(s, left),
        r.expr(r.draw_style(rng), right),
        o.value(left),
        o.value(right),
        "odd exponent" if n % 2 else "",
    )


TRIG = [  # (left, right): the oracle decides whether each pair is an identity
    (lambda x: o.add(o.num(1), o.neg(o.power(o.func("cos", x), 2))), lambda x: o.power(o.func("sin", x), 2)),
    (lambda x: o.func("sin", o.mul(o.num(2), x)), lambda x: o.mul(o.num(2), o.func("sin", x), o.func("cos", x))),
    (lambda x: o.func("cos", o.add(o.div(o.PI, o.num(2)), o.neg(x))), lambda x: o.func("sin", x)),
    (
        lambda x: o.func("cos", o.mul(o.num(2), x)),
        lambda x: o.add(o.num(1), o.neg(o.mul(o.num(2), o.power(o.func("sin", x), 2)))),
    ),
    (lambda x: o.func("cos", o.mul(o.num(2), x)), lambda x: o.add(o.num(1), o.neg(o.power(o.func("sin", x), 2)))),
    (lambda x: o.func("sin", o.add(x, o.PI)), lambda x: o.func("sin", x)),
    (lambda x: o.func("sin", o.add(x, o.PI)), lambda x: o.neg(o.func("sin", x))),
]


def trig_identity_pair(rng: random.Random) -> Pair:
    """Identities that need a few rewrite steps (and near misses that are not identities)."""
    left, right = rng.choice(TRIG)
    x = o.var(rng.choice(["x", "t"]))
    a, b = left(x), right(x)
    if rng.random() < 0.5:
        a, b = b, a
    return _pair(
        "held:trig_identity", r.expr(r.draw_style(rng), a), r.expr(r.draw_style(rng), b), o.value(a), o.value(b), ""
    )


HELD_OUT: dict[str, Callable[[random.Random], Pair]] = {
    "held:either_or": either_or_pair,
    "held:compound_and": compound_and_pair,
    "held:cas_radical": cas_radical_pair,
    "held:cas_exp": cas_exp_pair,
    "held:trailing_dot": trailing_dot_pair,
    "held:rearranged": rearranged_pair,
    "held:complex": complex_pair,
    "held:degrees": degrees_pair,
    "held:quadratic_inequality": quadratic_inequality_pair,
    "held:big_power": big_power_pair,
    "held:trig_identity": trig_identity_pair,
}

ALL_SHAPES = {**SHAPES, **HELD_OUT}


def pairs(shapes=None):
    """A hypothesis strategy of pairs: a shape and a seed, built by ``make_pair`` (shrinks toward seed 0)."""
    from hypothesis import strategies as st

    return st.builds(make_pair, st.sampled_from(sorted(shapes or ALL_SHAPES)), st.integers(0, 2**32 - 1))


def make_pair(shape: str, seed: int) -> Pair:
    """The pair a shape builds from one seed (the repro of any finding is ``make_pair(shape, seed)``)."""
    return ALL_SHAPES[shape](random.Random(seed))
