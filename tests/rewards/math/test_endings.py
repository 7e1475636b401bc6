r"""Real models' final-answer endings, both ways (issue #50): ordinary endings are paid, take-backs and negations not.

Each row is a whole completion's ending in the style of a common model family (Qwen, Llama, Mistral, DeepSeek-R1,
GPT, Gemma, Phi), graded by ``rewards.grade`` against the reference ``120`` (the training reward and the eval
scorer call the same function), then through ``format_reward``, which reads the same statements. The rule is
``rewards/math/endings.py``: text after the final answer is a hedge only when it takes the answer back (a
retraction, doubt, correction, alternative, condition, negation) or states another value; a negated answer is no
answer. ``test_table_counts`` states the counts the report quotes.
"""

import pytest

from rewards import Reason, extract_answer, format_reward, grade

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

P = pytest.param
REFERENCE = "120"

# --- ordinary endings: paid ---------------------------------------------------------------------------------------
ORDINARY = [
    # the four, refused before round 6
    P("So the total is \\boxed{120}\n\nLet me know if you have any other questions!", id="issue-let-me-know"),
    P("24 * 5 = 120.\nANSWER: 120\nThat is my final answer.", id="issue-that-is-my-final-answer"),
    P("She sold \\boxed{120}, which is the answer to the question.", id="issue-which-is-the-answer"),
    P("ANSWER: 120\nThe answer was checked by adding 24 five times.", id="issue-checked-by-adding"),
    # Qwen2.5 / Qwen2.5-Math
    P("Therefore, the total number of clips is \\(\\boxed{120}\\).", id="qwen-inline-math-period"),
    P("So, Natalia sold a total of \\(\\boxed{120}\\) clips in April and May.", id="qwen-box-then-noun-phrase"),
    P("The answer is \\boxed{120}.<|im_end|>", id="qwen-im-end-token"),
    P("\\[\n\\boxed{120}\n\\]", id="qwen-display-math"),
    # Llama 3.x
    P("The final answer is: $\\boxed{120}$", id="llama-final-answer-is"),
    P("Therefore, the final answer is $\\boxed{120}$. I hope it is correct.<|eot_id|>", id="llama-hope-correct"),
    P("The final answer is $\\boxed{120}$.\n\nLet me know if you'd like further explanation!", id="llama-offer"),
    # Mistral
    P("The answer is \\boxed{120}.\n\nI hope this helps! Let me know if you have any other questions.", id="mistral"),
    P("ANSWER: 120\n\nIf you have any more questions, feel free to ask!</s>", id="mistral-feel-free"),
    # DeepSeek-R1 and its distills
    P("<think>\n24 * 5 = 120\n</think>\n\n**Final Answer**\n\\[\n\\boxed{120}\n\\]", id="r1-final-answer-heading"),
    P("<think>\nSo it is \\boxed{120}.\n</think>\nThe answer is \\boxed{120}.", id="r1-box-in-and-after-think"),
    P("The total is \\boxed{120}.<\uff5cend\u2581of\u2581sentence\uff5c>", id="r1-end-of-sentence-token"),
    # GPT-4o / GPT-4
    P("She sold 48 + 72 = 120 clips.\n\n**Answer:** 120", id="gpt-bold-answer-line"),
    P("**Final Answer:** \\boxed{120}\n\n---\n\nHope this helps!", id="gpt-rule-and-hope"),
    P("ANSWER: 120\n\nWould you like me to explain any step in more detail?", id="gpt-offer-to-explain"),
    P(
        "\\boxed{120}\n\nIf you have any further questions or need clarification, feel free to ask!",
        id="qwen-feel-free",
    ),
    P("Natalia sold **120** clips altogether.\n\n\\boxed{120}", id="gpt-bold-then-box"),
    # Gemma
    P("**Final Answer:** The final answer is $\\boxed{120}$", id="gemma-final-answer-lead-in"),
    P("The answer is \\boxed{120}.\n\nIs there anything else I can help you with?", id="gemma-anything-else"),
    P("**Answer:** 120\n\nDo you have any other questions?", id="gemma-other-questions"),
    # Phi-3 / Phi-4
    P("Thus, the answer is $\\boxed{120}$.<|end|>", id="phi-end-token"),
    P("ANSWER: 120\n\nThis is the total number of clips Natalia sold.", id="phi-closing-sentence"),
    # restated in words, units, emoji, pleasantries
    P("\\boxed{120}\n\nSo the answer is 120 clips.", id="answer-restated-in-words"),
    P("\\boxed{120}\n\nHappy to help! 😊", id="pleasantry-emoji"),
    P("ANSWER: 120\n\nThanks for the question, and good luck with your studies!", id="thanks-good-luck"),
    P("\\boxed{120}\n\nDouble-check: 24 \\times 5 = 120.", id="check-equation-same-value"),
    P("## Answer\n\\boxed{120}", id="markdown-heading"),
    P("\\boxed{120}\n\n> The total number of clips.", id="quote-line"),
    P("ANSWER: 120\n\n48 + 72 = 120", id="check-after-the-answer"),
    P("\\boxed{120}\n\n1. She sold 48 clips in April.\n2. Then 72 in May.", id="numbered-recap"),
    P("The answer is \\boxed{120}. Let me explain further if needed.", id="offer-to-explain-if-needed"),
    P("\\boxed{120}\n\nI would be happy to explain any step in more detail if you would like.", id="offer-detail"),
    P("\\boxed{120}\n\n**Verification:** 48 + 72 = 120 ✓", id="verification-check-mark"),
]

