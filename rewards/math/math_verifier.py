r"""``is_correct`` and ``grade``: the one function that is both the reward and the metric.

Pipeline: normalize both strings (``rewards.math.structure``), compare their top-level shapes
(tuple/interval/set/matrix/chain; an inequality in one variable and an interval are the same
shape), then compare leaves: plain numbers exactly as fractions in-process
(``rewards.math.exact_numbers``), anything symbolic in a worker process (``rewards.math.symbolic`` via
``rewards.math.worker_pool``), then what parsers drop: names on the left, primes, subscripts on numbers.
A candidate over a structural limit (``rewards.math.complexity``: decided from the expression, the
same on every machine) is False; a reference that cannot be read, or is over a limit, raises
``InvalidReference`` (a dataset bug, not a wrong answer); a verifier that cannot give a verdict in
time raises ``VerifierOverloaded`` (or its subclass ``VerifierTooSlow`` from the CPU safety net):
the machine's or the verifier's fault, never the candidate's, and never a verdict.

Rounding: a reference written with N decimals and at least two significant digits accepts a rounded
candidate only when the candidate is exact and has no finite decimal expansion (``\sqrt{2}`` for
``1.41``, ``1/3`` for ``0.33``): only then must the reference be an approximation. A one-digit decimal
(``0.2``) is exact only: rounding to it would pay ``1/6`` for an exact 1/5. Decimals, and fractions with a finite decimal
(``89/20`` = 4.45), are compared exactly (``7.249`` is not ``7.25``). Beyond a number written out, only a *written
value* may round (``rewards.math.written_values``): never a computation (``\log_4 32``), a vacuous factor
(``\cdot e^{0}``) or a sum with a term below the reference's precision (``27.54 + 10^{-20}\pi``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from rewards.common import brief, question_text
from rewards.math import structure, written_values
from rewards.math.answer_format import DEFAULT_ANSWER_FORMAT, THINK_NONE, boxed_contents, find_final_answer
from rewards.math.answer_tree import collection
from rewards.math.escapes import looks_doubled
from rewards.math.exact_numbers import ExactNumber, NumberTooLarge, parse_number
from rewards.math.intervals import is_variable, merged
from rewards.math.restatement import restated_expression
from rewards.math.structure import Chain, Collection, Leaf, Matrix
from rewards.math.worker_pool import Budget, get_pool
from rewards.verdict import Reason, Verdict

MAX_CANDIDATE_CHARS = structure.MAX_LENGTH
_INFINITY = re.compile(r"^([-+]?)\s*(?:\\infty|\\inf|infinity|oo|inf)$", re.IGNORECASE)


class InvalidReference(ValueError):
    """The reference answer cannot be parsed: fix the dataset row, don't score it."""


@dataclass(frozen=True)
class _Outcome:
    equal: bool
    reason: Reason
    detail: str


