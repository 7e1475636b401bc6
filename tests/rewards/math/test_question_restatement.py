r"""The question-restatement rule (issue #50): an answer copied from the question is not an answer.

``rewards.grade(..., question=...)`` refuses a final answer that restates one of the question's expressions holding
an operator or a function (reason ``restated_question``), decided on the verifier's own normalized tokens; symbolic
equivalence stays for every other answer. Both sides pass the question: the TRL reward from TRL's ``prompts``, the
Inspect scorer from ``state.input``, both read by ``rewards.common.question_text``.
"""

import asyncio

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample

import evals.verify
from evals.math_scoring import score_completion
from records.chat import chat_messages
from rewards import Reason, build_messages, correctness, grade, question_text
from rewards.math import restatement

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

P = pytest.param
RESTATED, CORRECT, MISMATCH = Reason.RESTATED_QUESTION, Reason.CORRECT, Reason.MISMATCH

EXPAND = "Expand $(x+2)(x-3)$."
FACTOR = "Factor x^2-x-6 completely."
DERIVATIVE = r"Find $\frac{d}{dx}(x^3 \sin x)$."
DERIVATIVE_WORDS = r"Find the derivative of $x^3 \sin x$."
AREA = r"A circle has radius 5, so its area is $\pi \cdot 5^2$. What is the area?"

TABLE = [
    # --- the examples, both ways ---
    P(EXPAND, "(x+2)(x-3)", "x^2 - x - 6", RESTATED, id="expand-copied"),
    P(EXPAND, "x^2 - x - 6", "x^2 - x - 6", CORRECT, id="expand-answered"),
    P(EXPAND, "x^2-x-6", "x^{2} - x - 6", CORRECT, id="expand-answered-other-spelling"),
    P(FACTOR, "x^2-x-6", "(x+2)(x-3)", RESTATED, id="factor-copied"),
    P(FACTOR, "(x+2)(x-3)", "(x+2)(x-3)", CORRECT, id="factor-answered"),
    P(FACTOR, "(x-3)(x+2)", "(x+2)(x-3)", CORRECT, id="factor-answered-other-order"),
    P(DERIVATIVE, r"\frac{d}{dx}(x^3 \sin x)", r"3x^2 \sin x + x^3 \cos x", RESTATED, id="derivative-copied"),
    P(DERIVATIVE, r"3x^2\sin x + x^3\cos x", r"3x^2 \sin x + x^3 \cos x", CORRECT, id="derivative-answered"),
    P(DERIVATIVE_WORDS, r"\frac{d}{dx}(x^3 \sin x)", r"3x^2 \sin x + x^3 \cos x", RESTATED, id="derivative-wrapped"),
    P(DERIVATIVE_WORDS, r"x^3\cos x + 3x^2\sin x", r"3x^2 \sin x + x^3 \cos x", CORRECT, id="derivative-reordered"),
    P(AREA, r"\pi \cdot 5^2", r"25\pi", RESTATED, id="area-copied"),
    P(AREA, r"25\pi", r"25\pi", CORRECT, id="area-answered"),
    P("What is 7 + 9?", "16", "16", CORRECT, id="sum-answered"),
    P("What is 7 + 9?", "7 + 9", "16", RESTATED, id="sum-copied"),
    P("Which is larger, 7 or 9?", "9", "9", CORRECT, id="choice-of-bare-numbers"),
    # --- the copy, respelled: the verifier's own reading decides ---
    P(EXPAND, r"\left(x+2\right)\left(x-3\right)", "x^2 - x - 6", RESTATED, id="left-right"),
    P(EXPAND, r"(x+2)\cdot(x-3)", "x^2 - x - 6", RESTATED, id="explicit-cdot"),
    P(EXPAND, "(x+2)*(x-3)", "x^2 - x - 6", RESTATED, id="explicit-star"),
    P(EXPAND, "(x - 3)(x + 2)", "x^2 - x - 6", RESTATED, id="factors-swapped"),
    P(EXPAND, "(2+x)(x-3)", "x^2 - x - 6", RESTATED, id="terms-swapped-inside"),
    P(EXPAND, "((x+2)(x-3))", "x^2 - x - 6", RESTATED, id="outer-parentheses"),
    P(EXPAND, r"\boxed{(x+2)(x-3)}", "x^2 - x - 6", RESTATED, id="boxed-inside-the-line"),
    P(EXPAND, "y = (x+2)(x-3)", "y = x^2 - x - 6", RESTATED, id="labelled"),
    P(EXPAND, "(x+2)(x-3) = x^2 - x - 6", "x^2 - x - 6", CORRECT, id="chain-ending-in-the-answer"),
    P(EXPAND, "x^2 - x - 6 = (x+2)(x-3)", "x^2 - x - 6", RESTATED, id="chain-ending-in-the-copy"),
    P(FACTOR, "-x + x^{2} - 6", "(x+2)(x-3)", RESTATED, id="terms-reordered-braced"),
    P(FACTOR, "x^2 - 6 - x", "(x+2)(x-3)", RESTATED, id="terms-reordered"),
    P(AREA, r"5^2\pi", r"25\pi", RESTATED, id="factors-reordered"),
    P(AREA, r"\pi \times 5^{2}", r"25\pi", RESTATED, id="times-and-braces"),
    P(r"Simplify $\dfrac{x^2-1}{x-1}$.", r"\frac{x^2-1}{x-1}", "x+1", RESTATED, id="dfrac-is-frac"),
    P(r"Simplify $\dfrac{x^2-1}{x-1}$.", "x + 1", "x+1", CORRECT, id="simplified"),
    P("Let $f(x) = (x+2)(x-3)$. Expand $f(x)$.", "(x+2)(x-3)", "x^2-x-6", RESTATED, id="one-side-of-a-definition"),
    # --- a second review: slash for \frac, a factor 1 or a term 0, a derivative without its brackets ---
    P(r"Simplify $\dfrac{x^2-1}{x-1}$.", "(x^2-1)/(x-1)", "x+1", RESTATED, id="slash-is-frac"),
    P("Simplify (2x+4)/2.", r"\frac{2x+4}{2}", "x+2", RESTATED, id="frac-is-slash"),
    P("Simplify (2x+4)/2.", "x+2", "x+2", CORRECT, id="slash-simplified"),
    P(EXPAND, r"1\cdot(x+2)(x-3)", "x^2 - x - 6", RESTATED, id="times-one"),
    P(EXPAND, "(x+2)(x-3) + 0", "x^2 - x - 6", RESTATED, id="plus-zero"),
    P(DERIVATIVE, r"\frac{d}{dx} x^3 \sin x", r"3x^2 \sin x + x^3 \cos x", RESTATED, id="derivative-unbracketed"),
    P(r"Evaluate $x^2/2$ at $x = 3$.", r"\frac{9}{2}", r"\frac{9}{2}", CORRECT, id="exponent-before-a-slash"),
    # --- what is not a restatement ---
    P(r"Simplify $\frac{(x+2)(x-3)}{x-3}$.", "x+2", "x+2", CORRECT, id="a-part-of-an-expression-may-be-the-answer"),
    P(r"Which is larger, $2^{10}$ or $10^3$?", "2^{10}", "2^{10}", CORRECT, id="question-states-the-answer"),
    P(r"Which is larger, $2^{10}$ or $10^3$?", "10^3", "2^{10}", RESTATED, id="the-other-option-copied"),
    P("Which is larger, $-3$ or $-5$?", "-3", "-3", CORRECT, id="signed-bare-number"),
    P("Solve $2x + 3 = 7$.", "x = 2", "2", CORRECT, id="solved"),
    P("Solve $2x + 3 = 7$.", "2x + 3", "2", RESTATED, id="one-side-of-the-equation"),
    P("What is $x$ if $x + 0 = x$?", "x", "x", CORRECT, id="bare-name"),
    P("Natalia sold 48 clips in April and half as many in May. How many in all?", "72", "72", CORRECT, id="gsm8k"),
    P(None, "(x+2)(x-3)", "x^2 - x - 6", CORRECT, id="no-question-no-rule"),
    P("", "(x+2)(x-3)", "x^2 - x - 6", CORRECT, id="empty-question"),
]


