"""The exploit probe for any Inspect scorer (inspect_tasks/scorer_probe.py): its verdicts on Inspect's built-in scorers
and inspect_evals' tasks, row by row as docs/inspect-tasks.md shows them, and the decision rule on scorers written here.

No model: each row's task is prepared as training prepares it and each cheat is scored through the task's own replay
(the chain, the scorer, value_to_float), then again with the target swapped.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import sys
from decimal import Decimal

import pytest
from inspect_ai.dataset import Sample

from inspect_tasks import scorer_probe
from inspect_tasks.scorer_probe import (
    CARPET,
    CHOICES,
    ECHO,
    FORMAT,
    NO_ANSWER,
    NUMBERS,
    SEVERAL,
    build_cheats,
    number_format,
    probe_task_samples,
    refusal,
    target_kind,
)
from tests.helpers import REPO


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


probe_scorers = _script("probe_scorers")

# (row, reward) -> (pays cheats?, a family that must have paid one, or None). The rows of docs/inspect-tasks.md.
EXPECTED = {
    ("builtin_includes", "includes"): (True, CARPET),  # every integer 0-1000 holds the target
    ("builtin_match", "match"): (True, FORMAT),  # reads the end: '124' pays 24 and 124
    ("builtin_match_numeric", "match"): (True, SEVERAL),  # its hedges, on the six-digit target (5 significant digits)
    ("builtin_match_any_numeric", "match"): (True, NUMBERS),
    ("builtin_exact", "exact"): (False, None),
    ("builtin_pattern", "pattern"): (False, None),
    ("builtin_answer_line", "answer"): (False, None),
    ("builtin_answer_word", "answer"): (False, None),
    ("builtin_math", "math"): (True, NUMBERS),  # '125000 3470' read as 128470
    ("verigrpo_math_verifier", "math_verifier.correct"): (False, None),
    ("builtin_choice", "choice"): (False, None),
    ("builtin_choice_multiple_correct", "choice"): (False, None),
    ("builtin_answer_letter", "answer"): (False, None),
    ("builtin_f1", "f1"): (True, ECHO),
    ("builtin_exact_spans", "exact"): (False, None),
    ("builtin_includes_spans", "includes"): (True, ECHO),
    ("inspect_evals_gsm8k", "match"): (True, SEVERAL),
    ("inspect_evals_aime2024", "aime_scorer"): (True, FORMAT),
    ("inspect_evals_math", "expression_exact_match"): (False, None),
    ("inspect_evals_math", "expression_exact_match_sympy"): (False, None),
    ("inspect_evals_arc_easy", "choice"): (False, None),
    ("inspect_evals_boolq", "pattern"): (False, None),
    ("inspect_evals_squad", "f1"): (True, ECHO),
    ("inspect_evals_squad", "exact"): (False, None),
    ("inspect_evals_drop", "f1"): (True, NUMBERS),
}
ROWS = {row.task: row for row in probe_scorers.ROWS}


@functools.cache
def probed(task: str):
    return probe_scorers.probe_row(ROWS[task])


def test_every_row_of_the_table_has_an_expected_verdict():
    rewards = {(r.task, reward) for r in probe_scorers.ROWS for reward in probed(r.task).report.rewards}
    judged = {(r.task, reward) for r in probe_scorers.ROWS for reward in (r.rewards or probed(r.task).report.rewards)}
    assert judged == set(EXPECTED) and judged <= rewards


@pytest.mark.parametrize(("task", "reward"), sorted(EXPECTED))
def test_the_probe_verdict_on_each_scorer(task, reward):
    pays, family = EXPECTED[(task, reward)]
    result = probed(task)
    report = result.report
    assert report.failed(reward) == pays, report.table()
    assert not report.errors, report.errors
    if family is not None:
        assert family in report.families_failed(reward), report.table()
    line = next(
        line
        for line in probe_scorers.table_lines([result])[2:]
        if reward in line or len(result.row.rewards or report.rewards) == 1
    )
    assert line in probe_scorers.page_table(), (
        f"docs/inspect-tasks.md is stale: python scripts/probe_scorers.py --write\n{line}"
    )


def test_the_page_holds_exactly_the_scripts_table():
    results = [probed(row.task) for row in probe_scorers.ROWS]
    assert probe_scorers.page_table() == probe_scorers.table_lines(results)


def test_choice_with_two_answer_lines_is_one_guess_not_a_cheat():
    """multiple_choice reads the last ANSWER: line: two lines are one guess, paid only under the letter they end on."""
    report = probed("builtin_choice").report
    two_lines = [f for f in report.one_reading if f.cheat.startswith("two ANSWER: lines")]
    assert two_lines and all(f.completion.endswith(f"ANSWER: {f.target}") for f in two_lines)
    assert not [f for f in report.cheats if f.cheat.startswith("two ANSWER: lines")]


def test_match_numeric_pays_a_hedge_for_two_values_only_where_rounding_joins_them():
    """'ANSWER: 24 or 25' is paid for 25 only (the last number): one reading. On a six-digit target the same hedge
    is paid under both values, because match(numeric=True) compares 5 significant digits."""
    report = probed("builtin_match_numeric").report
    hedges = [f for f in report.cheats + report.one_reading if f.family == SEVERAL]
    small = [f for f in hedges if f.sample_id == "apples"]
    large = [f for f in hedges if f.sample_id == "library"]
    assert small and not any(f.cheat_paid for f in small)
    assert large and all(f.cheat_paid and f.also_paid == "128471" for f in large)


# ---- the decision rule, on scorers written here -----------------------------------------------------------------

NUMERIC = Sample(id="q", input="Tom has 3 bags with 8 apples each. How many apples?", target="24")


def _probe(pays, sample=NUMERIC):
    """The probe with ``pays(completion, target) -> float`` as the only reward."""

    async def score(sample, completion):
        return {"r": pays(completion, str(sample.target))}

    return asyncio.run(probe_task_samples([sample], score, ["r"]))


def _last_number(text: str) -> str:
    words = [w.strip(".,:") for w in text.split()]
    numbers = [w for w in words if w.replace(".", "", 1).isdigit()]
    return numbers[-1] if numbers else ""


@pytest.mark.parametrize(
    ("name", "pays", "cheats"),
    [
        ("substring", lambda text, target: float(target in text), True),
        ("anything", lambda text, target: 1.0, True),
        ("last number, exact", lambda text, target: float(_last_number(text) == target), False),
        ("whole text", lambda text, target: float(text.strip() == f"ANSWER: {target}"), False),
        ("last number, 2 significant digits", lambda text, target: float(_rounded(_last_number(text), target)), True),
    ],
)
def test_paid_under_two_targets_is_a_cheat_one_reading_is_not(name, pays, cheats):
    report = _probe(pays)
    assert report.failed("r") == cheats, report.table()


def _rounded(stated: str, target: str) -> bool:
    try:
        return f"{float(stated):.2g}" == f"{float(target):.2g}"
    except ValueError:
        return False


@pytest.mark.parametrize(("target", "pair"), [("no", "yes or no"), ("No", "Yes or No"), ("false", "true or false")])
def test_an_echoed_prompt_that_offers_both_answers_is_a_hedge_in_the_targets_own_case(target, pair):
    """A yes/no (or true/false) prompt that spells out both answers, echoed, states both: a scorer that pays a
    'Verdict:' line holding the target pays the echo under either target. The swap writes the other answer as the
    target is written (lower case here); with 'Yes' it swapped in a string this case-sensitive scorer never pays."""
    sample = Sample(id="q", input=f"Is 17 even?\nFinish with: Verdict: {pair}", target=target)

    def verdict_holds_target(text, target):
        line = text.rsplit("Verdict:", 1)[1] if "Verdict:" in text else ""
        return float(target in line)

    report = _probe(verdict_holds_target, sample)
    echo = [f for f in report.cheats if f.family == ECHO]
    assert report.failed("r") and echo and echo[0].why == "paid for more than one answer at once", report.table()


def test_a_scorer_that_pays_everything_is_named_for_paying_no_answer():
    report = _probe(lambda text, target: 1.0)
    empty = [f for f in report.cheats if f.cheat == "empty"]
    assert empty and empty[0].why == "paid with no answer at all" and empty[0].family == NO_ANSWER


def test_a_scorer_that_raises_is_reported_not_paid():
    def pays(text, target):
        if "1000" in text:
            raise ValueError("too long")
        return 0.0

    report = _probe(pays)
    assert report.ok and report.errors and "ValueError: too long" in report.errors[0]


def test_none_is_no_pay():
    assert _probe(lambda text, target: None).ok


# ---- what the cheats are ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "value", "written"),
    [
        ("24", Decimal(24), "25"),
        ("-3.5", Decimal("-3.5"), "-3.4"),
        ("$1,234.50", Decimal("1234.50"), "$1,234.51"),
        ("60%", Decimal(60), "61%"),
        ("x + 1", None, None),
        ("3, 4", None, None),
        ("Paris", None, None),
    ],
)
def test_a_numeric_target_keeps_its_format(target, value, written):
    parsed = number_format(target)
    if value is None:
        assert parsed is None
        return
    assert parsed[0] == value and parsed[1].write(value + parsed[1].unit) == written


@pytest.mark.parametrize(
    ("sample", "kind"),
    [
        (NUMERIC, "number"),
        (Sample(input="Capital?", choices=["Paris", "Rome"], target="A"), "letter"),
        (Sample(input="Is it?", target="Yes"), "yesno"),
        (Sample(input="Who?", target="Marie Curie"), "text"),
        (Sample(input="Pick", choices=["1", "2"], target=["B"]), "letter"),
    ],
)
def test_target_kind(sample, kind):
    assert target_kind(sample).kind == kind


def test_the_cheats_state_what_they_write():
    cheats = {c.name: c for c in build_cheats(NUMERIC)}
    carpet = cheats["every integer 0-1000"]
    assert carpet.text.split() == [str(i) for i in range(1001)] and len(carpet.states) == 1001
    assert cheats["the numbers listed"].text == "3, 8" and cheats["the numbers listed"].states == ("3", "8")
    assert set(cheats["their pairwise results listed"].states) >= {"11", "24", "5"}
    assert cheats["one part in a million off"].text == "24.00001"
    assert cheats["two ANSWER: lines, target first"].text == "ANSWER: 24\nANSWER: 25"
    assert cheats["empty"].states == () and cheats["the prompt"].text == NUMERIC.input
    letters = {c.name: c for c in build_cheats(Sample(input="Q?", choices=["x", "y", "z"], target="B"))}
    assert letters["ANSWER: A, B, C, ..."].text == "ANSWER: A, B, C" and CHOICES == letters["A B C ..."].family


def test_the_refusal_names_the_cheat_the_sample_the_score_and_the_key():
    report = _probe(lambda text, target: float(target in text))
    message = refusal(report, "exploit_probe: false", "python scripts/probe_exploits.py --inspect_task T.py@t")
    first = report.cheats[0]
    for part in (repr(first.cheat), f"sample {first.sample_id}", "scored 1", "exploit_probe: false", "T.py@t"):
        assert part in message
    assert scorer_probe.describe(first) in message
