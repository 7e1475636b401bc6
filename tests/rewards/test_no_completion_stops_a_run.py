"""No completion can stop a training run (#39 item 4): every reward function gives each completion a verdict
or a documented ``None`` with its reason, logged and counted; only a broken installation raises.

Before #39, ``correctness`` let ``Unparseable`` (``ANSWER: }\\text{{5}``), ``VerifierBug`` (a 6,000-digit
integer printed past Python's int->str limit) and ``VerifierUnavailable`` (a pool poisoned by one failed
restart: tests/rewards/math/test_worker_pool_recovery.py) through to TRL, and a GPU run of hours ended on
one completion. Here the real cases, then every exception class the verifier can raise, injected into
``grade`` for one completion of a batch whose other completions must still be graded.
"""

from __future__ import annotations

import logging

import pytest

from rewards import VerifierBug, VerifierOverloaded, VerifierTooSlow, VerifierUnavailable, correctness
from rewards.code import code_rewards
from rewards.code.code_verifier import JudgeError
from rewards.common import brief, clip
from rewards.math import math_rewards
from rewards.math.answer_tree import TooComplex, Unparseable
from rewards.sandbox import SandboxError, SandboxUnavailable
from rewards.verdict import Reason, Verdict

BAD_ANSWER = "the completion that breaks the verifier"
BAD = "ANSWER: " + BAD_ANSWER
GOOD = "ANSWER: 4"


def run(completions, answer="4"):
    metrics, extras = {}, {}
    rewards = correctness(
        completions=completions,
        answer=[answer] * len(completions),
        log_metric=metrics.__setitem__,
        log_extra=extras.__setitem__,
    )
    return (
        rewards,
        extras["correctness/reason"],
        extras["correctness/explanation"],
        metrics,
        extras["correctness/answer"],
    )


@pytest.mark.usefixtures("generous_verifier_deadline")
@pytest.mark.parametrize(
    "completion, reference, reason",
    [
        ("ANSWER: }\\text{{5}", "5", "unparseable"),  # unbalanced braces: Unparseable escaped grade()
        ("ANSWER: \\binom{20000}{10000}", "1", "mismatch"),  # 6,000 digits printed in the worker: VerifierBug
        ("ANSWER: 10^{4400}", "1", "mismatch"),
        ("ANSWER: " + "9" * 5000, "1", "too_complex"),  # a 5,000-digit numeral: past int() parsing's limit too
    ],
)
def test_completions_that_stopped_runs_get_a_verdict(completion, reference, reason):
    rewards, reasons, explanations, metrics, _ = run([completion, GOOD], reference)
    assert rewards[0] == 0.0 and reasons[0] == reason, explanations[0]
    assert metrics[f"verdict/{reason}"] >= 0.5
    assert all(len(text) < 3000 for text in explanations)


def failing_grade(error: BaseException, when=lambda text: text == BAD):
    """``grade`` raising ``error`` on the completions ``when`` picks, the real one on the others."""
    real = math_rewards.grade

    def grade(text, reference, think="none", deadline_s=None, **settings):  # settings: question, answer_format
        if when(text):
            raise error
        return real(text, reference, think=think, deadline_s=deadline_s, **settings)

    return grade


NONE_WITH_A_REASON = [  # what the verifier may raise on a valid candidate -> reward None, with this reason
    (VerifierOverloaded("no verdict within the 0.9s deadline: the machine is busy"), "verifier_overloaded"),
    (VerifierTooSlow("'x' vs 'y': more than 1.00s of CPU (the safety net)"), "verifier_too_slow"),
    (VerifierBug("verifier worker raised on 'x' vs 'y':\nValueError: Exceeds the limit (4300 digits)"), "verifier_bug"),
    (ValueError("Exceeds the limit (4300 digits) for integer string conversion"), "verifier_bug"),
    (RecursionError("maximum recursion depth exceeded"), "verifier_bug"),
    (KeyError("a bug in the front end"), "verifier_bug"),
]


@pytest.mark.parametrize(
    "error, reason", NONE_WITH_A_REASON, ids=lambda v: type(v).__name__ if not isinstance(v, str) else v
)
def test_verifier_trouble_is_none_with_its_reason_logged_and_counted(monkeypatch, caplog, error, reason):
    monkeypatch.setattr(math_rewards, "grade", failing_grade(error))
    with caplog.at_level(logging.WARNING, logger="rewards.math.math_rewards"):
        rewards, reasons, explanations, metrics, answers = run([BAD, GOOD, "ANSWER: 5"])
    assert rewards == [None, 1.0, 0.0]
    assert reasons == [reason, "correct", "mismatch"]
    assert reason in math_rewards.OUTCOMES_WITHOUT_A_VERDICT
    assert metrics[f"verdict/{reason}"] == pytest.approx(1 / 3) and sum(metrics.values()) == pytest.approx(1.0)
    assert "sample 0" in caplog.text and f"{brief(BAD_ANSWER)} vs reference '4'" in caplog.text  # the pair
    assert answers == [BAD_ANSWER, "4", "5"]  # the rollout log shows the answer that got no verdict
    if reason == "verifier_bug":
        assert any(record.levelno >= logging.ERROR for record in caplog.records)


