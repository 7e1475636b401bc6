r"""Symbolic equivalence of two math leaves, run inside the verifier's worker process.

Parsing is done by ``latex2sympy2_extended`` (an ANTLR LaTeX grammar: no Python is ever
evaluated). Before sympy computes anything, the parsed tree is checked against size and
magnitude bounds, so ``9^{9^{9^9}}`` or ``1000000!`` are rejected instead of computed.
This module may be slow or hang on pathological input; it is only ever called through
``rewards.math.worker_pool``: ``serve`` stops a comparison after its CPU budget, and the host kills a
worker that overruns anyway.
"""

from __future__ import annotations

import math
from functools import lru_cache

import sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from latex2sympy2_extended.math_normalization import NormalizationConfig, normalize_latex
from sympy.core.relational import Relational
from sympy.functions.elementary.trigonometric import TrigonometricFunction

from rewards.math import cas_syntax, solution_sets
from rewards.math.answer_tree import (  # one pair of candidate-failure types, host and worker
    TooComplex,
    Unparseable,
)
from rewards.math.latex2sympy_seam import parse_latex

MAX_NODES = 400
MAX_LOG10 = 20000.0  # largest |value| we let sympy build: 10**20000 (2004! is ~10**5700)
MAX_FACTORIAL = 5000

_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none", equations=False
)
_CONVERSION = ConversionConfig(
    interpret_as_mixed_fractions=True,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)


def to_latex(text: str) -> str:
    """Plain-text math (``sqrt(2)/2``, ``x**2``, ``pi``) rewritten into the LaTeX the grammar reads."""
    return cas_syntax.to_latex(text)


def _log10_bound(expr: sympy.Basic, depth: int = 0) -> float:
    """An upper bound on log10 of |value| for the numeric parts of ``expr`` (inf when unbounded)."""
    if depth > 50:
        raise TooComplex("expression nested too deeply")
    if expr.is_Integer:
        return math.log10(max(abs(int(expr)), 1))
    if expr.is_Rational:
        return max(math.log10(max(abs(expr.p), 1)), math.log10(expr.q))
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Rational and not exponent.is_Integer:  # its size, not its digits' (sqrt: 1/2, not 2)
            exponent_log = math.log10(abs(exponent.p)) - math.log10(exponent.q)
        else:
            exponent_log = _log10_bound(exponent, depth + 1)
        base_log = _log10_bound(base, depth + 1)
        if exponent_log > 6:
            if base_log == 0 and base.is_number:  # 1^huge, 0^huge: still bounded
                return 0.0
            return math.inf
        return (10**exponent_log) * max(base_log, 0.5)
    if isinstance(expr, sympy.factorial):
        (arg,) = expr.args
        if not arg.is_Integer or int(arg) > MAX_FACTORIAL:
            if arg.is_number:
                raise TooComplex(f"factorial of {arg} is beyond {MAX_FACTORIAL}!")
            return 0.0
        n = int(arg)
        return n * math.log10(max(n, 2))
    if not expr.args:
        return 0.0
    parts = [_log10_bound(arg, depth + 1) for arg in expr.args]
    if expr.is_Mul or isinstance(expr, sympy.Function):
        return sum(parts) + 0.5
    return max(parts) + 0.5


def check_bounds(expr: sympy.Basic) -> None:
    for count, _ in enumerate(sympy.preorder_traversal(expr)):
        if count > MAX_NODES:
            raise TooComplex(f"more than {MAX_NODES} nodes")
    if not isinstance(expr, sympy.Basic):
        return
    if _log10_bound(expr) > MAX_LOG10:
        raise TooComplex(f"a number in it is larger than 10^{MAX_LOG10:.0f}")


def _parse_latex(latex: str):
    return parse_latex(latex, _CONVERSION)


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
    if isinstance(expr, sympy.Basic) and expr.has(sympy.nan, sympy.zoo):
        raise Unparseable("undefined value (nan or complex infinity)")
    return expr


def _numeric(expr: sympy.Expr, digits: int = 30):
    value = sympy.N(expr, digits)
    if value.has(sympy.nan, sympy.zoo):
        return None
    return value


