r"""Solution sets of a relation in one variable, computed exactly, so an answer that *solves* it can be paid.

``t = 3 \text{ or } t = -3`` answers the reference ``t^2 = 9``; ``|t| \le 4`` and ``[-4, 4]`` answer ``t^2 \le 16``.
The worker (``rewards.math.symbolic.compare``) asks here only after the cheap comparisons failed. The rules keep
it from guessing or paying a restated question:

* one free symbol, a polynomial (or a ratio of polynomials, or ``|p(t)|`` for inequalities) of degree at most
  ``MAX_DEGREE`` whose factors over the rationals are at most quadratic; every root is found exactly
  (``sympy.roots`` finds as many roots as the degree, with their multiplicity) or there is no verdict from here
  (the pair stays unequal);
* equations are solved over the complex numbers (all roots: ``x = 1`` does not answer ``x^3 = 1``), inequalities
  over the reals (``sympy.solve_univariate_inequality``); a ratio's poles are never roots;
* only the *reference* is solved against an explicit candidate (named values, intervals, or a linear relation
  such as ``|t| \le 4`` or ``2t = 6``). A candidate that restates an unsolved relation (``t^2 = 9`` for
  the reference ``t = 3 \text{ or } t = -3``) is not an answer, so it is never solved here.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy
from sympy.core.relational import Relational

MAX_DEGREE = 4
MAX_FACTOR_DEGREE = 2  # every factor over the rationals linear or quadratic: roots by the quadratic formula
_REAL_SETS = (sympy.Interval, sympy.Union, sympy.FiniteSet)
_I = sympy.Symbol("i")


def _one_symbol(*exprs) -> sympy.Symbol | None:
    symbols = set().union(*(e.free_symbols for e in exprs))
    return symbols.pop() if len(symbols) == 1 else None


def _degree(expr: sympy.Expr, x: sympy.Symbol) -> int | None:
    """Degree in ``x`` of a polynomial, with every ``|p(x)|`` counted as ``p(x)``; None when not a polynomial.

    Also None when a factor over the rationals has degree above ``MAX_FACTOR_DEGREE``: its roots would be
    Cardano/Ferrari radicals, slow to build and to compare, so no verdict is attempted.
    """
    plain = expr.replace(sympy.Abs, lambda arg: arg)
    numerator, denominator = sympy.fraction(sympy.together(plain))
    if not (numerator.is_polynomial(x) and denominator.is_polynomial(x)):
        return None
    degree = max(sympy.degree(numerator, x), sympy.degree(denominator, x))
    if degree > MAX_DEGREE:
        return None
    for part in (numerator, denominator):
        if any(sympy.degree(factor, x) > MAX_FACTOR_DEGREE for factor, _ in sympy.factor_list(part, x)[1]):
            return None
    return degree


def _roots(rel: sympy.Equality, x: sympy.Symbol) -> sympy.FiniteSet | None:
    numerator, denominator = sympy.fraction(sympy.together(rel.lhs - rel.rhs))
    if numerator.has(sympy.Abs) or denominator.has(sympy.Abs):
        return None
    degree = sympy.degree(numerator, x)
    if not 1 <= degree <= MAX_DEGREE:
        return None
    found = sympy.roots(sympy.Poly(numerator, x))
    if sum(found.values()) != degree:
        return None  # some root has no exact closed form here: no verdict
    return sympy.FiniteSet(*(r for r in found if sympy.simplify(denominator.subs(x, r)) != 0))


def solution_set(rel, x: sympy.Symbol):
    """The exact solution set of ``rel`` in ``x`` (a FiniteSet for =, a real set for <, <=, >, >=), or None."""
    degree = _degree(rel.lhs - rel.rhs, x)
    if degree is None or degree > MAX_DEGREE:
        return None
    if isinstance(rel, sympy.Equality):
        return _roots(rel, x)
    if isinstance(rel, (sympy.StrictLessThan, sympy.LessThan, sympy.StrictGreaterThan, sympy.GreaterThan)):
        result = sympy.solve_univariate_inequality(rel, x, relational=False, domain=sympy.S.Reals)
        return result if isinstance(result, (*_REAL_SETS, sympy.sets.sets.EmptySet)) else None
    return None


def _pieces(s) -> list:
    return list(s.args) if isinstance(s, sympy.Union) else [s]


def sets_equal(a, b, equal: Callable) -> bool:
    """Two exact sets, piece by piece: the same points (``equal`` decides two numbers), the same interval ends."""
    if isinstance(a, sympy.FiniteSet) and isinstance(b, sympy.FiniteSet):
        left, right = list(a), list(b)
        for value in left:
            k = next((k for k, other in enumerate(right) if equal(value, other)), None)
            if k is None:
                return False
            right.pop(k)
        return not right
    pieces_a, pieces_b = _pieces(a), _pieces(b)
    if len(pieces_a) != len(pieces_b):
        return False
    for piece in pieces_a:
        k = next((k for k, other in enumerate(pieces_b) if _pieces_equal(piece, other, equal)), None)
        if k is None:
            return False
        pieces_b.pop(k)
    return True


def _pieces_equal(a, b, equal: Callable) -> bool:
    if isinstance(a, sympy.Interval) and isinstance(b, sympy.Interval):
        return (
            a.left_open == b.left_open
            and a.right_open == b.right_open
            and _ends_equal(a.start, b.start, equal)
            and _ends_equal(a.end, b.end, equal)
        )
    if isinstance(a, sympy.FiniteSet) and isinstance(b, sympy.FiniteSet):
        return sets_equal(a, b, equal)
    return a == b


def _ends_equal(a, b, equal: Callable) -> bool:
    if a.is_infinite or b.is_infinite:
        return a == b
    return equal(a, b)


def _explicit(rel, x: sympy.Symbol) -> bool:
    """A relation already solved for ``x`` up to a linear step: ``2t = 6``, ``|t| \\le 4``, ``-3 < 2t + 1``."""
    degree = _degree(rel.lhs - rel.rhs, x)
    return degree is not None and degree <= 1 and not sympy.fraction(sympy.together(rel.lhs - rel.rhs))[1].has(x)


def same_solutions(candidate, reference, equal: Callable) -> bool | None:
    """Whether the explicit ``candidate`` is the solution set of the relation ``reference``; None when not decided.

    ``candidate`` is a set (``\\{3, -3\\}``, ``[-4, 4]``, a union) or a relation in the reference's variable that
    is already explicit (see ``_explicit``); anything else is not decided here.
    """
    if not isinstance(reference, Relational) or isinstance(reference, sympy.Unequality):
        return None
    x = _one_symbol(reference.lhs, reference.rhs)
    if x is None:
        return None
    if isinstance(candidate, Relational):
        if isinstance(candidate, sympy.Unequality) or _one_symbol(candidate.lhs, candidate.rhs) != x:
            return None
        if isinstance(candidate, sympy.Equality) != isinstance(reference, sympy.Equality) or not _explicit(
            candidate, x
        ):
            return None
        answer = solution_set(candidate, x)
    elif isinstance(candidate, (*_REAL_SETS, sympy.sets.sets.EmptySet)):  # \emptyset: no solution
        if candidate.free_symbols == {_I} and x != _I:  # x = \pm i: the imaginary unit
            candidate = candidate.subs(_I, sympy.I)
        if candidate.free_symbols:
            return None
        answer = candidate
    else:
        return None
    expected = solution_set(reference, x)
    if answer is None or expected is None:
        return None
    if isinstance(expected, sympy.sets.sets.EmptySet) or isinstance(answer, sympy.sets.sets.EmptySet):
        return isinstance(expected, sympy.sets.sets.EmptySet) and isinstance(answer, sympy.sets.sets.EmptySet)
    return sets_equal(answer, expected, equal)
