r"""Structural limits on a parsed expression, decided before any symbolic work.

"Too complex" must mean the same thing on every machine: a CPU-time budget made the same pair True
on a quiet machine and False on a busy one. So whether sympy may work on an expression is decided
here, from the tree alone (its size, polynomial degree, exponents, free symbols, nesting of
functions, the terms an expansion could produce), and the time guards of ``worker_pool`` are only a
safety net that raises. The limits are sized from the references real datasets use (the shipped
GSM8K/MATH fixtures and the verifier tables all pass with room to spare; see docs/verifier.md).
A candidate over a limit is False (``too_complex``); a reference over one is ``InvalidReference``.
"""

from __future__ import annotations

import math

import sympy

from rewards.math.answer_tree import TooComplex

MAX_NODES = 400  # sympy tree nodes of one leaf
MAX_LOG10 = 20000.0  # largest |value| we let sympy build: 10**20000 (2004! is ~10**5700)
MAX_FACTORIAL = 5000
MAX_DEGREE = 10_000  # polynomial degree bound (``(b-y)^{5000}`` is 5000)
MAX_FREE_SYMBOLS = 8
MAX_NESTING = 4  # functions and radicals inside one another (``\sqrt{\sqrt{11}+\sqrt{194}}`` is 2)
# terms of the sums and products with numeric bounds, nested ones multiplied (``\prod_{k=1}^{100} k`` is 100): sympy
# evaluates a definite sum or product term by term only below 100 terms (``eval_sum``/``_eval_product``); above,
# it first tries its symbolic algorithms, whose work no tree bounds (``\sum_{k=1}^{1000} \frac{1}{k^k}`` ran > 15 s)
MAX_SERIES_TERMS = 100
# the radicand of a root of a number (``\\sqrt{N}``, ``N^{1/3}``): sympy simplifies such a root by trial division
# and primality tests on N (``\\sqrt{10^{1000}+1}`` ~0.2 CPU-s, ``\\sqrt{10^{4000}+1}`` over 5 s)
MAX_RADICAND_LOG10 = 100.0
MAX_EXPANDED_TERMS = 2000  # terms an expansion may produce before exact methods that avoid expanding take over
_CAP = 10**12  # estimates saturate here (they only need to be compared with the limits)
_UNBOUNDED = (sympy.Integral, sympy.Limit)  # no bound on their work can be read from the tree


def describe(obj: object, limit: int = 300) -> str:
    """``str(obj)`` for a message, cut at ``limit`` characters; never raises (Python refuses to print an integer
    over 4,300 digits, and a value up to 10^20000 is allowed: ``\\binom{20000}{10000}``)."""
    try:
        text = str(obj)
    except ValueError:
        return f"(a {type(obj).__name__} holding a number over 4,300 digits)"
    return text if len(text) <= limit else text[:limit] + "..."


def _walk_depth(expr: sympy.Basic, depth: int = 0) -> None:
    if depth > 50:
        raise TooComplex("expression nested too deeply")
    for arg in expr.args:
        _walk_depth(arg, depth + 1)


def _series_env(series: sympy.Basic, env: dict | None) -> dict | None:
    """The bound variables of a sum or product with numeric bounds, each as log10 of its largest |value|; None
    when a bound is symbolic."""
    inner = dict(env or {})
    for limits in series.limits:
        if len(limits) != 3 or not (limits[1].is_Integer and limits[2].is_Integer):
            return None
        inner[limits[0]] = math.log10(max(abs(int(limits[1])), abs(int(limits[2])), 1))
    return inner