@pytest.mark.parametrize(("question", "candidate", "reference", "reason"), TABLE)
def test_question_restatement_table(question, candidate, reference, reason):
    verdict = grade(f"ANSWER: {candidate}", reference, question=question)
    assert verdict.reason is reason, verdict
    assert verdict.correct == (reason is CORRECT)


@pytest.mark.parametrize(
    ("question", "candidate", "reference"),
    [p.values[:3] for p in TABLE if p.values[3] is RESTATED and p.id != "the-other-option-copied"],
)
def test_every_refused_copy_is_otherwise_paid_or_a_computation(question, candidate, reference):
    """Each refusal above (but the wrong option) is the new rule's doing: without the question the verifier pays the
    copy (symbolic equivalence is kept) or refuses it as an unevaluated computation of a number (the round-5 rule)."""
    verdict = grade(f"ANSWER: {candidate}", reference)
    assert verdict.correct or "computation" in verdict.explanation, verdict


def test_several_statements_one_of_them_copied():
    completion = "ANSWER: (x+2)(x-3)\nANSWER: x^2 - x - 6"
    assert grade(completion, "x^2 - x - 6").correct  # two equal statements, as before
    assert grade(completion, "x^2 - x - 6", question=EXPAND).reason is RESTATED


def test_the_question_may_be_the_prompt_messages():
    messages = build_messages(EXPAND.replace("$", ""), num_shots=2)
    assert question_text(messages) == "Expand (x+2)(x-3)."
    assert grade("ANSWER: (x+2)(x-3)", "x^2-x-6", question=messages).reason is RESTATED


