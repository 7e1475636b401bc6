r"""Two plain decimal numerals skip the tree (``math_verifier._plain_numbers``, issue #39: >= 10x Math-Verify's
numeric calls/s): its verdicts and details must be the full path's, on every kind of plain numeral."""

import random

import pytest

from rewards.math import math_verifier
from rewards.math.math_verifier import check, grade

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

NUMERALS = [
    "0", "-0", "00", "0.0", "-0.0", "0.00", "007", "7", "-7", "7.0", "7.00", "7.000", "07.0", "7.10", "7.1",
    "-7.1", "-7.10", "2.50", "2.5", "2.49", "2.51", "16", "16.0", "16.00", "160", "1600", "0.33", "0.333",
    "0.3", "0.5", "0.50", ".5", "5.", "1.05", "1.050", "10", "100", "1000000", "999999999999999999999",
    "1000000000000000000000", "-1000000", "12345678901234567890.5", "3.14159", "3.14", "3.1416", "2",
    "0001", "1", "-1", "1.0000000001", "1.000000000", "42", "-42", "4.2", "0.42",
    "1" * 61, "1" * 60, "0." + "0" * 59 + "1",
    "\uff11", "\uff11\uff16", "\u0663", "1\u0666", "\u0661.5", "\u00b2", "\u2155",  # other scripts' digits: refused
]  # fmt: skip


def _full_path(monkeypatch):
    monkeypatch.setattr(math_verifier, "_plain_numbers", lambda candidate, ref_tree: None)


def _pairs():
    table = [(c, r) for c in NUMERALS for r in NUMERALS]
    rng = random.Random(0)
    for _ in range(300):
        value = rng.choice([rng.randint(-500, 500), round(rng.uniform(-1000, 1000), rng.randint(0, 4))])
        table.append((str(value + rng.choice([0, 0, 1, -1])), str(value)))
        table.append((f"{value}0", str(value)))
    return table


def _outcome(candidate, reference):
    try:
        return check(candidate, reference)
    except Exception as exc:  # a bad reference: the same error either way
        return type(exc).__name__, str(exc)


def test_the_fast_path_gives_the_full_paths_verdicts(monkeypatch):
    pairs = _pairs()
    fast = [_outcome(c, r) for c, r in pairs]
    assert sum(isinstance(o, tuple) for o in fast) > len(NUMERALS)  # bad references are in the table
    assert any(math_verifier._plain_numbers(c, math_verifier._prepare_reference(r)) for c, r in pairs[:100])
    _full_path(monkeypatch)
    full = [_outcome(c, r) for c, r in pairs]
    differ = [(p, f, s) for p, f, s in zip(pairs, fast, full) if f != s]
    assert not differ, differ[:5]


@pytest.mark.parametrize("completion", ["ANSWER: 27", "ANSWER: 27.0", "ANSWER: 28", "ANSWER: 027", r"\boxed{27}"])
def test_grade_is_the_same_through_the_fast_path(monkeypatch, completion):
    fast = grade(completion, "27")
    _full_path(monkeypatch)
    assert grade(completion, "27") == fast


@pytest.mark.parametrize(
    ("candidate", "reference"),
    [("9 3", "93"), ("{9}{3}", "93"), ("9.3.0", "9.3"), ("1,000", "1000"), ("-0", "0"), ("1e3", "1000")],
)
def test_what_is_not_two_plain_numerals_takes_the_full_path(candidate, reference):
    ref_tree = math_verifier._prepare_reference(reference)
    plain = math_verifier._PLAIN_NUMBER.match(candidate) and math_verifier._PLAIN_NUMBER.match(ref_tree.text)
    assert (math_verifier._plain_numbers(candidate, ref_tree) is None) is not bool(plain)