def log10_bound(expr: sympy.Basic, depth: int = 0, env: dict | None = None) -> float:
    r"""An upper bound on log10 of |value| (of numerator and denominator) for the numeric parts of ``expr``
    (inf when unbounded). ``env`` maps the bound variable of an enclosing sum or product to log10 of its
    largest |value|: ``\prod_{k=1}^{N} t(k)`` is at most N times its largest term, and so (as exact
    fractions over a common denominator) is ``\sum_{k=1}^{N} t(k)``."""
    if depth > 50:
        raise TooComplex("expression nested too deeply")
    if expr.is_Integer:
        return math.log10(max(abs(int(expr)), 1))
    if expr.is_Rational:
        return max(math.log10(max(abs(expr.p), 1)), math.log10(expr.q))
    if env and expr in env:
        return env[expr]
    if isinstance(expr, (sympy.Sum, sympy.Product)):
        inner = _series_env(expr, env)
        if inner is not None:
            terms = _series_terms(expr) or 0
            return terms * max(log10_bound(expr.function, depth + 1, inner), 0.5)
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Rational and not exponent.is_Integer:  # its size, not its digits' (sqrt: 1/2, not 2)
            exponent_log = math.log10(abs(exponent.p)) - math.log10(exponent.q)
        else:
            exponent_log = log10_bound(exponent, depth + 1, env)
        base_log = log10_bound(base, depth + 1, env)
        if exponent_log > 6:
            if base_log == 0 and base.is_number:  # 1^huge, 0^huge: still bounded
                return 0.0
            return math.inf
        return (10**exponent_log) * max(base_log, 0.5)
    if isinstance(expr, sympy.factorial):
        (arg,) = expr.args
        if arg.is_Integer:
            n = int(arg)
        elif arg.is_number:
            raise TooComplex(f"factorial of {describe(arg, 40)} is beyond {MAX_FACTORIAL}!")
        elif env and arg.free_symbols <= set(env):  # of a sum's bound variable: at most its largest value
            n = int(10 ** min(log10_bound(arg, depth + 1, env), 7))
        else:
            return 0.0  # of a free symbol: no value is computed
        if n > MAX_FACTORIAL:
            raise TooComplex(f"factorial of {describe(arg, 40)} is beyond {MAX_FACTORIAL}!")
        return n * math.log10(max(n, 2))
    if isinstance(expr, sympy.binomial) and env and expr.free_symbols <= set(env):
        return 10 ** min(log10_bound(expr.args[0], depth + 1, env), 7) * math.log10(2) + 0.5  # C(n, k) <= 2^n
    if not expr.args:
        return 0.0
    parts = [log10_bound(arg, depth + 1, env) for arg in expr.args]
    if expr.is_Mul or isinstance(expr, sympy.Function):
        return sum(parts) + 0.5
    return max(parts) + 0.5