@pytest.mark.parametrize(
    "error, reason", [(Unparseable("unbalanced braces"), "unparseable"), (TooComplex("deep"), "too_complex")]
)
def test_a_parse_error_past_grade_is_the_candidates_verdict(monkeypatch, caplog, error, reason):
    """The front end should have turned it into a verdict; the reward still does: 0.0 with the reason, and a
    warning that it escaped (a defect to report)."""
    monkeypatch.setattr(math_rewards, "grade", failing_grade(error))
    with caplog.at_level(logging.WARNING, logger="rewards.math.math_rewards"):
        rewards, reasons, explanations, _, _ = run([BAD, GOOD])
    assert rewards == [0.0, 1.0] and reasons == [reason, "correct"]
    assert "raised past the verifier's front end" in explanations[0] and "front end" in caplog.text


def test_a_parse_error_the_reference_also_raises_is_an_invalid_reference(monkeypatch):
    monkeypatch.setattr(math_rewards, "grade", failing_grade(Unparseable("unbalanced braces"), when=lambda _: True))
    rewards, reasons, explanations, _, _ = run([BAD])
    assert rewards == [None] and reasons == ["invalid_reference"] and "cannot be read" in explanations[0]


def test_a_broken_installation_stops_the_run(monkeypatch):
    monkeypatch.setattr(math_rewards, "grade", failing_grade(VerifierUnavailable("verifier worker exited: no sympy")))
    with pytest.raises(VerifierUnavailable, match="no sympy"):
        run([GOOD, BAD])


def test_a_reference_that_is_not_text_stops_the_run_with_one_message():
    with pytest.raises(TypeError, match=r"answer\[0\] must be a string, got int"):
        correctness(completions=[GOOD], answer=[4])


def test_messages_quote_huge_candidates_and_ints_bounded(monkeypatch):
    huge = "ANSWER: " + "7" * 100_000
    monkeypatch.setattr(math_rewards, "grade", failing_grade(VerifierBug("x" * 100_000), when=lambda t: t == huge))
    rewards, _, explanations, _, _ = run([huge])
    assert rewards == [None] and len(explanations[0]) < 1200


HUGE_VALUES = {  # ids by hand: pytest's own id of a 5,000-digit int hits the int->str limit
    "int-5000-digits": 10**5000,
    "int-20000-digits": -(10**20000),
    "str-1M": "7" * 10**6,
    "bytes": b"\x00" * 10**5,
    "int-64-bit": 2**64,
    "float": 1.5,
    "none": None,
    "object": object(),
}


@pytest.mark.parametrize("value", list(HUGE_VALUES.values()), ids=list(HUGE_VALUES))
def test_brief_never_raises_and_stays_short(value):
    assert len(brief(value)) < 250


def test_clip_keeps_both_ends_of_a_long_message():
    message = "head " + "x" * 100_000 + " tail"
    assert len(clip(message)) < 2100 and clip(message).startswith("head") and clip(message).endswith("tail")


# -- the code reward -----------------------------------------------------------------------------------

CODE_TESTS = {"asserts": ["assert add(1, 2) == 3"], "entry_point": "add"}


@pytest.mark.parametrize(
    "error, reason",
    [
        (JudgeError("the judge failed (exit 1), and again against a stand-in"), "judge_error"),
        (SandboxError("bubblewrap did not start the solution or the judge sandbox"), "sandbox_error"),
        (RuntimeError("a bug in the judge's host code"), "verifier_bug"),
        (UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed"), "verifier_bug"),
    ],
)
def test_code_reward_trouble_on_one_completion_is_none_and_the_batch_goes_on(monkeypatch, error, reason):
    async def grade_code(text, spec, limits=None):
        if text == BAD:
            raise error
        return Verdict(True, "code", Reason.CORRECT, "passed 1/1 tests", 1, 1)

    monkeypatch.setattr(code_rewards, "grade_code", grade_code)
    metrics, extras = {}, {}
    rewards = code_rewards.code_tests(
        completions=[BAD, "ok"], tests=[CODE_TESTS] * 2, log_metric=metrics.__setitem__, log_extra=extras.__setitem__
    )
    assert rewards == [None, 1.0]
    assert extras["code_tests/reason"] == [reason, "correct"]
    assert reason in code_rewards.CODE_OUTCOMES_WITHOUT_A_VERDICT
    assert metrics[f"code_verdict/{reason}"] == 0.5 and sum(metrics.values()) == pytest.approx(1.0)


def test_code_reward_without_a_sandbox_stops_the_run(monkeypatch):
    async def grade_code(text, spec, limits=None):
        raise SandboxUnavailable("bubblewrap is not installed")

    monkeypatch.setattr(code_rewards, "grade_code", grade_code)
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        code_rewards.code_tests(completions=["ok"], tests=[CODE_TESTS])