class _CandidateFailed(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(detail)
        self.reason, self.detail = reason, detail


# between the boxes of a list answer ("\boxed{1} and \boxed{-2}."): separators, spacing and math delimiters only
_BOX_SEPARATORS = re.compile(r"^(?:\s|[,;.$]|\\[()\[\],; ]|\\q?quad\b|\band\b|\\text\{\s*and\s*\})*$")


def listed_boxes(text: str) -> list[str] | None:
    r"""The distinct contents of ``\boxed{1}, \boxed{2}`` (only separators outside the boxes), else None.

    >>> listed_boxes(r"\(\boxed{1}\) and \(\boxed{-2}\)."), listed_boxes(r"\boxed{1} or maybe \boxed{2}")
    (['1', '-2'], None)
    """
    boxes, outside = boxed_contents(text)
    if len(boxes) < 2 or not _BOX_SEPARATORS.match(outside):
        return None
    return list(dict.fromkeys(" ".join(box.split()) for box in boxes))


def _parse(text: str, equations: str):
    return structure.parse_structure(structure.normalize(text), equations=equations)


@lru_cache(maxsize=8192)
def _prepare_reference(reference: str):
    r"""The reference's tree; several boxes with only separators between them (``\boxed{1}, \boxed{2}``) are a list."""
    if not isinstance(reference, str):
        raise TypeError(f"reference must be str, got {type(reference).__name__}")
    try:
        boxes = listed_boxes(reference)
        if boxes is None:
            return _parse(reference, structure.REFERENCE)
        if len(boxes) == 1:
            return _parse(boxes[0], structure.REFERENCE)
        return collection([_parse(box, structure.REFERENCE) for box in boxes], ordered=False, brackets="set")
    except (structure.Unparseable, structure.TooComplex) as exc:
        raise InvalidReference(f"reference {reference!r} cannot be parsed: {exc}") from None


def _several_values(tree) -> bool:
    """A reference that is a list of values (not a tuple, interval or one value): a list of boxes may answer it."""
    return isinstance(tree, Collection) and not tree.ordered and len(tree.items) > 1


def check_reference(reference: str) -> None:
    """Raise ``InvalidReference`` if ``reference`` cannot be read; dataset loaders call this up front.

    A structural check only (fast, in-process); a symbolic leaf the grammar rejects is still
    reported at grading time.
    """
    _prepare_reference(reference)


def _is_equation(tree) -> bool:
    return isinstance(tree, Leaf) and tree.equation


def _prepare_candidate(candidate: str | list[str], reference_tree):
    """The candidate's tree; a list of strings (the contents of several boxes) is read as a list of values."""
    equations = structure.EQUATION if _is_equation(reference_tree) else structure.VALUE
    try:
        if isinstance(candidate, list):
            return collection([_parse(box, equations) for box in candidate], ordered=False, brackets="set")
        return _parse(candidate, equations)
    except structure.TooComplex as exc:
        raise _CandidateFailed(Reason.TOO_COMPLEX, str(exc)) from None
    except structure.Unparseable as exc:
        raise _CandidateFailed(Reason.UNPARSEABLE, str(exc)) from None


def _number(text: str, *, is_reference: bool) -> ExactNumber | None:
    try:
        return parse_number(text)
    except NumberTooLarge as exc:
        if is_reference:
            raise InvalidReference(f"reference number {text!r}: {exc}") from None
        raise _CandidateFailed(Reason.TOO_COMPLEX, str(exc)) from None


def _round_half_up(value: Fraction, places: int) -> Fraction:
    scaled = value * 10**places
    return Fraction(int(scaled + Fraction(1, 2)) if scaled >= 0 else -int(-scaled + Fraction(1, 2)), 10**places)


def _terminates(value: Fraction) -> bool:
    """Whether ``value`` has a finite decimal expansion (its denominator is 2^a 5^b)."""
    q = value.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _numbers_equal(candidate: ExactNumber, reference: ExactNumber) -> bool:
    r"""Exact equality. Rounding pays only when the reference can be nothing but an approximation.

    A reference written with N decimals and at least two significant digits (``0.33``, not ``0.2``)
    accepts a candidate that rounds to it (half up) only when the candidate is exact and has no finite decimal expansion (``1/3``, ``0.\overline{3}``):
    then no exact decimal reference could have been written. A candidate written as a decimal
    (``7.249`` for ``7.25``, ``0.333`` for ``0.33``) or one whose exact decimal is finite (``89/20``
    = 4.45 for ``4.5``) must be equal: GSM8K-style decimals are exact.
    """
    if candidate.value == reference.value:
        return True
    places = reference.rounding_places
    if places and candidate.decimal_places is None and not _terminates(candidate.value):
        return _round_half_up(candidate.value, places) == reference.value
    return False


_DEPENDENT = re.compile(r"^(?:y|[A-Za-z](?:\^\{?-1\}?)?\([A-Za-z]\))$")  # y, f(x): both name the function's value


def _same_name(candidate: str, reference: str) -> bool:
    """``x = 2x + 1`` is not ``y = 2x + 1``; ``y = 2x + 1`` and ``f(x) = 2x + 1`` are the same line."""
    return candidate == reference or bool(_DEPENDENT.match(candidate) and _DEPENDENT.match(reference))


_PRIME = re.compile(r"'|\\prime\b")
_NUMBER_SUBSCRIPT = re.compile(r"(?<![A-Za-z])\d+\s*_")  # 100_2, 12_{x}: a base or a label, not the number


_SYMBOLIC_CACHE_SIZE = 65536
_symbolic_cache: OrderedDict[tuple, tuple[str, str]] = OrderedDict()
_symbolic_cache_lock = threading.Lock()


def _symbolic(candidate: str, reference: str, places: int | None, budget: Budget) -> tuple[str, str]:
    """``rewards.math.symbolic.compare`` in a worker, memoized: a GRPO group repeats the same answers.

    Verdicts never depend on time (the guards raise instead), so a cached one is the same verdict.
    """
    if _SYMBOLIC_CACHE_SIZE == 0:
        return get_pool().compare(candidate, reference, places, budget)
    key = (candidate, reference, places)
    with _symbolic_cache_lock:
        hit = _symbolic_cache.get(key)
        if hit is not None:
            _symbolic_cache.move_to_end(key)
    if hit is not None:
        return hit
    status, detail = get_pool().compare(candidate, reference, places, budget)
    with _symbolic_cache_lock:
        _symbolic_cache[key] = (status, detail)
        if len(_symbolic_cache) > _SYMBOLIC_CACHE_SIZE:
            _symbolic_cache.popitem(last=False)
    return status, detail


def _compare_leaf(candidate: Leaf, reference: Leaf, budget: Budget, worked: bool = False) -> None:
    """Return if equal; raise _CandidateFailed(MISMATCH/UNPARSEABLE/TOO_COMPLEX) otherwise.

    The values are compared first (so a broken reference is always reported), then what the
    parsers drop: the names on the left (``x = 2x + 1`` is not ``y = 2x + 1``), primes (``f'(x)``
    is not ``f(x)``) and subscripts on numbers (``100_2`` is not ``100``).
    """
    _compare_values(candidate, reference, budget, worked)
    if candidate.name and reference.name and not _same_name(candidate.name, reference.name):
        raise _CandidateFailed(Reason.MISMATCH, f"names {candidate.name!r}, want {reference.name!r}")
    if len(_PRIME.findall(candidate.text)) != len(_PRIME.findall(reference.text)):
        raise _CandidateFailed(Reason.MISMATCH, f"primes differ: got {candidate.text!r}, want {reference.text!r}")
    if bool(_NUMBER_SUBSCRIPT.search(candidate.text)) != bool(_NUMBER_SUBSCRIPT.search(reference.text)):
        raise _CandidateFailed(
            Reason.MISMATCH, f"a subscripted number: got {candidate.text!r}, want {reference.text!r}"
        )


def _compare_values(candidate: Leaf, reference: Leaf, budget: Budget, worked: bool = False) -> None:
    r"""Equal values, or _CandidateFailed. A number reference is answered by a number written out (``27``,
    ``\frac{1}{2}``, ``1.5e3``), never by a computation of numerals (``9 \times 3``, ``\sqrt{729}``,
    ``\frac{54}{2}``), unless ``worked``: a step of a chain whose result is written out (``9 \times 3 = 27``)."""
    ref_q = structure.split_quantity(reference.text)
    cand_q = structure.split_quantity(candidate.text)
    if ref_q.unit and cand_q.unit and ref_q.unit != cand_q.unit:
        raise _CandidateFailed(Reason.MISMATCH, f"unit {cand_q.unit!r} is not {ref_q.unit!r}")
    ref_inf, cand_inf = _INFINITY.match(ref_q.core), _INFINITY.match(cand_q.core)
    if ref_inf or cand_inf:  # before words: a plain "infinity" is \infty, not a word
        if ref_inf and cand_inf and (ref_inf.group(1) == "-") == (cand_inf.group(1) == "-"):
            return
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    ref_words = structure.text_answer(reference.text)
    if ref_words is not None:
        if structure.plain_words(candidate.text) == ref_words:
            return
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    ref_core, cand_core = _unbraced(ref_q.core), _unbraced(cand_q.core)
    ref_num = _number(ref_core, is_reference=True)
    cand_num = _number(cand_core, is_reference=False)
    if ref_num is not None:
        if cand_num is not None and (cand_num.canonical or cand_core == ref_core):
            if _numbers_equal(cand_num, ref_num):
                return
            raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
        if cand_core != ref_core and not worked:
            _written_value(candidate.text, cand_core, reference.text, ref_num.rounding_places)
    places = ref_num.rounding_places if ref_num is not None else None
    # a number is read once, as the number rules read it (1e1 is 10, never 1*e*1), whatever the reference is
    cand_text = _as_latex(cand_num.value) if cand_num is not None and ref_num is None else cand_q.core
    # a number reference is sent as its exact value (2.3148 \times 10^{-3} is 23148/10^7, never a float product)
    ref_text = _as_latex(ref_num.value) if ref_num is not None else ref_q.core
    status, detail = _symbolic(cand_text, ref_text, places, budget)
    if status == "equal":
        return
    if status == "ref_invalid":
        raise InvalidReference(f"reference {reference.text!r} cannot be parsed: {detail}")
    if status == "different":
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    if status == "cand_unparseable":
        raise _CandidateFailed(Reason.UNPARSEABLE, f"cannot parse {candidate.text!r}: {detail}")
    raise _CandidateFailed(Reason.TOO_COMPLEX, f"{candidate.text!r}: {detail}")


def _unbraced(text: str) -> str:
    """``{27}`` is ``27`` (braces around the whole leaf are a wrapper: ``rewards.math.vocabulary.WRAPPERS``),
    ``+ 3`` is ``+3`` (a sign and its number, as ``\\pm 3`` leaves them), ``7/2.`` is ``7/2`` (a full stop)."""
    while text.startswith("{") and structure.matching_close(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    text = re.sub(r"^([-+])\s+", r"\1", text)
    return text[:-1] if re.fullmatch(r"[-+]?\d+\s*/\s*\d+\.", text) else text


def _as_latex(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return ("-" if value < 0 else "") + f"\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _written_value(candidate: str, core: str, reference: str, places: int | None) -> None:
    r"""Return if ``core`` may answer the number ``reference``: only a written exact value (``\sqrt{2}``,
    ``\frac{1+\sqrt{5}}{2}``, ``\frac{\pi}{4}``) for a rounded reference (``places``: ``1.41``, ``27.5``), never a
    computation, a vacuous factor or a negligible term (``rewards.math.written_values``); else _CandidateFailed."""
    if places:
        try:
            written_values.check(core, places)
            return
        except written_values.NotWritten as exc:
            why = f" ({exc})"
    else:
        why = ""
    raise _CandidateFailed(
        Reason.MISMATCH,
        f"{candidate!r} is not a number written out{why}: a computation does not answer the number {reference!r}",
    )


def _as_intervals(candidate, reference):
    r"""An inequality in one variable and an interval (set) are one answer (``-2 \le x \le 7``, ``[-2, 7]``).

    Only for the whole answer: inside a list, ``x < -1, x > 3`` is not read as a union (a system? a union?).
    """
    if isinstance(candidate, Leaf) and structure.is_interval_set(reference):
        candidate = structure.as_interval_set(candidate.text) or candidate
    elif isinstance(reference, Leaf) and structure.is_interval_set(candidate):
        reference = structure.as_interval_set(reference.text) or reference
    return candidate, reference


def _compare(candidate, reference, budget: Budget) -> None:
    """Return if ``candidate`` is the reference's answer; raise _CandidateFailed otherwise."""
    if structure.is_interval_set(candidate) and structure.is_interval_set(reference):
        candidate, reference = merged(candidate), merged(reference)  # x \ge 1 \text{ or } 1 \le x is [1, \infty)
    if isinstance(reference, Leaf):
        if _is_relation(reference):
            candidate = _complex_roots(candidate, reference)  # x = 2i, x = -2i for x^2 + 4 = 0
            if isinstance(candidate, Leaf) and not candidate.equation and not _is_value(candidate):
                candidate = structure.as_interval_set(candidate.text) or candidate  # -4 \le t \le 4
            ref_set = structure.as_interval_set(reference.text)  # 0 < x < 1 is read, not solved
            if ref_set is not None and isinstance(candidate, Collection):
                return _compare(candidate, ref_set, budget)
            if ref_set is None and (_is_value(candidate) or isinstance(candidate, Collection)):
                return _compare_solutions(candidate, reference, budget)
        if isinstance(candidate, Leaf):
            return _compare_leaf(candidate, reference, budget)
        if isinstance(candidate, Chain):  # "2 + 1 = 3": every part must be the value
            if _rearranged(candidate, reference):
                return _compare_equations(candidate, reference, budget)
            if reference.name and not (candidate.name and _same_name(candidate.name, reference.name)):
                raise _CandidateFailed(  # 1 = 1 is true, and says nothing about x
                    Reason.MISMATCH, f"an equation without the variable {reference.name!r} does not answer for it"
                )
            *steps, result = candidate.parts  # the result must be a number written out; the steps may compute it
            _compare(result, reference, budget)
            for part in steps:
                if isinstance(part, Leaf):
                    _compare_leaf(part, reference, budget, worked=True)
                else:
                    _compare(part, reference, budget)
            return
        raise _CandidateFailed(Reason.MISMATCH, "several values given where one is expected")
    if isinstance(reference, Chain):
        raise InvalidReference("reference is an equation chain; write the single expected value")
    if isinstance(reference, Matrix):
        if not isinstance(candidate, Matrix) or [len(r) for r in candidate.rows] != [len(r) for r in reference.rows]:
            raise _CandidateFailed(Reason.MISMATCH, "not a matrix of the same shape")
        for cand_row, ref_row in zip(candidate.rows, reference.rows):
            for cand_cell, ref_cell in zip(cand_row, ref_row):
                _compare(cand_cell, ref_cell, budget)
        return
    _compare_collections(candidate, reference, budget)


_RELATION = re.compile(r"(?<![<>!\\])=|<|>|\\le|\\ge|\\lt|\\gt")
_SCRIPT_GROUP = re.compile(r"[_^]\{[^{}]*\}")  # \sum_{k=1}: an index's "=" is not a relation


def _has_relation(text: str) -> bool:
    return bool(_RELATION.search(_SCRIPT_GROUP.sub("", text)))


def _is_relation(node) -> bool:
    """An unnamed equation or inequality leaf (``t^2 = 9``, ``t^2 \\le 16``): the answer is its solution set."""
    return isinstance(node, Leaf) and not node.name and (node.equation or _has_relation(node.text))


def _is_value(node) -> bool:
    return isinstance(node, Leaf) and not node.equation and not _has_relation(node.text)


_IMAGINARY_UNIT = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])")


def _variables(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", text)))


def _complex_roots(candidate, reference: Leaf):
    r"""``x = 2i`` (read as an equation, since ``i`` is a letter) as the value ``2i`` of ``x``, when the reference
    is a relation in the one variable ``x``: an equation's roots may be complex (``x = \pm 2i`` already reads so).
    ``i`` is the imaginary unit only where it is the only other letter; anything else is left as it was."""
    variables = _variables(reference.text)
    if len(variables) != 1 or variables == {"i"}:
        return candidate
    (variable,) = variables
    if isinstance(candidate, Collection) and not candidate.ordered:
        items = tuple(_complex_roots(item, reference) for item in candidate.items)
        return Collection(items, False, candidate.brackets, candidate.name, candidate.braced)
    if not (isinstance(candidate, Leaf) and candidate.equation and not candidate.name):
        return candidate
    sides = candidate.text.split("=")
    if len(sides) != 2 or sides[0].strip() != variable or not _IMAGINARY_UNIT.search(sides[1]):
        return candidate
    if _variables(_IMAGINARY_UNIT.sub("", sides[1])):
        return candidate
    return Leaf(sides[1].strip(), False, variable)


def _set_text(node, intervals: bool) -> str | None:
    r"""A candidate set as LaTeX the worker reads as a sympy set: ``\{3, -3\}``, ``[-4, 4] \cup (5, \infty)``."""
    if _is_value(node):
        return node.text if node.text.strip() == r"\emptyset" else "\\{" + node.text + "\\}"
    if intervals and structure.is_interval(node) and all(_is_value(end) for end in node.items):
        return f"{node.brackets[0]}{node.items[0].text}, {node.items[1].text}{node.brackets[1]}"
    if isinstance(node, Collection) and not node.ordered and node.items:
        if all(_is_value(item) for item in node.items):
            return "\\{" + ", ".join(item.text for item in node.items) + "\\}"
        if intervals and all(structure.is_interval(item) for item in node.items):
            parts = [_set_text(item, intervals) for item in node.items]
            return None if None in parts else " \\cup ".join(parts)
    return None


def _names(node) -> set[str]:
    found = {node.name} if getattr(node, "name", "") else set()
    for item in getattr(node, "items", ()):
        found |= _names(item) if isinstance(item, Leaf | Collection) else set()
    return found


def _compare_solutions(candidate, reference: Leaf, budget: Budget) -> None:
    r"""``t = 3 \text{ or } t = -3`` (or ``3, -3``, ``t = \pm 3``) for ``t^2 = 9``; ``[-4, 4]`` for ``t^2 \le 16``.

    The worker solves the reference exactly (``rewards.math.solution_sets``); the candidate must be explicit
    (values or intervals), and any name it gives must be the reference's one variable. Values for an equation
    must name it (``t = 3 \\text{ or } t = -3``, ``t = \\pm 3``): bare roots (``3, -3``) may be an answer to
    "which equation has these roots" copied from the question.
    """
    is_equation = not re.search(r"<|>|\\le|\\ge|\\lt|\\gt", reference.text)
    text = _set_text(candidate, intervals=not is_equation)
    if text is None:
        raise _CandidateFailed(Reason.MISMATCH, f"not the solution set of {reference.text!r}")
    variables = _variables(reference.text)
    names = _names(candidate)
    if is_equation and not names:  # "2, 3" could be the roots copied from "an equation with roots 2 and 3"
        raise _CandidateFailed(Reason.MISMATCH, f"values without the variable for the equation {reference.text!r}")
    if names and (len(variables) != 1 or names != variables):
        raise _CandidateFailed(Reason.MISMATCH, f"names {sorted(names)} are not the variable of {reference.text!r}")
    status, detail = _symbolic(text, reference.text, None, budget)
    if status == "equal":
        return
    if status == "ref_invalid":
        raise InvalidReference(f"reference {reference.text!r} cannot be parsed: {detail}")
    if status in ("different", "cand_unparseable"):
        raise _CandidateFailed(Reason.MISMATCH, f"got {text!r}, not the solution set of {reference.text!r}")
    raise _CandidateFailed(Reason.TOO_COMPLEX, f"{text!r}: {detail}")


def _rearranged(candidate: Chain, reference: Leaf) -> bool:
    r"""``3 - 2y = x`` for the reference ``x = 3 - 2y``: the same equation, solved for the same variable.

    Only when the reference names a plain variable and its value has other variables (a relation between
    variables, solved for one), and the candidate is one unnamed equation with that variable alone on one
    side. A candidate that leaves the relation unsolved (``x + 2y = 3``) is refused: it may be the question's
    own equation copied ("solve x + 2y = 3 for x"), as a restated ``t^2 = 9`` is for ``t = \pm 3``.
    """
    if candidate.name or len(candidate.parts) != 2 or not all(isinstance(p, Leaf) for p in candidate.parts):
        return False
    if not (reference.name and is_variable(reference.name) and "(" not in reference.name):
        return False
    letters = set(re.findall(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", reference.text)))
    solved_for = {p.text.strip() for p in candidate.parts}
    return bool(letters) and reference.name in solved_for


def _compare_equations(candidate: Chain, reference: Leaf, budget: Budget) -> None:
    """The two equations have the same solutions: one side a nonzero constant multiple of the other."""
    status, detail = _symbolic(
        "=".join(p.text for p in candidate.parts), f"{reference.name}={reference.text}", None, budget
    )
    if status == "equal":
        return
    if status == "ref_invalid":
        raise InvalidReference(f"reference {reference.name}={reference.text} cannot be parsed: {detail}")
    if status in ("different", "cand_unparseable"):
        raise _CandidateFailed(Reason.MISMATCH, f"not the equation {reference.name} = {reference.text}")
    raise _CandidateFailed(Reason.TOO_COMPLEX, detail)


def _in_name_order(candidate: Collection, reference: Collection) -> Collection:
    """``q=2,p=5`` against ``p=5,q=2``: a solution tuple with the same names, put in the reference's order."""
    cand_names, ref_names = candidate.name.split(","), reference.name.split(",")
    if len(ref_names) < 2 or cand_names == ref_names or sorted(cand_names) != sorted(ref_names):
        return candidate
    items = dict(zip(cand_names, candidate.items))
    return Collection(tuple(items[name] for name in ref_names), True, candidate.brackets, reference.name)


def _as_labeled_tuple(assignments, labeled: Collection):
    """``x = 1, y = 4`` against ``(x, y) = (1, 4)``: the assignments in the tuple's label order, else unchanged."""
    if not (labeled.ordered and labeled.brackets == "()" and "," in labeled.name):
        return assignments
    if not (isinstance(assignments, Collection) and not assignments.ordered):
        return assignments
    names = [getattr(item, "name", "") for item in assignments.items]
    labels = labeled.name.split(",")
    if not all(isinstance(item, Leaf) for item in assignments.items) or sorted(names) != sorted(labels):
        return assignments
    by_name = dict(zip(names, assignments.items))
    return Collection(tuple(Leaf(by_name[n].text) for n in labels), True, "()", labeled.name)


def _compare_collections(candidate, reference: Collection, budget: Budget) -> None:
    candidate = _as_labeled_tuple(candidate, reference)
    if isinstance(candidate, Collection) and candidate.ordered and "," in candidate.name:
        as_tuple = _as_labeled_tuple(reference, candidate)  # (x, y) = (1, 4) against x = 1, y = 4
        if as_tuple is not reference:
            reference = as_tuple
    if not isinstance(candidate, Collection) or candidate.ordered != reference.ordered:
        raise _CandidateFailed(Reason.MISMATCH, "not the same kind of collection (tuple, interval or set)")
    if candidate.brackets != reference.brackets:
        raise _CandidateFailed(Reason.MISMATCH, f"brackets {candidate.brackets} are not {reference.brackets}")
    if candidate.name and reference.name:
        candidate = _in_name_order(candidate, reference)
        if not _same_name(candidate.name, reference.name):
            raise _CandidateFailed(Reason.MISMATCH, f"names {candidate.name!r}, want {reference.name!r}")
    if len(candidate.items) < len(reference.items) or (
        reference.ordered and len(candidate.items) != len(reference.items)
    ):
        raise _CandidateFailed(Reason.MISMATCH, f"{len(candidate.items)} elements, want {len(reference.items)}")
    if reference.ordered:
        for cand_item, ref_item in zip(candidate.items, reference.items):
            _compare(cand_item, ref_item, budget)
        return
    if len({_item_name(item) for item in reference.items} - {""}) > 1 and not all(map(_item_name, candidate.items)):
        # x = 2, y = 3: which unnamed value is which is not written ("3, 2" would pay order-free, and "2, 3"
        # only if the question listed x first, which the verifier cannot see)
        raise _CandidateFailed(Reason.MISMATCH, "values without names for an answer that names each one")
    _compare_sets(candidate.items, reference.items, budget)


def _item_name(node) -> str:
    return getattr(node, "name", "")


def _first_equal(item, options: list, budget: Budget) -> int | None:
    for k, option in enumerate(options):
        try:
            _compare(item, option, budget)
        except _CandidateFailed as failure:
            if failure.reason is Reason.TOO_COMPLEX:
                raise
            continue
        return k
    return None


def _compare_sets(candidate_items: tuple, reference_items: tuple, budget: Budget) -> None:
    """Order-free; a value given twice is one value (a repeated solution is not a new one), a missing one fails.

    Equivalence is transitive, so greedy matching is exact.
    """
    unmatched, matched = list(reference_items), []
    for cand_item in candidate_items:
        k = _first_equal(cand_item, unmatched, budget)
        if k is not None:
            matched.append(unmatched.pop(k))
        elif _first_equal(cand_item, matched, budget) is None:
            raise _CandidateFailed(Reason.MISMATCH, "the sets differ")
    if unmatched:
        raise _CandidateFailed(Reason.MISMATCH, f"{len(unmatched)} expected element(s) missing")


MAX_RESTATEMENTS = 4  # distinct final answers grade() checks before calling them a hedge


_PLAIN_NUMBER = re.compile(r"-?[0-9]{1,60}(?:\.[0-9]{1,60})?\Z")  # ASCII digits: \d would take U+FF11


def _plain_numbers(candidate: str, ref_tree) -> _Outcome | None:
    """Both plain decimal numerals (``27``, ``-3.50``): the full path's verdict and detail, without normalizing,
    parsing and comparing trees (about half a GRPO numeric call). None for anything else, which takes that path;
    ``tests/rewards/math/test_plain_number_fast_path.py`` checks both paths agree."""
    if not (_PLAIN_NUMBER.match(candidate) and isinstance(ref_tree, Leaf) and _PLAIN_NUMBER.match(ref_tree.text)):
        return None
    if ref_tree.name or ref_tree.equation:
        return None
    cand_num, ref_num = parse_number(candidate), parse_number(ref_tree.text)
    if cand_num is None or ref_num is None or not (cand_num.canonical or candidate == ref_tree.text):
        return None
    if _numbers_equal(cand_num, ref_num):
        return _Outcome(True, Reason.CORRECT, "verified equal")
    return _Outcome(False, Reason.MISMATCH, f"got {candidate!r}, want {ref_tree.text!r}")


def _check(candidate: str, ref_tree, budget: Budget, reference: str = "") -> _Outcome:
    if len(candidate) > MAX_CANDIDATE_CHARS:  # before any scan: the caller's thread has no kill
        return _Outcome(False, Reason.TOO_COMPLEX, f"answer longer than {MAX_CANDIDATE_CHARS} characters")
    if (plain := _plain_numbers(candidate, ref_tree)) is not None and not looks_doubled(reference):
        return plain
    boxes, _ = boxed_contents(candidate)
    read: str | list[str] = candidate
    if len(set(" ".join(b.split()) for b in boxes)) > 1:  # "\boxed{1}\boxed{0}" is two answers, not 1*0
        listed = listed_boxes(candidate) if _several_values(ref_tree) else None
        if listed is None:
            return _Outcome(False, Reason.HEDGED, f"several boxed answers in {candidate!r}")
        read = listed  # "\boxed{2} and \boxed{3}" for a list of values is that list
    try:
        _compare(*_as_intervals(_prepare_candidate(read, ref_tree), ref_tree), budget)
    except _CandidateFailed as failure:
        return _Outcome(False, failure.reason, failure.detail)
    return _Outcome(True, Reason.CORRECT, "verified equal" + _reading_note(candidate, read, reference))


def _reading_note(candidate: str, read, reference: str) -> str:
    """What was read less literally than written, so a log shows it (a list of boxes, doubled backslashes)."""
    notes = []
    if isinstance(read, list):
        notes.append(f"the {len(read)} boxed answers read as one list")
    if looks_doubled(candidate):
        notes.append("doubled backslashes (escaped twice) read as LaTeX")
    if looks_doubled(reference):
        notes.append("the reference's doubled backslashes read as LaTeX")
    return f" ({'; '.join(notes)})" if notes else ""


def check(candidate: str | None, reference: str, deadline_s: float | None = None) -> _Outcome:
    """Compare an extracted answer with the reference and say why.

    ``deadline_s`` (default ``worker_pool.call_deadline_s()``) bounds the call's wall time; missing it
    raises ``VerifierOverloaded``. It never changes a verdict: no verdict comes from a clock.
    """
    ref_tree = _prepare_reference(reference)
    if candidate is None:
        return _Outcome(False, Reason.NO_ANSWER, "no answer")
    if not isinstance(candidate, str):
        raise TypeError(f"candidate must be str or None, got {type(candidate).__name__}")
    return _check(candidate, ref_tree, Budget.start(deadline_s), reference)


def is_correct(candidate: str | None, reference: str, deadline_s: float | None = None) -> bool:
    r"""True when ``candidate`` is mathematically the reference answer; False for anything else.

    Deterministic, safe in any thread or process. Raises ``InvalidReference`` when the reference
    itself is unreadable, and ``VerifierError`` when the verifier cannot give a verdict in time
    (``VerifierOverloaded``) or at all: never a False that the candidate did not earn.

    >>> is_correct("0.5", "1/2"), is_correct("16", "16.0"), is_correct("15", "16")
    (True, True, False)
    >>> is_correct("1,2", "12"), is_correct("3 or 4", "4"), is_correct(r"\boxed{1}\boxed{0}", "0")
    (False, False, False)
    """
    return check(candidate, reference, deadline_s).equal


def grade(
    completion: str,
    reference: str,
    think: str = THINK_NONE,
    deadline_s: float | None = None,
    *,
    question: str | list | None = None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> Verdict:
    r"""Extract the final answer from a whole completion and verify it: what rewards and scorers call.

    ``think`` is the extraction setting for reasoning models (``rewards.math.answer_format.THINK_MODES``) and
    ``answer_format`` the final-answer line read (``ANSWER_FORMATS``): training and evaluation must use the same
    ones. ``question``: the problem the completion answers (its text, or the prompt's messages, read by
    ``rewards.common.question_text``); a final answer that restates one of its expressions holding an operator or
    a function is refused with reason ``restated_question`` (``rewards.math.restatement``), before equivalence.
    Several different final answers are a hedge unless every one of them verifies equal to the reference
    (``ANSWER: 4`` then ``ANSWER: 4.0``), or the reference is a list of values and they are exactly that list
    (``\boxed{2}`` and ``\boxed{3}``).

    >>> grade("2 + 2 = 4\nANSWER: 4", "4")
    Verdict(correct=True, answer='4', reason=<Reason.CORRECT: 'correct'>, explanation='verified equal')
    >>> grade("It is 18.", "16").reason.value
    'no_answer'
    >>> grade("ANSWER: (x+2)(x-3)", "x^2 - x - 6", question="Expand $(x+2)(x-3)$.").reason.value
    'restated_question'
    """
    found = find_final_answer(completion, think, answer_format)
    ref_tree = _prepare_reference(reference)  # a bad reference is an error even when the model gave no answer
    question = question if question is None or isinstance(question, str) else question_text(question)
    budget = Budget.start(deadline_s)
    if found.answer is not None:
        if (copied := _restated([found.answer], question, reference)) is not None:
            return copied
        outcome = _check(found.answer, ref_tree, budget, reference)
        return Verdict(outcome.equal, found.answer, outcome.reason, outcome.detail)
    if found.reason is Reason.NO_ANSWER:
        return Verdict(False, None, Reason.NO_ANSWER, found.detail)
    distinct = list(dict.fromkeys(found.statements))
    several = found.detail.startswith("several")
    if several and len(distinct) <= structure.MAX_ITEMS and (copied := _restated(distinct, question, reference)):
        return copied
    if several and len(distinct) <= MAX_RESTATEMENTS:
        if all(_check(value, ref_tree, budget).equal for value in distinct):
            return Verdict(True, distinct[-1], Reason.CORRECT, f"verified equal (restated as {distinct!r})")
    if several and _several_values(ref_tree) and len(distinct) <= structure.MAX_ITEMS:
        if _list_equal(distinct, ref_tree, budget):
            detail = f"verified equal (the {len(distinct)} final answers read as one list)"
            return Verdict(True, ", ".join(distinct), Reason.CORRECT, detail)
    return Verdict(False, None, Reason.HEDGED, found.detail)


def _restated(answers: list[str], question: str | None, reference: str) -> Verdict | None:
    """The refusal of the first answer that restates an expression of ``question`` (None: none does)."""
    for answer in answers:
        if len(answer) <= MAX_CANDIDATE_CHARS and restated_expression(answer, question, reference) is not None:
            detail = (
                f"the answer {brief(answer)} restates an expression of the question: an answer copied from the "
                "question is not an answer"
            )
            return Verdict(False, answer, Reason.RESTATED_QUESTION, detail)
    return None


def _list_equal(values: list[str], ref_tree, budget: Budget) -> bool:
    """Several final answers against a list of values: exactly that list (a hedge with an extra value fails)."""
    if sum(map(len, values)) > MAX_CANDIDATE_CHARS:
        return False
    try:
        _compare(_prepare_candidate(values, ref_tree), ref_tree, budget)
    except _CandidateFailed:
        return False
    return True
