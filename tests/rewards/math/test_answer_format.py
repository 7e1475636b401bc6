"""The answer-format contract: extraction policy table, hedges, and the prompt builder."""

import time

import pytest

from rewards import (
    ANSWER_INSTRUCTION,
    Reason,
    build_messages,
    extract_answer,
    find_final_answer,
    format_reward,
    grade,
)

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")


P = pytest.param


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        # --- ANSWER: lines ---
        P("2 + 1 = 3\nANSWER: 3", "3", id="answer-line"),
        P("ANSWER:3", "3", id="answer-no-space"),
        P("answer: 3", "3", id="answer-lowercase"),
        P("Final Answer: 3", "3", id="final-answer"),
        P("**ANSWER:** 3", "3", id="markdown-bold"),
        P("ANSWER: $\\frac{1}{2}$", "\\frac{1}{2}", id="answer-dollars"),
        P("ANSWER: 3.", "3", id="answer-trailing-period"),
        P("ANSWER: 3\nANSWER: 3", "3", id="answer-restated"),
        P("ANSWER: \\boxed{7}", "7", id="answer-with-box"),
        P("   ANSWER: x = 3  ", "x = 3", id="answer-indented"),
        # --- boxes ---
        P("so \\boxed{5}", "5", id="boxed"),
        P("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}", id="boxed-nested-braces"),
        P("\\boxed{\\{1, 2\\}}", "\\{1, 2\\}", id="boxed-escaped-braces"),
        P("\\boxed{5} and again \\boxed{5}", "5", id="boxed-twice-same"),
        P("\\boxed{5}\nANSWER: 5", "5", id="box-and-line-agree"),
        P("\\fbox{5}", "5", id="fbox"),
        P("first \\boxed{4} then \\boxed{5", None, id="unclosed-box-after-answer-is-a-revision"),
        P("\\boxed{4} and then \\boxed{", None, id="unclosed-empty-box-after-answer"),
        P("so \\boxed{5}. I hope it is correct.", "5", id="closing-prose-after-box"),
        P("so the answer is $\\boxed{5}$.", "5", id="box-in-math-with-period"),
        P("ANSWER: 5\n\nThanks for reading!", "5", id="closing-prose-after-line"),
        # --- none ---
        P("The answer is 7", None, id="prose-no-fallback"),
        P("so we get 7.", None, id="last-number-no-fallback"),
        P("#### 7", None, id="gsm8k-style-not-accepted"),
        P("", None, id="empty"),
        P("ANSWER:", None, id="empty-answer"),
        P("\\boxed{", None, id="only-unclosed-box"),
        # --- hedges ---
        P("ANSWER: 3\nANSWER: 4", None, id="two-answer-lines"),
        P("\\boxed{3} or \\boxed{4}", None, id="two-boxes"),
        P("\\boxed{3}\nANSWER: 4", None, id="box-and-line-disagree"),
        P("ANSWER: 4\nANSWER: 4.0", None, id="restated-differently-is-grade's-job"),
        # --- text after the final answer that may revise it ---
        P("ANSWER: 4\nWait, that's wrong, it is 5.", None, id="retraction-with-number"),
        P("ANSWER: 4\nWait, that's wrong.", None, id="retraction-words-only"),
        P("ANSWER: 4\nActually the answer is 5", None, id="actually"),
        P("\\boxed{4}\nHmm, or maybe not.", None, id="hmm-or-maybe"),
        P("\\boxed{4} so x = 5", None, id="equation-after-box-states-another-value"),
        P("\\boxed{4} so x = 4", "4", id="equation-after-box-restates-the-answer"),
        P("ANSWER: 4\n" + "blah " * 100, None, id="long-tail"),
        # --- a box on an ANSWER line with other text ---
        P("ANSWER: \\boxed{4} (or maybe 5)", "\\boxed{4} (or maybe 5)", id="box-plus-words-kept-whole"),
        P("ANSWER: $\\boxed{4}$.", "4", id="box-with-dollars-and-period"),
        P("**ANSWER:** **\\boxed{4}**", "4", id="box-in-bold"),
    ],
)
def test_extraction_policy(completion, expected):
    assert extract_answer(completion) == expected


def test_hedge_and_no_answer_are_told_apart():
    assert find_final_answer("ANSWER: 3\nANSWER: 4").reason is Reason.HEDGED
    assert find_final_answer("nothing here").reason is Reason.NO_ANSWER
    assert find_final_answer("ANSWER: 3\nANSWER: 4").statements == ("3", "4")


