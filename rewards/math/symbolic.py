r"""Symbolic equivalence of two math leaves, run inside the verifier's worker process.

Parsing is done by ``latex2sympy2_extended`` (an ANTLR LaTeX grammar: no Python is ever
evaluated). Before sympy computes anything, the parsed tree is checked against size and
magnitude bounds, so ``9^{9^{9^9}}`` or ``1000000!`` are rejected instead of computed.
Whether sympy may work on a pair is decided from the trees (``rewards.math.complexity``), and the
decision procedure is deterministic: exact methods first (a canonical factored form, exact
arithmetic on fractions of polynomials, trigonometric functions as rational functions of e^{ix}), then
rewrite steps (``simplify``) only on
differences under a size cap. It is only ever called through ``rewards.math.worker_pool``, whose CPU
and wall-clock guards are a safety net that raises, never a verdict.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

import sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from latex2sympy2_extended.math_normalization import NormalizationConfig, normalize_latex
from sympy import QQ
from sympy.core.relational import Relational
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.trigonometric import TrigonometricFunction
from sympy.polys.domains import QQ_I
from sympy.polys.rings import ring

from rewards.math import cas_syntax, solution_sets
from rewards.math.answer_tree import (  # one pair of candidate-failure types, host and worker
    TooComplex,
    Unparseable,
)
from rewards.math.complexity import (
    MAX_EXPANDED_TERMS,
    MAX_POLY_WORK,
    MAX_REWRITE_DEGREE,
    MAX_REWRITE_NESTING,
    MAX_SIMPLIFY_NODES,
    check_limits,
    degree_bound,
    describe,
    expanded_terms,
    may_factor,
    nesting,
    polynomial_work,
    series_terms,
    symbolic_series,
)
from rewards.math.latex2sympy_seam import parse_latex

_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none", equations=False
)
# the library's mixed-number rule adds ANY integer to a positive rational beside it: 2(3) is 5, 3(1/2) is 7/2;
# mixed numbers are written out first (_explicit_mixed_numbers), only for a whole number before a proper fraction
_CONVERSION = ConversionConfig(
    interpret_as_mixed_fractions=False,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)


def to_latex(text: str) -> str:
    """Plain-text math (``sqrt(2)/2``, ``x**2``, ``pi``) rewritten into the LaTeX the grammar reads."""
    return cas_syntax.to_latex(text)


def check_bounds(expr: sympy.Basic) -> None:
    """The structural limits (``rewards.math.complexity``): decided from the tree, before any symbolic work."""
    check_limits(expr)


_MIXED_NUMBER = re.compile(
    r"(?<![\w.}\])\]^_!])(\d+)\s*(?:\\[,;: !]\s*)*\\[dt]?frac\s*(?:\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}|(\d)(\d))"
)


def _explicit_mixed_numbers(latex: str) -> str:
    r"""``2\frac{1}{3}`` -> ``(2+\frac{1}{3})``: a whole number right before a proper fraction of digits.

    Anything else side by side is a product (``2(3)`` is 6, ``3(1/2)`` is 3/2), as the grammar reads it once
    its own mixed-number rule, which adds any integer to any positive rational beside it, is off.
    """

    def explicit(m: re.Match) -> str:
        num, den = (m.group(2), m.group(3)) if m.group(2) is not None else (m.group(4), m.group(5))
        if not 0 < int(num) < int(den):
            return m.group()
        return f"({m.group(1)}+\\frac{{{num}}}{{{den}}})"

    return _MIXED_NUMBER.sub(explicit, latex)


def _parse_latex(latex: str):
    return parse_latex(_explicit_mixed_numbers(latex), _CONVERSION)


def _real_odd_roots(expr: sympy.Basic) -> sympy.Basic:
    """``\\sqrt[3]{-8}`` is -2: an odd root of a negative rational is the real root (sympy's is the principal complex
    one, ``1 + \\sqrt{3}i``), as contest answers read it; ``(-8)^{2/3}`` is 4. Even roots stay complex (``\\sqrt{-4}``
    is ``2i``)."""

    def odd_root_of_negative(node) -> bool:
        if not (node.is_Pow and node.args[1].is_Rational and not node.args[1].is_Integer):
            return False
        return node.args[1].q % 2 == 1 and node.args[0].is_Rational and node.args[0] < 0

    def real_root(node):
        base, exponent = node.args
        return (-1) ** exponent.p * sympy.Pow(-base, exponent)

    return expr.replace(odd_root_of_negative, real_root)


def _evaluate_series(expr: sympy.Basic) -> sympy.Basic:
    """Sums and products over numeric bounds written out term by term (at most ``MAX_SERIES_TERMS`` in all, which
    ``check_bounds`` allowed from the tree: sympy's direct evaluation, never its symbolic summation)."""
    return expr.replace(lambda e: isinstance(e, (sympy.Sum, sympy.Product)), lambda e: e.doit())


@lru_cache(maxsize=4096)
def parse_leaf(text: str):
    """Parse one leaf (no top-level tuples, units or hedges; ``rewards.math.structure`` removed those)."""
    latex = to_latex(text)
    try:
        latex = normalize_latex(latex, _NORMALIZATION)
        expr = _parse_latex(latex)
    except (TooComplex, Unparseable):
        raise
    except Exception as exc:  # the grammar reports every syntax error as a bare Exception
        raise Unparseable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if isinstance(expr, sympy.MatrixBase):
        for element in expr:
            check_bounds(element)
    else:
        check_bounds(expr)
        if series_terms(expr) and not symbolic_series(expr):
            try:
                expr = _evaluate_series(expr)
            except (TypeError, ValueError, NotImplementedError, ZeroDivisionError, RecursionError) as exc:
                raise Unparseable(f"a sum or product sympy cannot write out: {describe(exc, 120)}") from None
            check_bounds(expr)  # what the sums and products came to is held to the same limits
        if isinstance(expr, sympy.Basic):
            expr = _real_odd_roots(expr)
    if isinstance(expr, sympy.Basic) and expr.has(sympy.nan, sympy.zoo):
        raise Unparseable("undefined value (nan or complex infinity)")
    return expr


def _numeric(expr: sympy.Expr, digits: int = 30, subs: dict | None = None):
    value = expr.evalf(digits, subs=subs)  # with subs: no exact substituted tree is built first
    if value.has(sympy.nan, sympy.zoo):
        return None
    return value


def _probe_differs(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Cheap disproof: evaluate both at fixed rational points; clearly different values mean unequal."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    points = [sympy.Rational(7, 13), sympy.Rational(-11, 17), sympy.Rational(23, 7)]
    for shift in range(len(points)):
        subs = {s: points[(i + shift) % len(points)] + i for i, s in enumerate(symbols)}
        va, vb = _numeric(a, subs=subs), _numeric(b, subs=subs)
        if va is None or vb is None or not (va.is_number and vb.is_number):
            return False
        scale = max(abs(va), abs(vb), sympy.Integer(1))
        try:
            if abs(va - vb) > scale * sympy.Float("1e-20", 30):
                return True
        except TypeError:  # complex values: fall back to simplify
            return False
    return False


def _is_logical(expr) -> bool:
    """Relations, And/Or, true/false. (Not ``Boolean``: sympy's Symbol is a Boolean subclass.)"""
    return isinstance(expr, (Relational, sympy.logic.boolalg.BooleanFunction, sympy.logic.boolalg.BooleanAtom))


class _Generators:
    """The ring a pair is evaluated in: its free symbols, then each non-rational part (``\\sin(x)``,
    ``\\sqrt{2}``, ``\\pi``) as one more indeterminate, so that one fraction of polynomials stands for it."""

    def __init__(self, *exprs: sympy.Expr, gaussian: bool = False) -> None:
        self.gaussian = gaussian  # numbers are a + bi (QQ_I): the imaginary unit is a number, not an indeterminate
        self.symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
        self.others: list[sympy.Expr] = []
        for expr in exprs:
            self._collect(expr)
        names = [f"g{k}" for k in range(len(self.symbols) + len(self.others))] or ["g0"]
        self.ring, *gens = ring(names, QQ_I if gaussian else QQ)
        self.index = {part: gens[k] for k, part in enumerate(self.symbols + self.others)}

    def _number(self, expr) -> bool:
        return expr.is_Rational or (self.gaussian and expr is sympy.I)

    def _collect(self, expr) -> None:
        if expr.is_Symbol or self._number(expr):
            return
        if expr.is_Add or expr.is_Mul or (expr.is_Pow and expr.args[1].is_Integer):
            for arg in expr.args:
                self._collect(arg)
        elif expr not in self.others:
            self.others.append(expr)

    @property
    def pure(self) -> bool:
        """Only symbols and rational numbers: then unequal fractions of polynomials are unequal functions."""
        return not self.others

    def as_fraction(self, expr) -> tuple:
        """``expr`` as (numerator, denominator) polynomials, exactly, without expanding sympy expressions."""
        if self._number(expr):
            return self.ring.ground_new(self.ring.domain.from_sympy(expr)), self.ring.one
        if expr in self.index:
            return self.index[expr], self.ring.one
        if expr.is_Add:
            num, den = self.ring.zero, self.ring.one
            for arg in expr.args:
                n2, d2 = self.as_fraction(arg)
                num, den = (num + n2, den) if d2 == den else (num * d2 + n2 * den, den * d2)
            return num, den
        if expr.is_Mul:
            num, den = self.ring.one, self.ring.one
            for arg in expr.args:
                n2, d2 = self.as_fraction(arg)
                num, den = num * n2, den * d2
            return num, den
        num, den = self.as_fraction(expr.args[0])  # an integer power (everything else is a generator)
        power = int(expr.args[1])
        if power < 0:
            num, den, power = den, num, -power
        return num**power, den**power


def _factored(expr) -> tuple[sympy.Expr, Counter] | None:
    """``c * prod(f_i^e_i)`` with each f irreducible over Q (``sympy.factor_list`` of each small base), or None.

    Unique factorization makes this a canonical form of a rational function without expanding it:
    ``(b-y)^{5000}`` and ``(y-b)^{5000}`` are both ``(y - b)^5000``. Only products of powers of bases of
    a size ``complexity.may_factor`` allows (univariate up to degree 24, multivariate up to degree 6).
    """
    coefficient, factors = sympy.Integer(1), Counter()
    stack = [(expr, 1)]
    while stack:
        part, power = stack.pop()
        if part.is_Rational:
            coefficient *= part**power
        elif part.is_Mul:
            stack.extend((arg, power) for arg in part.args)
        elif part.is_Pow and part.args[1].is_Integer:
            stack.append((part.args[0], power * int(part.args[1])))
        elif part.is_Symbol:
            factors[part] += power
        elif part.is_Add:
            if not part.free_symbols or not may_factor(part):
                return None
            try:
                c, pieces = sympy.factor_list(part)
            except sympy.PolynomialError:  # fractions inside the sum: not a product of polynomials
                return None
            coefficient *= c**power
            for piece, multiplicity in pieces:
                factors[piece] += multiplicity * power
        else:
            return None
    return coefficient, Counter({f: e for f, e in factors.items() if e})


def _rational_decision(a, b) -> bool | None:
    """Exact for rational functions: True/False, or None when generators (``\\sin(x)``) leave it open.

    Raises ``TooComplex`` when a pure rational pair is beyond both exact methods' structural limits.
    """
    gens = _Generators(a, b, gaussian=a.has(sympy.I) or b.has(sympy.I))  # i is a number there, not a letter
    factored_a = _factored(a) if gens.pure and not gens.gaussian else None
    factored_b = _factored(b) if factored_a is not None else None
    if factored_b is not None:
        return factored_a == factored_b
    work = polynomial_work(a, len(gens.index)) + polynomial_work(b, len(gens.index))
    if work > MAX_POLY_WORK:
        if gens.pure:
            raise TooComplex(f"exact comparison needs about {work} coefficient operations, over {MAX_POLY_WORK}")
        return None
    (num_a, den_a), (num_b, den_b) = gens.as_fraction(a), gens.as_fraction(b)
    if not den_a or not den_b:
        return None  # a division by zero: let sympy say what it is
    if num_a * den_b == num_b * den_a:
        return True
    return False if gens.pure else None


def _exponent_terms(power) -> list[tuple]:
    """``e^{2x - iy/2 + 1}`` as [(2, x, False), (-1/2, y, True), (1, 1, False)]: (coefficient, symbol, imaginary)."""
    found = []
    for term in sympy.Add.make_args(sympy.expand(power.args[0])):
        k, unit = term.as_coeff_Mul()
        if unit is sympy.I:  # e^{2i}: a constant angle, its own unit e^{i}
            found.append((k, sympy.Integer(1), True))
            continue
        imaginary = unit.is_Mul and len(unit.args) == 2 and sympy.I in unit.args
        symbol = (unit.args[0] if unit.args[1] is sympy.I else unit.args[1]) if imaginary else unit
        found.append((k, symbol, imaginary))
    return found


def _as_exponentials(exprs: tuple, units: dict) -> list:
    """Trigonometric and hyperbolic functions and exponentials of rational combinations of symbols as Laurent
    monomials in ``z_s = e^{i s / L}`` and ``w_s = e^{s / L}`` (``L``: the common denominator of the coefficients
    of ``s`` in all the expressions).

    ``\\sin(2x) = (z^2 - z^{-2}) / 2i``, ``\\tanh(x/2) = (w - w^{-1}) / (w + w^{-1})``: an identity becomes an identity
    of rational functions in the ``z_s`` and ``w_s`` over the Gaussian rationals, decided exactly with no rewrite
    search. An exponential this does not cover (``e^{\\sqrt{2} x}``) stays a generator of its own, and the units are
    taken as independent, so the route can prove an identity, never refute one.
    """
    rewritten = [expr.rewrite(sympy.exp) for expr in exprs]
    powers = set().union(*(expr.atoms(sympy.exp) for expr in rewritten))
    split = {power: _exponent_terms(power) for power in powers}
    scale: dict = {}

    def unit_of(symbol, imaginary) -> bool:
        return symbol.is_Symbol or (imaginary and symbol == 1)

    for terms in split.values():
        for k, symbol, imaginary in terms:
            if k.is_Rational and unit_of(symbol, imaginary):
                scale[(symbol, imaginary)] = sympy.ilcm(scale.get((symbol, imaginary), 1), k.q)
    swap = {}
    for power, terms in split.items():
        monomial, rest = sympy.Integer(1), sympy.Integer(0)
        for k, symbol, imaginary in terms:
            if k.is_Rational and unit_of(symbol, imaginary):
                key = (symbol, imaginary)
                unit = units.setdefault(key, sympy.Dummy(f"{'z' if imaginary else 'w'}_{symbol}"))
                monomial *= unit ** int(k * scale[key])
            else:
                rest += k * (symbol * sympy.I if imaginary else symbol)
        constant = sympy.exp(rest)
        if rest != 0 and (rest / (sympy.I * sympy.pi)).is_Rational:  # e^{i pi/4} = (1 + i) / sqrt(2)
            constant = sympy.cos(rest / sympy.I) + sympy.I * sympy.sin(rest / sympy.I)
        if monomial != 1 or constant != sympy.exp(rest):
            swap[power] = monomial * constant
    return [expr.xreplace(swap) for expr in rewritten]


def _trig_identity(a, b) -> bool:
    """True when ``a`` and ``b`` are one rational function of ``e^{i s}`` and ``e^{s}`` (``_as_exponentials``):
    trigonometric, hyperbolic and exponential identities (``\\frac{1}{1+e^{-2x}}`` is ``\\frac{\\tanh(x)+1}{2}``);
    False: not shown."""
    kinds = (TrigonometricFunction, HyperbolicFunction, sympy.exp)
    if not (a.has(*kinds) or b.has(*kinds)):
        return False
    a, b = _as_exponentials((a, b), {})
    gens = _Generators(a, b, gaussian=True)
    if polynomial_work(a, len(gens.index)) + polynomial_work(b, len(gens.index)) > MAX_POLY_WORK:
        return False
    (num_a, den_a), (num_b, den_b) = gens.as_fraction(a), gens.as_fraction(b)
    return bool(den_a and den_b) and num_a * den_b == num_b * den_a


def _log_identity(a, b) -> bool:
    """True when ``a - b`` is a rational combination of logarithms of absolute values that vanishes:
    ``\\log|x^2-9| = \\log|x-3| + \\log|x+3|``. ``sum k_i log|u_i| = 0`` exactly where every ``u_i`` is nonzero
    when ``prod u_i^{2 k_i} = 1`` as rational functions (``|u|^2 = u^2`` for real ``u``), which is decided
    exactly; only absolute values (``\\log x + \\log y`` is not ``\\log(xy)`` for negative ``x, y``), and logarithms
    of positive rational numbers as constants (a base: ``\\log_{10}``). False: not shown."""
    difference = a - b
    logs = difference.atoms(sympy.log)
    absolute = [log for log in logs if isinstance(log.args[0], sympy.Abs)]
    if not absolute or any(not (log.args[0].is_Rational and log.args[0] > 0) for log in logs - set(absolute)):
        return False
    if any(log.args[0].has(sympy.I) for log in absolute):
        return False
    marks = {log: sympy.Dummy() for log in absolute}
    linear = difference.xreplace(marks)
    if not (linear.is_polynomial(*marks.values()) and sympy.Poly(linear, *marks.values()).is_linear):
        return False
    rest = linear.xreplace({mark: 0 for mark in marks.values()})
    coefficients = [sympy.diff(linear, mark) for mark in marks.values()]
    common = coefficients[0]
    ratios = [sympy.cancel(c / common) for c in coefficients]
    if not all(r.is_Rational and (2 * r).is_Integer for r in ratios) or not _expr_equal(rest, sympy.Integer(0)):
        return False
    product = sympy.Integer(1)
    for log, ratio in zip(absolute, ratios):
        product *= log.args[0].args[0] ** int(2 * ratio)
    return _rational_decision(product, sympy.Integer(1)) is True


def _expr_equal(a, b) -> bool:
    if a == b:
        return True
    if isinstance(a, sympy.MatrixBase) or isinstance(b, sympy.MatrixBase):
        if not (isinstance(a, sympy.MatrixBase) and isinstance(b, sympy.MatrixBase)) or a.shape != b.shape:
            return False
        return all(_expr_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, sympy.Set) or isinstance(b, sympy.Set):
        return isinstance(a, sympy.Set) and isinstance(b, sympy.Set) and sympy.simplify(a) == sympy.simplify(b)
    if _is_logical(a) or _is_logical(b):
        return False  # relations are handled by relations_equal; a chain (And) never equals a value
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return False
    if a.has(sympy.oo, -sympy.oo) or b.has(sympy.oo, -sympy.oo):
        return False  # only identical infinities (a == b above) are equal
    a, b = a.doit(), b.doit()  # the grammar leaves some products unevaluated; doit canonicalizes them
    if a == b:
        return True
    if _probe_differs(a, b):
        return False
    # exact methods first: a rational function (over symbols and any other parts as indeterminates)
    decided = _rational_decision(a, b)
    if decided is not None:
        return decided
    if _trig_identity(a, b):  # trigonometric: exact, as rational functions of e^{ix}
        return True
    if _log_identity(a, b):  # logarithms of absolute values: exact, as a product of rational functions
        return True
    difference = a - b
    # then rewrite steps, each only within a structural cap (never a clock): a verdict is the same everywhere
    if expanded_terms(difference) <= MAX_EXPANDED_TERMS and (
        sympy.expand(difference) == 0 or sympy.cancel(difference) == 0
    ):
        return True
    if sum(1 for _ in sympy.preorder_traversal(difference)) > MAX_SIMPLIFY_NODES:
        raise TooComplex(f"the difference has more than {MAX_SIMPLIFY_NODES} nodes for simplify")
    if degree_bound(difference) > MAX_REWRITE_DEGREE or nesting(difference) > MAX_REWRITE_NESTING:
        raise TooComplex(
            f"the difference is over degree {MAX_REWRITE_DEGREE} or nesting {MAX_REWRITE_NESTING} for simplify"
        )
    kinds = (TrigonometricFunction, HyperbolicFunction, sympy.exp)
    if any(part.args[0].free_symbols for part in difference.atoms(*kinds)):
        # decided exactly above when it is an identity of e^{ix} and e^{x}; simplify's trigonometric search on what
        # is left is unbounded (1/(1+e^{-x})^6 against a power of tanh(x/2) ran > 3 CPU-s at 40 nodes)
        raise TooComplex("a trigonometric or exponential identity the exact route does not show: no rewrite search")
    return sympy.simplify(difference) == 0


def _relation_form(rel) -> tuple[str, sympy.Expr]:
    """``a > b`` -> ("lt", b - a): every relation as ``expr <op> 0`` with op in =, !=, <, <=."""
    if isinstance(rel, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        return ("lt" if isinstance(rel, sympy.StrictGreaterThan) else "le"), rel.rhs - rel.lhs
    kinds = {sympy.Equality: "eq", sympy.Unequality: "ne", sympy.StrictLessThan: "lt", sympy.LessThan: "le"}
    return kinds[type(rel)], rel.lhs - rel.rhs


def _rational_ratio(expr_a, expr_b):
    """``expr_a / expr_b`` when it is a rational constant (exactly, as fractions of polynomials); False when
    both are rational functions and it is not; None when that cannot be read from polynomials."""
    gens = _Generators(expr_a, expr_b)
    if polynomial_work(expr_a, len(gens.index)) + polynomial_work(expr_b, len(gens.index)) > MAX_POLY_WORK:
        return None
    (num_a, den_a), (num_b, den_b) = gens.as_fraction(expr_a), gens.as_fraction(expr_b)
    if not (den_a and den_b and num_a and num_b):
        return None
    p, q = num_a * den_b, num_b * den_a
    if p * q.LC == q * p.LC:
        return QQ.to_sympy(p.LC / q.LC)
    return False if gens.pure else None


def relations_equal(a, b) -> bool:
    """Same relation and the same solution set: one side a constant multiple of the other
    (any nonzero constant for = and !=, a positive one for inequalities)."""
    (kind_a, expr_a), (kind_b, expr_b) = _relation_form(a), _relation_form(b)
    if kind_a != kind_b:
        return False
    if _expr_equal(expr_a, expr_b):
        return True
    if expr_b == 0 or not (expr_a.free_symbols or expr_b.free_symbols):
        return False
    ratio = _rational_ratio(expr_a, expr_b)
    if ratio is False:
        return False
    if ratio is None:
        if expanded_terms(expr_a / expr_b) > MAX_EXPANDED_TERMS:
            raise TooComplex(f"the ratio of the two sides has more than {MAX_EXPANDED_TERMS} terms")
        ratio = sympy.cancel(expr_a / expr_b)
    if ratio.free_symbols:
        if _probe_differs(ratio, ratio.subs({s: s + 1 for s in ratio.free_symbols})):
            return False  # not constant
        ratio = sympy.simplify(ratio)
    if not ratio.is_number or ratio.free_symbols or ratio.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return False
    if kind_a in ("eq", "ne"):
        return ratio.is_nonzero is True and ratio.is_real is True
    return ratio.is_positive is True


def _boolean_equal(a, b) -> bool:
    """``f(2) < f(1) < f(4)`` parses to And(...): same connective, relations matched one to one."""
    if type(a) is not type(b) or len(a.args) != len(b.args):
        return False
    unmatched = list(b.args)
    for arg in a.args:
        for k, other in enumerate(unmatched):
            if isinstance(arg, Relational) and isinstance(other, Relational) and relations_equal(arg, other):
                del unmatched[k]
                break
        else:
            return False
    return True


def _terminates(q: int) -> bool:
    """Whether 1/q has a finite decimal expansion (q = 2^a 5^b)."""
    q >>= (q & -q).bit_length() - 1  # strip the factors of 2
    while q % 5 == 0:
        q //= 5
    return q == 1


def rounds_to(candidate, reference_places: int, reference) -> bool:
    """A real constant candidate (``\\sqrt{2}``) against a reference stated to N decimal places (``1.41``).

    Only a candidate without a finite decimal expansion may round (irrational, or a rational like
    1/3): a finite decimal reference for it can only be an approximation. ``89/20`` is 4.45 exactly,
    so it does not round to a reference ``4.5``.
    """
    if not (isinstance(candidate, sympy.Expr) and candidate.is_number and candidate.is_real):
        return False
    value = candidate.doit()
    if value.is_Rational and _terminates(int(value.q)):
        return False
    value = _numeric(candidate, reference_places + 30)
    if value is None:
        return False
    quantum = sympy.Rational(1, 10**reference_places)
    scaled = sympy.Rational(str(value)) / quantum
    rounded = sympy.floor(scaled + sympy.Rational(1, 2)) * quantum  # round half up
    return rounded == reference


_I = sympy.Symbol("i")


def _imaginary_unit(candidate, reference):
    """``(1+i)(2-i)`` against ``3+i``: when ``i`` is the only letter on both sides, it is the imaginary unit.

    Substituted on both sides or neither, and only in values (not relations or sets), so an answer that uses
    ``i`` as an index next to other variables is never read as complex.
    """
    sides = (candidate, reference)
    if not all(isinstance(side, sympy.Expr) for side in sides):
        return candidate, reference
    symbols = candidate.free_symbols | reference.free_symbols
    if symbols != {_I}:
        return candidate, reference
    return candidate.subs(_I, sympy.I), reference.subs(_I, sympy.I)


def _absolute_value_solutions(reference) -> sympy.FiniteSet | None:
    """The real solutions of ``|p(x)| = q`` (``q`` a number): those of ``p = q`` and ``p = -q`` that are real
    (``solution_sets`` solves over the complex numbers and leaves absolute values alone); None when not that form
    or a root's realness is not decided."""
    if not isinstance(reference, sympy.Equality):
        return None
    for side, value in ((reference.lhs, reference.rhs), (reference.rhs, reference.lhs)):
        if not (isinstance(side, sympy.Abs) and value.is_number and not value.has(sympy.I)):
            continue
        inner = side.args[0]
        if len(inner.free_symbols) != 1 or inner.has(sympy.Abs, sympy.I) or value.is_negative is not False:
            return None
        (x,) = inner.free_symbols
        roots = []
        for target in {value, -value}:
            relation = sympy.Eq(inner, target)
            if not isinstance(relation, Relational):
                return None
            found = solution_sets.solution_set(relation, x)
            if not isinstance(found, sympy.FiniteSet):
                return None
            roots.extend(found)
        if any(root.is_real is None for root in roots):
            return None
        return sympy.FiniteSet(*(root for root in roots if root.is_real))
    return None


def _denominators(expr) -> list:
    """The bases of negative powers in the tree as written (``x(x-1)/(x-1)``: ``x - 1``): sympy cancels them
    when the relation is solved or rearranged, so the points they exclude must be read here."""
    found = []
    for node in sympy.preorder_traversal(expr):
        if node.is_Pow and node.args[1].is_number and node.args[1].is_negative and node.args[0].free_symbols:
            found.append(node.args[0])
    return found


def _poles(rel) -> list | None:
    """The points a relation in one variable excludes (its denominators' roots, exactly); None when unknown."""
    symbols = rel.free_symbols
    if len(symbols) != 1:
        return [] if not symbols else None
    (x,) = symbols
    poles = []
    for denominator in _denominators(rel.lhs) + _denominators(rel.rhs):
        if not denominator.is_polynomial(x) or degree_bound(denominator) > solution_sets.MAX_DEGREE:
            return None
        found = sympy.roots(sympy.Poly(denominator, x))
        if sum(found.values()) != sympy.degree(denominator, x):
            return None
        poles.extend(found)
    return poles


def _meets_a_pole(candidate, reference) -> bool:
    """Whether the candidate's solutions include a point the reference relation excludes (or that is unknown).

    ``\\frac{x(x-1)}{x-1} = 1`` has no solution: sympy cancels ``x - 1`` while solving, and would pay ``x = 1``.
    """
    if len(reference.free_symbols) != 1:
        return False  # a relation between variables is compared as a relation (relations_equal), not solved
    poles = _poles(reference)
    if poles is None:
        return True  # a denominator whose roots are not found exactly: no verdict, so not paid
    if not poles:
        return False
    answer = candidate
    if isinstance(candidate, Relational):
        own = _poles(candidate)
        if own is not None and all(any(_expr_equal(p, q) for q in own) for p in poles):
            return False  # the candidate excludes the same points
        (x,) = reference.free_symbols
        answer = solution_sets.solution_set(candidate, x) if candidate.free_symbols == {x} else None
        if answer is None:
            return True
    if isinstance(answer, sympy.FiniteSet):
        return any(_expr_equal(value, pole) for value in answer for pole in poles)
    if isinstance(answer, sympy.Set):
        return any(answer.contains(pole) != sympy.false for pole in poles)
    return True


def compare(candidate_text: str, reference_text: str, reference_places: int | None = None) -> tuple[str, str]:
    """('equal'|'different'|'cand_unparseable'|'cand_too_complex'|'ref_invalid', detail)."""
    try:
        reference = parse_leaf(reference_text)
    except (Unparseable, TooComplex) as exc:
        return "ref_invalid", f"{type(exc).__name__}: {describe(exc)}"
    try:
        candidate = parse_leaf(candidate_text)
    except Unparseable as exc:
        return "cand_unparseable", str(exc)
    except TooComplex as exc:
        return "cand_too_complex", str(exc)
    candidate, reference = _imaginary_unit(candidate, reference)
    if symbolic_series(candidate) or symbolic_series(reference):
        if sympy.srepr(candidate) == sympy.srepr(reference):  # the tree in sympy's order: F_k F_{n-k-1} = F_{n-k-1} F_k
            return "equal", "the same sum as written"
        return "cand_too_complex", "a sum or product over symbolic bounds is compared only as written"
    try:
        if isinstance(reference, Relational):
            equal = isinstance(candidate, Relational) and relations_equal(candidate, reference)
            if not equal:  # t = 3 or t = -3 (sent as \{3, -3\}) for t^2 = 9; |t| \le 4 for t^2 \le 16
                equal = solution_sets.same_solutions(candidate, reference, _expr_equal) is True
            if not equal and isinstance(candidate, sympy.FiniteSet) and not candidate.free_symbols:
                expected = _absolute_value_solutions(reference)  # x = 3 or x = -1 for |x - 1| = 2
                equal = expected is not None and solution_sets.sets_equal(candidate, expected, _expr_equal)
            if equal and _meets_a_pole(candidate, reference):  # x = 1 for x(x-1)/(x-1) = 1: 1 is excluded
                equal = False
        elif isinstance(reference, (sympy.And, sympy.Or)):
            equal = _boolean_equal(candidate, reference)
        elif _is_logical(candidate):
            equal = False
        else:
            equal = _expr_equal(candidate, reference)
            if not equal and reference_places is not None:
                equal = rounds_to(candidate, reference_places, reference)
    except TooComplex as exc:  # the pair is beyond a structural limit of the exact methods or the rewrite steps
        return "cand_too_complex", str(exc)
    except (
        TypeError,
        ValueError,
        NotImplementedError,
        RecursionError,
        ZeroDivisionError,
        sympy.PolynomialError,
        sympy.polys.polyerrors.PolificationFailed,
    ) as exc:
        # sympy failing on a candidate-built expression counts against the candidate, and says so
        return "cand_too_complex", f"sympy could not compare: {type(exc).__name__}: {describe(exc)}"
    return ("equal" if equal else "different"), f"{describe(candidate)} vs {describe(reference)}"


# Parsed and compared once at worker start-up: ANTLR builds its prediction tables and sympy fills
# its caches lazily, which otherwise makes the first few real comparisons 5-20x slower.
_WARM_UP = (
    (r"\frac{a}{b}+\sqrt{c}-d^{2}", r"\sqrt[3]{a}\cdot b"),
    (r"(p+q)^3", r"p^3+3p^2q+3pq^2+q^3"),
    (r"\sin^2(t)+\cos(t)\tan(t)", r"\sec^2(t)-\log(t)+\ln(t)"),
    (r"\frac{t^2-4}{t-2}", r"t+2"),
    (r"e^{3}\pi", r"3!+\frac{7}{9}"),
    (r"2(k-1)", r"2k-2"),
    (r"k^2 > 4", r"4 < k^2"),
    (r"a^2+b^2=9", r"9=b^2+a^2"),
    (r"\begin{pmatrix}1&k\\0&1\end{pmatrix}", r"\begin{pmatrix}1&k\\0&1\end{pmatrix}"),
    (r"\cos(2t)", r"\cos^2(t)-\sin^2(t)"),
    (r"\log(9)", r"2\log(3)"),
    (r"\frac{1}{\cos^2(t)}", r"1+\tan^2(t)"),
    (r"\sin(2t)", r"2\sin(t)\cos(t)"),
    (r"\cos(\frac{\pi}{3})", r"\frac{1}{2}"),
    (r"w = 3k - 1", r"3k - w - 1 = 0"),
    # reaches sympy.simplify, whose first call imports sympy.physics.units (~0.25 s of CPU): paid at start-up,
    # not by a worker's first comparison that needs simplify
    (r"3f(0)k", "5"),
)


def _warm_up() -> None:
    for candidate, reference in _WARM_UP:
        compare(candidate, reference)
    parse_leaf.cache_clear()


class _OutOfCpu(BaseException):
    """Raised by the CPU-time signal. A BaseException, so sympy's own ``except Exception`` cannot swallow it."""


_armed = False


def _on_cpu_timer(signum, frame) -> None:
    if _armed:
        raise _OutOfCpu


def _compare_within(request: dict) -> tuple[str, str]:
    """``compare`` under the CPU safety net: stopped after ``request["cpu"]`` seconds of this process's CPU.

    The structural limits (``rewards.math.complexity``) decide what is too complex, before any work; this
    net only catches a comparison within them that still runs long (a verifier defect). Its status is
    ``net``, which the host raises as an error (``VerifierTooSlow``), never a verdict. ITIMER_PROF counts
    CPU time; the timer repeats every 20 ms until the comparison unwinds, in case one signal lands where it
    is caught, and the host kills the worker if even that fails (a long C call). This runs in the worker
    process's main thread (``serve``), never in a caller's thread, which is why a signal timer is sound here.
    """
    global _armed
    import signal

    try:
        _armed = True
        signal.setitimer(signal.ITIMER_PROF, max(float(request["cpu"]), 0.001), 0.02)
        return compare(request["candidate"], request["reference"], request.get("places"))
    except _OutOfCpu:
        return "net", f"more than {float(request['cpu']):.2f}s of CPU"
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)


def serve() -> None:
    """Worker main loop: warm up, say ``ready``, then one JSON request per stdin line, one JSON reply per stdout line."""
    import json
    import resource
    import signal
    import sys
    import time
    import traceback

    limit = 2 * 1024**3  # a runaway sympy computation hits MemoryError here instead of the host
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.setrecursionlimit(5000)
    signal.signal(signal.SIGPROF, _on_cpu_timer)
    out = sys.stdout
    _warm_up()
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        start = time.process_time()
        try:
            status, detail = _compare_within(request)
        except MemoryError:  # the memory safety net: an error like the CPU one, never a verdict
            status, detail = "net", "the worker's memory limit"
        except Exception:  # a bug in the verifier: report it, the host raises it
            status, detail = "error", traceback.format_exc()
        reply = {"status": status, "detail": detail[:2000], "cpu": time.process_time() - start}
        out.write(json.dumps(reply) + "\n")
        out.flush()