def test_only_the_problem_counts_not_the_worked_examples():
    """The worked examples' questions and the instruction precede the problem: their expressions are not its own
    (the examples compute ``2 + 1`` and ``4 * 6``; the problem asks something else)."""
    messages = build_messages("What is 3 \\times 8?", num_shots=3)
    assert question_text(messages) == "What is 3 \\times 8?"
    assert grade("ANSWER: 24", "24", question=messages).correct
    assert restatement.question_expressions(question_text(messages)) == restatement.question_expressions(
        "What is $3 \\times 8$?"
    )


QUESTIONS_OF_PROMPTS = [
    P("Expand (x+2)(x-3).", "Expand (x+2)(x-3).", id="plain-string"),
    P([{"role": "user", "content": "Q"}], "Q", id="one-user-message"),
    P(
        [{"role": "system", "content": "S"}, {"role": "user", "content": "A"}, {"role": "assistant", "content": "B"}]
        + [{"role": "user", "content": "Q"}],
        "Q",
        id="few-shot-chat",
    ),
    P([{"role": "user", "content": [{"type": "text", "text": "Q"}, {"type": "image"}]}], "Q", id="content-parts"),
    P([{"role": "system", "content": "S"}], None, id="no-user-message"),
    P([], None, id="empty"),
    P(None, None, id="none"),
]


@pytest.mark.parametrize(("prompt", "question"), QUESTIONS_OF_PROMPTS)
def test_question_text(prompt, question):
    assert question_text(prompt) == question


def test_question_text_reads_inspect_messages_as_training_reads_dicts():
    messages = build_messages("Expand (x+2)(x-3).", num_shots=1)
    assert question_text(chat_messages(messages)) == question_text(messages) == "Expand (x+2)(x-3)."


def test_the_training_reward_reads_the_question_from_trl_prompts():
    prompts = [build_messages(q, 1) for q in ("Expand (x+2)(x-3).", "Expand (x+2)(x-3).", "What is 7 + 9?")]
    completions = ["ANSWER: (x+2)(x-3)", "ANSWER: x^2-x-6", "ANSWER: 16"]
    extra: dict = {}
    rewards = correctness(
        prompts=prompts,
        completions=completions,
        answer=["x^2-x-6", "x^2-x-6", "16"],
        log_extra=lambda column, values: extra.__setitem__(column, values),
    )
    assert rewards == [0.0, 1.0, 1.0]
    assert extra["correctness/reason"] == ["restated_question", "correct", "correct"]
    assert correctness(completions=completions[:1], answer=["x^2-x-6"]) == [1.0]  # no prompts: no question


def test_the_scorer_and_the_reward_agree_on_copies():
    for candidate in ("(x+2)(x-3)", "x^2-x-6", "(x-3)(x+2)"):
        (reward,) = correctness(
            prompts=[build_messages(EXPAND, 1)], completions=[f"ANSWER: {candidate}"], answer=["x^2-x-6"]
        )
        score = asyncio.run(score_completion(f"ANSWER: {candidate}", "x^2-x-6", question=EXPAND))
        assert score.value["correct"] == ("C" if reward == 1.0 else "I")


def test_the_inspect_scorer_reads_the_question_from_state_input(tmp_path, mock_model):
    """A real eval: the sample's input is the chat prompt (instruction, a worked example, the problem); the scorer
    reads the problem from ``state.input`` with the same function the reward applies to TRL's prompt."""
    samples = [
        Sample(input=chat_messages(build_messages(EXPAND, 1)), target="x^2-x-6", id="copy"),
        Sample(input=chat_messages(build_messages(EXPAND.replace("$", ""), 1)), target="x^2-x-6", id="answer"),
        Sample(input="Which is larger, 7 or 9?", target="9", id="choice"),
    ]
    replies = {EXPAND: "ANSWER: (x-3)(x+2)", EXPAND.replace("$", ""): "ANSWER: x^2 - x - 6"}
    replies["Which is larger, 7 or 9?"] = "\\boxed{9}"
    task = Task(dataset=MemoryDataset(samples), scorer=evals.verify.math_verifier())
    (log,) = inspect_eval(task, model=mock_model(replies), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    scores = {s.id: s.scores["math_verifier"] for s in log.samples}
    assert scores["copy"].value["correct"] == "I" and scores["copy"].metadata["reason"] == "restated_question"
    assert scores["answer"].value["correct"] == "C"
    assert scores["choice"].value["correct"] == "C"


def test_the_rule_is_bounded():
    """A question of a megabyte is read to ``MAX_QUESTION_CHARS`` once (cached), whatever it holds."""
    huge = "Expand $(x+2)(x-3)$. " + "$(" * 50_000 + "x" + ")$" * 50_000
    assert grade("ANSWER: (x+2)(x-3)", "x^2-x-6", question=huge).reason is RESTATED
    many = " ".join(f"$x^{{{i}}} + {i}$" for i in range(2_000))
    assert grade("ANSWER: x^2-x-6", "x^2-x-6", question=many).correct
    assert len(restatement.question_expressions(many)) <= restatement.MAX_EXPRESSIONS
