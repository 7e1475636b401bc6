r"""Named answer formats (issue #50): Minerva's ``Final Answer: The final answer is $X$. I hope it is correct.`` and
GSM8K's ``#### X``, each taught by its own prompt and read by its own extractor, with the same hedge, ending and
negation rules; the default (``answer_line``) unchanged."""

import pytest

from rewards import (
    ANSWER_FORMATS,
    DEFAULT_ANSWER_FORMAT,
    Reason,
    bind_think,
    build_messages,
    correctness,
    extract_answer,
    find_final_answer,
    format_reward,
    grade,
    verifier_fingerprint,
    verifier_id,
    worked_examples,
)

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

P = pytest.param
MINERVA = "Final Answer: The final answer is $120$. I hope it is correct."

WHOLE = "The final answer is $120$. I hope it is correct"  # the default reads a "Final Answer:" line whole

FORMATS = [
    # (completion, answer_line, minerva, gsm8k): the answer each format reads
    P(MINERVA, WHOLE, "120", None, id="minerva-line"),
    P("#### 120", None, None, "120", id="gsm8k-line"),
    P("ANSWER: 120", "120", None, None, id="answer-line"),
    P("\\boxed{120}", "120", "120", "120", id="a-box-in-every-format"),
    P("24 * 5 = 120\n#### 120\n", None, None, "120", id="gsm8k-after-reasoning"),
    P("#### 1,200", None, None, "1,200", id="gsm8k-thousands"),
    P(
        "Final Answer: The final answer is $\\frac{1}{2}$.",
        "The final answer is $\\frac{1}{2}$",
        "\\frac{1}{2}",
        None,
        id="frac",
    ),
    P("Final Answer: The final answer is 3.5. I hope", "The final answer is 3.5. I hope", "3.5", None, id="no-dollars"),
    P("Final Answer: The final answer is $\\boxed{7}$.", "7", "7", "7", id="minerva-with-box"),
    P("Final Answer: 12", "12", "12", None, id="final-answer-short"),
    P("#### 120\n#### 125", None, None, None, id="gsm8k-hedge"),
    P("#### 120\nWait, it is 125.", None, None, None, id="gsm8k-take-back"),
    P(MINERVA + "\nActually, it might be 125.", None, None, None, id="minerva-take-back"),
    P(MINERVA + "\n#### 125", None, None, "125", id="two-formats-another-value"),
    P("The answer is not \\boxed{120}.\n#### 120", None, None, "120", id="gsm8k-beside-a-negated-box"),
    P("#### 120\n\nLet me know if you have any other questions!", None, None, "120", id="gsm8k-pleasantry"),
]


@pytest.mark.parametrize(("completion", "answer_line", "minerva", "gsm8k"), FORMATS)
def test_each_format_reads_its_own_line(completion, answer_line, minerva, gsm8k):
    read = {fmt: extract_answer(completion, answer_format=fmt) for fmt in ANSWER_FORMATS}
    assert read == {"answer_line": answer_line, "minerva": minerva, "gsm8k": gsm8k}


def test_the_default_is_unchanged():
    """The issue's two formats stay refused by default: a prompt that never asked for them does not read them."""
    assert DEFAULT_ANSWER_FORMAT == "answer_line"
    assert not grade(MINERVA, "120").correct and not grade("#### 120", "120").correct
    assert grade(MINERVA, "120", answer_format="minerva").correct
    assert grade("#### 120", "120", answer_format="gsm8k").correct
    assert grade("ANSWER: 120", "120").correct
    assert grade("#### 125", "120", answer_format="gsm8k").reason is Reason.MISMATCH


@pytest.mark.parametrize("answer_format", list(ANSWER_FORMATS))
def test_the_prompt_teaches_the_format_the_extractor_reads(answer_format):
    """The instruction and every worked example end in the format's line, which its extractor reads back (and the
    others' extractors do not, but for the default's ``Final Answer:`` spelling, which is an answer line)."""
    messages = build_messages("What is 2+2?", num_shots=3, answer_format=answer_format)
    assert messages[0]["content"] == ANSWER_FORMATS[answer_format].instruction
    replies = [m["content"] for m in messages if m["role"] == "assistant"]
    assert len(replies) == 3
    for (_question, reply), expected in zip(worked_examples(answer_format), ("3", "19", "4.5")):
        assert reply in replies
        assert extract_answer(reply, answer_format=answer_format) == expected
    assert messages[-1] == {"role": "user", "content": "What is 2+2?"}


def test_the_default_prompt_is_byte_for_byte_the_old_one():
    assert build_messages("q", 1) == build_messages("q", 1, answer_format="answer_line")
    assert worked_examples()[1] == (
        "A box holds 4 rows of 6 eggs. 5 eggs break. How many eggs are left?",
        "The box holds 4 * 6 = 24 eggs. After 5 break, 24 - 5 = 19 remain.\nANSWER: 19",
    )


def test_unknown_format_and_tools_are_refused():
    with pytest.raises(ValueError, match="answer_format must be one of"):
        extract_answer("#### 1", answer_format="lm-eval")
    with pytest.raises(ValueError, match="answer_format must be one of"):
        correctness(completions=["#### 1"], answer=["1"], answer_format="lm-eval")
    with pytest.raises(ValueError, match="python tool"):
        build_messages("q", 1, tools=True, answer_format="gsm8k")


def test_rewards_take_the_format_frozen_in():
    gsm8k = bind_think(correctness, "none", "gsm8k")
    assert gsm8k(completions=["#### 4", "ANSWER: 4"], answer=["4", "4"]) == [1.0, 0.0]
    assert bind_think(format_reward, "none", "minerva")([MINERVA, "#### 120"]) == [1.0, 0.0]
    assert bind_think(correctness, "none") is correctness
    assert repr(gsm8k) == "bind_think(correctness, 'none', answer_format='gsm8k')"
    think = bind_think(correctness, "after_last_close", "gsm8k")
    assert think(completions=["<think>#### 3</think>\n#### 4"], answer=["4"]) == [1.0]


def test_the_format_is_part_of_the_verifier_fingerprint():
    prints = {fmt: verifier_fingerprint(answer_format=fmt) for fmt in ANSWER_FORMATS}
    assert len(set(prints.values())) == 3
    assert prints["answer_line"] == verifier_fingerprint()
    assert verifier_id("none", "gsm8k")["answer_format"] == "gsm8k"
    assert verifier_fingerprint("after_last_close") != verifier_fingerprint("after_last_close", "minerva")


def test_no_answer_names_the_format():
    assert find_final_answer("It is 4.", answer_format="gsm8k").detail == "no #### line or \\boxed{}"
    assert find_final_answer("It is 4.").detail == "no ANSWER: line or \\boxed{}"