def degree_bound(expr: sympy.Basic, env: dict | None = None) -> int:
    """An upper bound on the total degree in the free symbols, read from the tree (function arguments count).

    ``(b-y)^{5000}`` is 5000, ``x^{1/2}`` counts as 1, ``\\sin(x^3)`` as 3; ``\\prod_{k=1}^{10} x^k`` as 10 * 10
    (``env``: the bound variables of the enclosing sums and products, which are numbers).
    """
    if env and expr in env:
        return 0
    if expr.is_Symbol:
        return 1
    if not expr.args or expr.is_number:
        return 0
    if isinstance(expr, (sympy.Sum, sympy.Product)) and (inner_env := _series_env(expr, env)) is not None:
        degree = degree_bound(expr.function, inner_env)
        return min(_CAP, degree * (_series_terms(expr) or 0)) if isinstance(expr, sympy.Product) else degree
    if expr.is_Pow:
        base, exponent = expr.args
        inner = degree_bound(base, env)
        if inner == 0:
            return degree_bound(exponent, env)
        if exponent.is_Rational:
            return min(_CAP, inner * max(1, -(-abs(int(exponent.p)) // int(exponent.q))))
        if env and exponent.free_symbols and exponent.free_symbols <= set(env):  # x^k: up to x^{max k}
            return min(_CAP, inner * math.ceil(10 ** min(log10_bound(exponent, 0, env), 12)))
        return min(_CAP, inner + degree_bound(exponent, env))
    parts = [degree_bound(arg, env) for arg in expr.args]
    if expr.is_Mul:
        return min(_CAP, sum(parts))
    return max(parts)


def nesting(expr: sympy.Basic) -> int:
    """How many functions and radicals sit inside one another (``\\sin(\\sqrt{x})`` is 2)."""
    inner = max((nesting(arg) for arg in expr.args), default=0)
    if isinstance(expr, sympy.Function) or (expr.is_Pow and not expr.args[1].is_Integer):
        return inner + 1
    return inner


def _series_terms(expr: sympy.Basic) -> int | None:
    """Terms of a sum or product over numeric bounds; None when a bound is symbolic."""
    total = 1
    for limits in expr.limits:
        if len(limits) != 3 or not (limits[1].is_Integer and limits[2].is_Integer):
            return None
        total *= max(0, int(limits[2]) - int(limits[1]) + 1)
    return total


def series_terms(expr: sympy.Basic) -> int:
    """Terms sympy evaluates one by one for the sums and products over numeric bounds in ``expr``: a nested one's
    terms are multiplied by its enclosing ones' (``\\sum_{i=1}^{10}\\sum_{j=1}^{10} ij`` is 10 * (1 + 10))."""
    if isinstance(expr, (sympy.Sum, sympy.Product)):
        terms = _series_terms(expr)
        inner = series_terms(expr.function)
        return 0 if terms is None else min(_CAP, terms * (1 + inner))
    return min(_CAP, sum(series_terms(arg) for arg in expr.args))


def symbolic_series(expr: sympy.Basic) -> bool:
    """Whether ``expr`` holds a sum or product over symbolic bounds (``\\sum_{k=0}^{n-1}``): no bound on the work of
    evaluating or rewriting it can be read from the tree, so such an answer is compared only as written."""
    return isinstance(expr, sympy.Basic) and any(
        _series_terms(series) is None for series in expr.atoms(sympy.Sum, sympy.Product)
    )


def largest_radicand(expr: sympy.Basic, env: dict | None = None) -> float:
    """log10 of the largest number under a root (a power with a non-integer exponent), the bound variables of
    sums and products at their largest (``\\sum_{k=1}^{100} \\sqrt{k^k+1}``: 200); 0 when there is none."""
    if isinstance(expr, (sympy.Sum, sympy.Product)) and (inner := _series_env(expr, env)) is not None:
        return largest_radicand(expr.function, inner)
    found = 0.0
    if expr.is_Pow and not expr.args[1].is_Integer:
        base = expr.args[0]
        if base.free_symbols <= set(env or ()):
            found = log10_bound(base, 0, env)
    return max([found, *(largest_radicand(arg, env) for arg in expr.args)])


def check_limits(expr: sympy.Basic) -> None:
    """Raise ``TooComplex`` naming the first structural limit ``expr`` exceeds."""
    for count, _ in enumerate(sympy.preorder_traversal(expr)):
        if count > MAX_NODES:
            raise TooComplex(f"more than {MAX_NODES} nodes")
    if not isinstance(expr, sympy.Basic):
        return
    _walk_depth(expr)
    if log10_bound(expr) > MAX_LOG10:
        raise TooComplex(f"a number in it is larger than 10^{MAX_LOG10:.0f}")
    if (radicand := largest_radicand(expr)) > MAX_RADICAND_LOG10:
        raise TooComplex(f"a root of a number up to 10^{radicand:.0f}, over 10^{MAX_RADICAND_LOG10:.0f}")
    if expr.has(*_UNBOUNDED):
        raise TooComplex("an unevaluated integral or limit (no bound on its work can be read from it)")
    if (terms := series_terms(expr)) > MAX_SERIES_TERMS:
        raise TooComplex(f"a sum or product over more than {MAX_SERIES_TERMS} terms ({terms}, nested ones multiplied)")
    if len(expr.free_symbols) > MAX_FREE_SYMBOLS:
        raise TooComplex(f"more than {MAX_FREE_SYMBOLS} free symbols")
    if (degree := degree_bound(expr)) > MAX_DEGREE:
        raise TooComplex(f"polynomial degree up to {degree}, over {MAX_DEGREE}")
    if (depth := nesting(expr)) > MAX_NESTING:
        raise TooComplex(f"functions or radicals nested {depth} deep, over {MAX_NESTING}")


def _monomials(terms: int, power: int) -> int:
    """Terms of ``(t_1 + ... + t_terms)^power`` expanded: C(power + terms - 1, terms - 1), saturated."""
    if terms <= 1:
        return 1
    if terms - 1 > 60 or power > 10**6:
        return _CAP
    return min(_CAP, math.comb(power + terms - 1, terms - 1))


def expanded_terms(expr: sympy.Basic) -> int:
    """An upper bound on the terms ``cancel``/``expand`` can produce for ``expr`` (numerator and denominator).

    Read from the tree: a sum adds, a product multiplies, an integer power is a multinomial, and
    fractions added over a common denominator multiply each numerator by the other denominators.
    """
    numerator, denominator, inner = _estimate(expr)
    return min(_CAP, max(numerator + denominator, inner))


def _estimate(expr: sympy.Basic) -> tuple[int, int, int]:
    """(numerator terms, denominator terms, the largest estimate inside a function or radical)."""
    if expr.is_Atom:
        return 1, 1, 0
    if expr.is_Add:
        parts = [_estimate(arg) for arg in expr.args]
        denominator, numerator = 1, 0
        for k, (num, _, _) in enumerate(parts):
            others = 1
            for j, (_, den, _) in enumerate(parts):
                if j != k:
                    others = min(_CAP, others * den)
            numerator = min(_CAP, numerator + num * others)
        for _, den, _ in parts:
            denominator = min(_CAP, denominator * den)
        return numerator, denominator, max(inner for _, _, inner in parts)
    if expr.is_Mul:
        numerator = denominator = 1
        inner = 0
        for num, den, deeper in map(_estimate, expr.args):
            numerator, denominator, inner = min(_CAP, numerator * num), min(_CAP, denominator * den), max(inner, deeper)
        return numerator, denominator, inner
    if expr.is_Pow and expr.args[1].is_Integer:
        num, den, inner = _estimate(expr.args[0])
        power = int(expr.args[1])
        if power < 0:
            num, den, power = den, num, -power
        return _monomials(num, power), _monomials(den, power), inner
    # a function, a radical, a symbolic power: one term outside; what is inside may be expanded too
    inner = max((expanded_terms(arg) for arg in expr.args), default=0)
    return 1, 1, inner


MAX_POLY_WORK = 500_000  # coefficient multiplications (weighted by their size) exact polynomial arithmetic may do
# a base factored on its own (``b - y`` in ``(b-y)^{5000}``, by ``sympy.factor_list``): multivariate factoring costs
# seconds where univariate takes milliseconds (``x^{24}-y^{24}`` ~0.8 CPU-s, ``(x+y+z)^8-w^8`` expanded ~0.2, their
# univariate kin ~0.01), and so do large coefficients (``x^{24}-10^{9000}``, ``x^2-10^{2000}y^2``: over 5 s)
MAX_FACTOR_DEGREE = 24  # in one variable
MAX_FACTOR_DEGREE_MULTI = 6  # total degree, in several variables
MAX_FACTOR_TERMS_MULTI = 30  # terms once expanded, in several variables
MAX_FACTOR_LOG10 = 40  # coefficients up to about 10^40
MAX_SIMPLIFY_NODES = 80  # rewrite steps (simplify) run only on a difference this small
MAX_REWRITE_DEGREE = 12  # ... and of at most this degree (trigsimp on sin^40 cos^40 runs for minutes)
MAX_REWRITE_NESTING = 2  # ... and nesting (simplify on sin(e^{cos(9y)}) forms takes seconds)


def _dense_terms(degree: int, generators: int) -> int:
    """Most terms a polynomial of this total degree in this many generators can have."""
    if generators <= 0 or degree <= 0:
        return 1
    if generators > 60 or degree > 10**6:
        return _CAP
    return min(_CAP, math.comb(degree + generators, generators))


def polynomial_work(expr: sympy.Basic, generators: int) -> int:
    """Estimated cost of evaluating ``expr`` exactly as a fraction of polynomials (``symbolic.as_fraction``).

    Counted in coefficient multiplications, each weighted by its size (``1 + degree / 200``: a
    coefficient of a degree-D power has about D/3 digits). Read from the tree, the same on every machine.
    """
    return _work(expr, max(generators, 1))[4]


def _work(expr, k: int) -> tuple[int, int, int, int, int]:
    """(numerator terms, denominator terms, numerator degree, denominator degree, work)."""
    if expr.is_Rational:
        return 1, 1, 0, 0, 0
    if expr.is_Add:
        parts = [_work(arg, k) for arg in expr.args]
        num, den, dn, dd, work = parts[0]
        for n2, d2, dn2, dd2, w2 in parts[1:]:
            weight = 1 + max(dn, dn2, dd, dd2) // 200
            if d2 == 1 and den == 1 and dd == dd2 == 0:
                work += w2 + n2
                num, dn = min(_CAP, num + n2), max(dn, dn2)
                continue
            work += w2 + (num * d2 + n2 * den + den * d2) * weight
            dn, dd = max(dn + dd2, dn2 + dd), dd + dd2
            num = min(_CAP, num * d2 + n2 * den, _dense_terms(dn, k))
            den = min(_CAP, den * d2, _dense_terms(dd, k))
        return num, den, dn, dd, min(_CAP, work)
    if expr.is_Mul:
        parts = [_work(arg, k) for arg in expr.args]
        num, den, dn, dd, work = parts[0]
        for n2, d2, dn2, dd2, w2 in parts[1:]:
            dn, dd = dn + dn2, dd + dd2
            work += w2 + (num * n2 + den * d2) * (1 + max(dn, dd) // 200)
            num, den = min(_CAP, num * n2, _dense_terms(dn, k)), min(_CAP, den * d2, _dense_terms(dd, k))
        return num, den, dn, dd, min(_CAP, work)
    if expr.is_Pow and expr.args[1].is_Integer:
        num, den, dn, dd, work = _work(expr.args[0], k)
        power = int(expr.args[1])
        if power < 0:
            num, den, dn, dd, power = den, num, dd, dn, -power
        out = []
        for terms, degree in ((num, dn), (den, dd)):
            result = min(_monomials(terms, power), _dense_terms(degree * power, k))
            weight = 1 + degree * power // 200
            if terms <= 5:  # sympy raises up to 5 terms by the multinomial formula
                work += result * terms * weight
            else:  # by repeated squaring: the last square dominates
                half = min(_monomials(terms, power // 2), _dense_terms(degree * power // 2, k))
                work += 2 * half * half * weight
            out.append(min(_CAP, result))
        return out[0], out[1], min(_CAP, dn * power), min(_CAP, dd * power), min(_CAP, work)
    return 1, 1, 1, 0, 0  # a symbol, or a generator (a function, a radical, pi)


def may_factor(expr: sympy.Basic) -> bool:
    """Whether ``sympy.factor_list`` may run on the sum ``expr``: decided from the tree (variables, degree, terms
    once expanded, coefficient size), so that factoring costs milliseconds, the same decision on every machine."""
    if log10_bound(expr) > MAX_FACTOR_LOG10:
        return False
    degree, terms = degree_bound(expr), expanded_terms(expr)
    if len(expr.free_symbols) <= 1:
        return degree <= MAX_FACTOR_DEGREE and terms <= MAX_EXPANDED_TERMS
    return degree <= MAX_FACTOR_DEGREE_MULTI and terms <= MAX_FACTOR_TERMS_MULTI