def _probe_differs(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Cheap disproof: evaluate both at fixed rational points; clearly different values mean unequal."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    points = [sympy.Rational(7, 13), sympy.Rational(-11, 17), sympy.Rational(23, 7)]
    for shift in range(len(points)):
        subs = {s: points[(i + shift) % len(points)] + i for i, s in enumerate(symbols)}
        va, vb = _numeric(a.subs(subs)), _numeric(b.subs(subs))
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
    if a.doit() == b.doit():  # the grammar leaves some products unevaluated; doit canonicalizes them
        return True
    if _probe_differs(a, b):
        return False
    difference = a - b
    # cheap canonical forms first; full simplify (the slow one) last
    if sympy.expand(difference) == 0 or sympy.cancel(difference) == 0:
        return True
    if difference.has(TrigonometricFunction) and sympy.trigsimp(difference) == 0:
        return True
    return sympy.simplify(difference) == 0


def _relation_form(rel) -> tuple[str, sympy.Expr]:
    """``a > b`` -> ("lt", b - a): every relation as ``expr <op> 0`` with op in =, !=, <, <=."""
    if isinstance(rel, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        return ("lt" if isinstance(rel, sympy.StrictGreaterThan) else "le"), rel.rhs - rel.lhs
    kinds = {sympy.Equality: "eq", sympy.Unequality: "ne", sympy.StrictLessThan: "lt", sympy.LessThan: "le"}
    return kinds[type(rel)], rel.lhs - rel.rhs


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


def compare(candidate_text: str, reference_text: str, reference_places: int | None = None) -> tuple[str, str]:
    """('equal'|'different'|'cand_unparseable'|'cand_too_complex'|'ref_invalid', detail)."""
    try:
        reference = parse_leaf(reference_text)
    except (Unparseable, TooComplex) as exc:
        return "ref_invalid", f"{type(exc).__name__}: {exc}"
    try:
        candidate = parse_leaf(candidate_text)
    except Unparseable as exc:
        return "cand_unparseable", str(exc)
    except TooComplex as exc:
        return "cand_too_complex", str(exc)
    candidate, reference = _imaginary_unit(candidate, reference)
    try:
        if isinstance(reference, Relational):
            equal = isinstance(candidate, Relational) and relations_equal(candidate, reference)
            if not equal:  # t = 3 or t = -3 (sent as \{3, -3\}) for t^2 = 9; |t| \le 4 for t^2 \le 16
                equal = solution_sets.same_solutions(candidate, reference, _expr_equal) is True
        elif isinstance(reference, (sympy.And, sympy.Or)):
            equal = _boolean_equal(candidate, reference)
        elif _is_logical(candidate):
            equal = False
        else:
            equal = _expr_equal(candidate, reference)
            if not equal and reference_places is not None:
                equal = rounds_to(candidate, reference_places, reference)
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
        return "cand_too_complex", f"sympy could not compare: {type(exc).__name__}: {exc}"
    return ("equal" if equal else "different"), f"{candidate} vs {reference}"


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
    # reaches sympy.simplify, whose first call imports sympy.physics.units (~0.25 s of CPU): without it the
    # first comparison that needs simplify in each worker could run out of its budget, and only that once
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
    """``compare`` stopped after ``request["cpu"]`` seconds of this process's CPU time.

    ITIMER_PROF counts CPU time, not wall time, so a busy machine does not change the verdict.
    The timer repeats every 20 ms until the comparison unwinds, in case one signal lands where
    it is caught. The host kills the worker if even that fails (a long C call). This runs in the
    worker process's main thread (``serve``), never in a caller's thread, which is why a signal
    timer is sound here.
    """
    global _armed
    import signal

    try:
        _armed = True
        signal.setitimer(signal.ITIMER_PROF, max(float(request["cpu"]), 0.001), 0.02)
        return compare(request["candidate"], request["reference"], request.get("places"))
    except _OutOfCpu:
        return "timeout", f"more than {float(request['cpu']):.2f}s of CPU"
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
        except MemoryError:
            status, detail = "cand_too_complex", "memory limit"
        except Exception:  # a bug in the verifier: report it, the host raises it
            status, detail = "error", traceback.format_exc()
        reply = {"status": status, "detail": detail[:2000], "cpu": time.process_time() - start}
        out.write(json.dumps(reply) + "\n")
        out.flush()