# --- take-backs, doubts, corrections, another value, negations: refused ------------------------------------------
TAKE_BACKS = [
    P("ANSWER: 120\nWait, that's wrong. It should be 125.", Reason.HEDGED, id="retraction-wait"),
    P("\\boxed{120}\n\nActually, let me recheck: the answer is 125.", Reason.HEDGED, id="retraction-actually"),
    P("\\boxed{120}\n\nHmm, I'm not sure about this.", Reason.HEDGED, id="doubt-not-sure"),
    P("\\boxed{120} or maybe 125", Reason.HEDGED, id="alternative-or-maybe"),
    P("\\boxed{120}\n\nBut I might have made a mistake.", Reason.HEDGED, id="doubt-might-be-wrong"),
    P("ANSWER: 120\nCorrection: 125.", Reason.HEDGED, id="correction"),
    P("\\boxed{120}\n\nNo, wait. The answer is 125.", Reason.HEDGED, id="retraction-no-wait"),
    P("\\boxed{120}\n\nOn second thought, it could also be 125.", Reason.HEDGED, id="second-thought"),
    P("\\boxed{120}. Let me double-check... Oops, it's 125.", Reason.HEDGED, id="oops"),
    P("\\boxed{120} is incorrect; the answer is 125.", Reason.HEDGED, id="negation-after-box"),
    P("\\boxed{120}\n\nI hope this helps! Actually, it's 125.", Reason.HEDGED, id="pleasantry-around-retraction"),
    P("\\boxed{120}\n\nLet me know if you have any other questions. Or 125.", Reason.HEDGED, id="pleasantry-then-or"),
    P("\\boxed{120}\n\nThe answer is 125.", Reason.HEDGED, id="states-another-value"),
    P("\\boxed{120}\n\nSo it's 125.", Reason.HEDGED, id="states-another-value-its"),
    P("\\boxed{120}\n125", Reason.HEDGED, id="another-value-alone"),
    P("\\boxed{120}, i.e. $125$", Reason.HEDGED, id="another-value-ie"),
    P("\\boxed{120}\n= 125", Reason.HEDGED, id="another-value-equals"),
    P("\\boxed{120} (approximately)", Reason.HEDGED, id="approximately"),
    P("\\boxed{120}?", Reason.HEDGED, id="question-mark"),
    P("\\boxed{120}\n\nThis assumes she sold every day.", Reason.HEDGED, id="condition-assumes"),
    P("\\boxed{120}\n\nWould you like me to check whether it is 125?", Reason.HEDGED, id="offer-with-another-value"),
    P("\\boxed{120} and 125", Reason.HEDGED, id="another-value-listed"),
    P("\\boxed{120}. Both 120 and 125 work.", Reason.HEDGED, id="both-values"),
    P("\\boxed{120}\n\nAnswers: 120, 125", Reason.HEDGED, id="answers-listed"),
    P("The answer is not \\boxed{120}.", Reason.NO_ANSWER, id="negation-the-answer-is-not"),
    P("I don't think the answer is \\boxed{120}.", Reason.NO_ANSWER, id="negation-dont-think"),
    P("It cannot be $\\boxed{120}$.", Reason.NO_ANSWER, id="negation-cannot-be"),
    P("The answer is not \\boxed{120} but \\boxed{125}.", Reason.MISMATCH, id="negation-not-x-but-y"),
    # retractions, doubts and bounds in other words (a second review of the rule)
    P("\\boxed{120}\n\nI take it back.", Reason.HEDGED, id="take-it-back"),
    P("\\boxed{120}\n\nI retract that.", Reason.HEDGED, id="retract"),
    P("\\boxed{120}\n\nThat was a typo; I meant 125.", Reason.HEDGED, id="typo-meant"),
    P("\\boxed{120}\n\nUpdate: 125", Reason.HEDGED, id="update-label"),
    P("\\boxed{120}\n\nEdit: 125", Reason.HEDGED, id="edit-label"),
    P("\\boxed{120}\n\nErr, 125.", Reason.HEDGED, id="err"),
    P("\\boxed{120} (tentative)", Reason.HEDGED, id="tentative"),
    P("\\boxed{120}\n\nThis is my best estimate.", Reason.HEDGED, id="estimate"),
    P("\\boxed{120}\n\nThis seems right.", Reason.HEDGED, id="seems"),
    P("\\boxed{120}\n\nI think.", Reason.HEDGED, id="i-think"),
    P("\\boxed{120}\n\nPlease verify this.", Reason.HEDGED, id="please-verify"),
    P("\\boxed{120}\n\nYou should double-check my work.", Reason.HEDGED, id="you-should-double-check"),
    P("\\boxed{120}\n\nAt least 120.", Reason.HEDGED, id="at-least"),
    P("\\boxed{120}\n\nAround 120.", Reason.HEDGED, id="around"),
]


