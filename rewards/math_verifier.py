r"""``is_correct`` and ``grade``: the one function that is both the reward and the metric.

Pipeline: normalize both strings (``rewards.structure``), compare their top-level shapes
(tuple/interval/set/matrix/chain), then compare leaves: plain numbers exactly as fractions
in-process (``rewards.exact_numbers``), anything symbolic in a killable worker process
(``rewards.symbolic`` via ``rewards.worker_pool``). A candidate that fails any bound is False;
a reference that cannot be read raises ``InvalidReference`` (a dataset bug, not a wrong answer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from rewards import structure
from rewards.answer_format import find_final_answer
from rewards.exact_numbers import ExactNumber, NumberTooLarge, parse_number
from rewards.structure import Chain, Collection, Leaf, Matrix
from rewards.verdict import Reason, Verdict
from rewards.worker_pool import get_pool

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


@lru_cache(maxsize=8192)
def _prepare_reference(reference: str):
    if not isinstance(reference, str):
        raise TypeError(f"reference must be str, got {type(reference).__name__}")
    try:
        return structure.parse_structure(structure.normalize(reference), equations=structure.REFERENCE)
    except (structure.Unparseable, structure.TooComplex) as exc:
        raise InvalidReference(f"reference {reference!r} cannot be parsed: {exc}") from None


def check_reference(reference: str) -> None:
    """Raise ``InvalidReference`` if ``reference`` cannot be read; dataset loaders call this up front.

    A structural check only (fast, in-process); a symbolic leaf the grammar rejects is still
    reported at grading time.
    """
    _prepare_reference(reference)


def _is_equation(tree) -> bool:
    return isinstance(tree, Leaf) and tree.equation


def _prepare_candidate(candidate: str, reference_tree):
    if len(candidate) > MAX_CANDIDATE_CHARS:
        raise _CandidateFailed(Reason.TOO_COMPLEX, f"answer longer than {MAX_CANDIDATE_CHARS} characters")
    try:
        return structure.parse_structure(
            structure.normalize(candidate),
            equations=structure.EQUATION if _is_equation(reference_tree) else structure.VALUE,
        )
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


def _numbers_equal(candidate: ExactNumber, reference: ExactNumber) -> bool:
    """Exact equality; a reference written with N decimals (``3.14``) also accepts values that round to it."""
    if candidate.value == reference.value:
        return True
    places = reference.decimal_places
    if places:
        if candidate.decimal_places is not None and candidate.decimal_places < places:
            return False  # "3.1" does not state "3.14"
        return _round_half_up(candidate.value, places) == reference.value
    return False


def _compare_leaf(candidate: Leaf, reference: Leaf) -> None:
    """Return if equal; raise _CandidateFailed(MISMATCH/UNPARSEABLE/TOO_COMPLEX) otherwise."""
    ref_q = structure.split_quantity(reference.text)
    cand_q = structure.split_quantity(candidate.text)
    if ref_q.unit and cand_q.unit and ref_q.unit != cand_q.unit:
        raise _CandidateFailed(Reason.MISMATCH, f"unit {cand_q.unit!r} is not {ref_q.unit!r}")
    ref_words = structure.text_answer(reference.text)
    if ref_words is not None:
        if structure.plain_words(candidate.text) == ref_words:
            return
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    ref_inf, cand_inf = _INFINITY.match(ref_q.core), _INFINITY.match(cand_q.core)
    if ref_inf or cand_inf:
        if ref_inf and cand_inf and (ref_inf.group(1) == "-") == (cand_inf.group(1) == "-"):
            return
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    ref_num = _number(ref_q.core, is_reference=True)
    cand_num = _number(cand_q.core, is_reference=False)
    if ref_num is not None and cand_num is not None:
        if _numbers_equal(cand_num, ref_num):
            return
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    places = ref_num.decimal_places if ref_num is not None else None
    status, detail = get_pool().compare(cand_q.core, ref_q.core, places)
    if status == "equal":
        return
    if status == "ref_invalid":
        raise InvalidReference(f"reference {reference.text!r} cannot be parsed: {detail}")
    if status == "different":
        raise _CandidateFailed(Reason.MISMATCH, f"got {candidate.text!r}, want {reference.text!r}")
    if status == "cand_unparseable":
        raise _CandidateFailed(Reason.UNPARSEABLE, f"cannot parse {candidate.text!r}: {detail}")
    raise _CandidateFailed(Reason.TOO_COMPLEX, f"{candidate.text!r}: {detail}")


def _compare(candidate, reference) -> None:
    if isinstance(reference, Leaf):
        if isinstance(candidate, Leaf):
            return _compare_leaf(candidate, reference)
        if isinstance(candidate, Chain):  # "2 + 1 = 3": every part must be the value
            for part in candidate.parts:
                _compare(part, reference)
            return
        raise _CandidateFailed(Reason.MISMATCH, "several values given where one is expected")
    if isinstance(reference, Chain):
        raise InvalidReference("reference is an equation chain; write the single expected value")
    if isinstance(reference, Matrix):
        if not isinstance(candidate, Matrix) or [len(r) for r in candidate.rows] != [len(r) for r in reference.rows]:
            raise _CandidateFailed(Reason.MISMATCH, "not a matrix of the same shape")
        for cand_row, ref_row in zip(candidate.rows, reference.rows):
            for cand_cell, ref_cell in zip(cand_row, ref_row):
                _compare(cand_cell, ref_cell)
        return
    # reference is a Collection
    if not isinstance(candidate, Collection) or candidate.ordered != reference.ordered:
        raise _CandidateFailed(Reason.MISMATCH, "not the same kind of collection (tuple, interval or set)")
    if candidate.brackets != reference.brackets:
        raise _CandidateFailed(Reason.MISMATCH, f"brackets {candidate.brackets} are not {reference.brackets}")
    if len(candidate.items) != len(reference.items):
        raise _CandidateFailed(Reason.MISMATCH, f"{len(candidate.items)} elements, want {len(reference.items)}")
    if reference.ordered:
        for cand_item, ref_item in zip(candidate.items, reference.items):
            _compare(cand_item, ref_item)
        return
    unmatched = list(reference.items)
    for cand_item in candidate.items:  # equivalence is transitive, so greedy matching is exact
        for k, ref_item in enumerate(unmatched):
            try:
                _compare(cand_item, ref_item)
            except _CandidateFailed as failure:
                if failure.reason is Reason.TOO_COMPLEX:
                    raise
                continue
            del unmatched[k]
            break
        else:
            raise _CandidateFailed(Reason.MISMATCH, "the sets differ")


def check(candidate: str | None, reference: str) -> _Outcome:
    """Compare an extracted answer with the reference and say why."""
    ref_tree = _prepare_reference(reference)
    if candidate is None:
        return _Outcome(False, Reason.NO_ANSWER, "no answer")
    if not isinstance(candidate, str):
        raise TypeError(f"candidate must be str or None, got {type(candidate).__name__}")
    try:
        _compare(_prepare_candidate(candidate, ref_tree), ref_tree)
    except _CandidateFailed as failure:
        return _Outcome(False, failure.reason, failure.detail)
    return _Outcome(True, Reason.CORRECT, "verified equal")


def is_correct(candidate: str | None, reference: str) -> bool:
    r"""True when ``candidate`` is mathematically the reference answer; False for anything else.

    Pure and deterministic, safe in any thread or process. Raises ``InvalidReference`` when the
    reference itself is unreadable.

    >>> is_correct("0.5", "1/2"), is_correct("16", "16.0"), is_correct("15", "16")
    (True, True, False)
    >>> is_correct("1,2", "12"), is_correct("3 or 4", "4")
    (False, False)
    """
    return check(candidate, reference).equal


def grade(completion: str, reference: str) -> Verdict:
    r"""Extract the final answer from a whole completion and verify it: what rewards and scorers call.

    >>> grade("2 + 2 = 4\nANSWER: 4", "4")
    Verdict(correct=True, answer='4', reason=<Reason.CORRECT: 'correct'>, explanation='verified equal')
    >>> grade("It is 18.", "16").reason.value
    'no_answer'
    """
    found = find_final_answer(completion)
    if found.answer is None:
        _prepare_reference(reference)  # a bad reference is an error even when the model gave no answer
        if found.reason is Reason.HEDGED:
            shown = ", ".join(repr(s) for s in found.statements[:4])
            return Verdict(False, None, Reason.HEDGED, f"several different final answers: {shown}")
        return Verdict(False, None, Reason.NO_ANSWER, "no ANSWER: line or \\boxed{}")
    outcome = check(found.answer, reference)
    return Verdict(outcome.equal, found.answer, outcome.reason, outcome.detail)
