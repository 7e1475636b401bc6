"""The answer-format contract: extraction policy table, hedges, and the prompt builder."""

import pytest

from rewards import ANSWER_INSTRUCTION, Reason, build_messages, extract_answer, find_final_answer

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
        P("first \\boxed{4} then \\boxed{5", "4", id="unclosed-box-ignored"),
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
    ],
)
def test_extraction_policy(completion, expected):
    assert extract_answer(completion) == expected


def test_hedge_and_no_answer_are_told_apart():
    assert find_final_answer("ANSWER: 3\nANSWER: 4").reason is Reason.HEDGED
    assert find_final_answer("nothing here").reason is Reason.NO_ANSWER
    assert find_final_answer("ANSWER: 3\nANSWER: 4").statements == ("3", "4")


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