@pytest.mark.parametrize("completion", ORDINARY)
def test_ordinary_endings_are_paid(completion):
    verdict = grade(completion, REFERENCE)
    assert verdict.correct, verdict
    assert format_reward([completion]) == [1.0]


@pytest.mark.parametrize(("completion", "reason"), TAKE_BACKS)
def test_take_backs_and_negations_are_refused(completion, reason):
    verdict = grade(completion, REFERENCE)
    assert not verdict.correct and verdict.reason is reason, verdict


def test_table_counts():
    """The endings table: 37 ordinary endings of seven model families, 42 take-backs, other values and negations."""
    assert (len(ORDINARY), len(TAKE_BACKS)) == (37, 42)


# --- the same rule, row by row ------------------------------------------------------------------------------------
NEGATIONS = [
    # (completion, the answer read)
    P("not 125 but \\boxed{120}", "120", id="contrast-after-negation"),
    P("It is not 125, it is \\boxed{120}.", "120", id="comma-contrast"),
    P("Since x is not 0, the answer is \\boxed{120}.", "120", id="negation-of-something-else"),
    P("There is no doubt the answer is \\boxed{120}.", "120", id="no-doubt-is-no-negation"),
    P("The answer is not \\boxed{125}. It is \\boxed{120}.", "120", id="negated-then-stated"),
    P("x \\neq \\boxed{120}", None, id="neq-before-box"),
    P("\\boxed{120}. The answer is not \\boxed{120}.", None, id="stated-then-negated"),
    P("ANSWER: not 120", "not 120", id="negation-inside-the-line-is-read-whole"),
]


@pytest.mark.parametrize(("completion", "expected"), NEGATIONS)
def test_negations(completion, expected):
    assert extract_answer(completion) == expected


def test_a_value_restated_differently_is_graded_by_equivalence():
    """Another spelling of the same value after the answer is one more statement: ``grade`` pays it when each
    statement verifies equal to the reference, as for two answer lines; extraction alone calls it two answers."""
    completion = "\\boxed{\\frac{1}{2}}\n\nThat is $0.5$."
    assert extract_answer(completion) is None
    assert grade(completion, "1/2").correct
    assert not grade("\\boxed{\\frac{1}{2}}\n\nThat is $0.6$.", "1/2").correct


def test_a_long_tail_is_more_than_an_ending():
    assert extract_answer("ANSWER: 120\n" + "Natalia sold clips to her friends. " * 12) is None
    assert extract_answer("ANSWER: 120\n" + "Natalia sold clips to her friends. " * 6) == "120"


@pytest.mark.parametrize(
    "tail",
    ["\x00", "\x00 $5$ \x00\x00", "$$", "\\(", "$1$ $2$ $3$ " * 20, "<|im_end|>" * 50, "?" * 400, "= = =", "1. 2. 3."],
)
def test_odd_tails_give_a_verdict_never_an_error(tail):
    """Whatever follows the answer (NUL characters, unclosed delimiters, many segments), the ending rule decides."""
    verdict = grade("\\boxed{120}" + tail, REFERENCE)
    assert verdict.reason in (Reason.CORRECT, Reason.HEDGED)