THINKING = [
    P("<think>maybe \\boxed{3}</think>\nSo \\boxed{4}", "4", None, id="tentative-box-while-thinking"),
    P("<think>\\boxed{4}</think>\nThe answer is \\boxed{4}", "4", "4", id="same-box-inside-and-after"),
    P("<think>\nANSWER: 3\n</think>\nANSWER: 4", "4", None, id="answer-line-while-thinking"),
    P("<think>still thinking \\boxed{4}", None, "4", id="no-closing-tag-no-answer"),
    P("<think>a</think> b <think>\\boxed{3}</think>\n\\boxed{4}", "4", None, id="last-closing-tag-counts"),
    P("\\boxed{4}", None, "4", id="no-think-block-at-all"),
    P("<think>x</think>\nno answer here", None, None, id="nothing-after-thinking"),
]


@pytest.mark.parametrize(("completion", "after_close", "whole"), THINKING)
def test_think_setting(completion, after_close, whole):
    assert extract_answer(completion, think="after_last_close") == after_close
    assert extract_answer(completion, think="none") == whole


def test_think_setting_is_validated():
    with pytest.raises(ValueError, match="think"):
        extract_answer("ANSWER: 3", think="last")


def test_extraction_is_linear_on_a_megabyte():
    text = "word " * 200_000 + "\nANSWER: 12"
    assert extract_answer(text) == "12"
    assert extract_answer("\\boxed{" * 50_000) is None


def test_extraction_rejects_non_text():
    with pytest.raises(TypeError):
        extract_answer(None)


def test_prompt_contract():
    messages = build_messages("What is 2+2?", num_shots=1)
    assert messages[0] == {"role": "system", "content": ANSWER_INSTRUCTION}
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert extract_answer(messages[2]["content"]) is not None  # the worked example obeys the contract
    assert messages[-1]["content"] == "What is 2+2?"
    with pytest.raises(ValueError, match="num_shots"):
        build_messages("q", num_shots=99)


# Inputs that made the old ANSWER-line regex quadratic, and other shapes that stress the scanners.
ADVERSARIAL_FAMILIES = {
    "spaces-before-colon": lambda n: "answer" + " " * n + "x",
    "spaces-after-value": lambda n: "ANSWER: x" + " " * n + "y",
    "stars-and-spaces": lambda n: "answer" + " *_" * (n // 3) + "x",
    "many-answer-prefixes": lambda n: "answer answer " * (n // 14),
    "open-boxes": lambda n: "\\boxed{" * (n // 7),
    "nested-braces": lambda n: "\\boxed{" + "{" * n + "}" * n,
    "answer-lines": lambda n: "ANSWER: 1\n" * (n // 10),
    "think-tags": lambda n: "</think>" * (n // 8),
}


def _best_time(func, text, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func(text)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("family", sorted(ADVERSARIAL_FAMILIES))
def test_extraction_time_grows_linearly(family):
    """8x the input may cost at most 4x more than 8x the time (quadratic would be 64x).

    A ratio, not an absolute time: the machine is shared, but a ratio at two sizes measured
    back to back survives load; the smaller size is large enough to dwarf timer noise.
    """
    make = ADVERSARIAL_FAMILIES[family]
    for think in ("none", "after_last_close"):
        small = _best_time(lambda t, think=think: find_final_answer(t, think), make(8_000))
        large = _best_time(lambda t, think=think: find_final_answer(t, think), make(64_000))
        assert large / max(small, 1e-3) < 32, (family, think, small, large)


@pytest.mark.parametrize("family", sorted(ADVERSARIAL_FAMILIES))
def test_adversarial_extraction_costs_like_plain_text(family):
    """The issue's case (``answer`` + 64,000 spaces + ``x``) and its kin cost about what prose of the same length does,
    in ``grade`` and in ``format_reward`` (both call the extractor in the caller's thread, with no kill)."""
    text = ADVERSARIAL_FAMILIES[family](64_000)
    prose = "word " * (len(text) // 5) + "\nANSWER: 12"
    baseline = _best_time(lambda t: grade(t, "12"), prose)
    assert _best_time(lambda t: grade(t, "12"), text) < 20 * baseline + 0.01
    assert _best_time(lambda t: format_reward([t]), text) < 20 * baseline + 0.01
