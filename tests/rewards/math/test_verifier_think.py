"""The ``think`` extraction setting for reasoning models: one frozen value shared by reward, scorer and fingerprint."""

import asyncio
import pickle

import pytest

import rewards
from evals.math_scoring import score_completion
from evals.math_task import math_verified
from rewards import format_reward, grade
from rewards.math.answer_format import THINK_MODES
from rewards.math.math_rewards import bind_think, correctness

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")


P = pytest.param

# (completion, reference, correct with "after_last_close", correct with "none")
CASES = [
    P("<think>maybe \\boxed{3}</think>\nSo \\boxed{4}", "4", True, False, id="tentative-box-is-a-hedge-without-think"),
    P("<think>it is \\boxed{4}", "4", False, True, id="unfinished-thinking-has-no-answer"),
    P("<think>3? 4?</think>\nANSWER: 4", "4", True, True, id="clean-answer-after-thinking"),
    P("<think>x</think>\n\\boxed{3}", "4", False, False, id="wrong-answer-after-thinking"),
    P("<think>\\boxed{4}</think><think>no</think>\nANSWER: 5", "4", False, False, id="last-close-tag-counts"),
]


@pytest.mark.parametrize(("completion", "reference", "after_close", "whole"), CASES)
def test_reward_and_scorer_read_the_same_answer(completion, reference, after_close, whole):
    for think, expected in (("after_last_close", after_close), ("none", whole)):
        assert grade(completion, reference, think=think).correct is expected
        assert correctness([completion], [reference], think=think) == [float(expected)]
        assert bind_think(correctness, think)([completion], answer=[reference]) == [float(expected)]
        score = asyncio.run(score_completion(completion, reference, think))
        assert score.value["correct"] == ("C" if expected else "I")
        assert score.metadata["answer_extraction_think"] == think


def test_no_closing_tag_is_no_answer():
    verdict = grade("<think>\\boxed{4}", "4", think="after_last_close")
    assert verdict.reason is rewards.Reason.NO_ANSWER and "</think>" in verdict.explanation
    assert bind_think(format_reward, "after_last_close")(["<think>\\boxed{4}", "<think></think>\\boxed{4}"]) == [
        0.0,
        1.0,
    ]


def test_bound_rewards_pickle_keep_their_name_and_refuse_unknown_settings():
    bound = bind_think(correctness, "after_last_close")
    assert bound.__name__ == "correctness"
    again = pickle.loads(pickle.dumps(bound))
    assert again.think == "after_last_close" and again(["</think>ANSWER: 2"], answer=["2"]) == [1.0]
    assert bind_think(correctness, "none") is correctness
    with pytest.raises(ValueError, match="think"):
        bind_think(correctness, "last")
    with pytest.raises(ValueError, match="think"):
        grade("ANSWER: 1", "1", think="after_first_close")


def test_the_setting_is_part_of_the_fingerprint():
    prints = {think: rewards.verifier_fingerprint(think) for think in THINK_MODES}
    assert len(set(prints.values())) == len(THINK_MODES)
    assert prints["none"] == rewards.verifier_fingerprint()  # the default is unchanged
    assert rewards.verifier_id("after_last_close")["answer_extraction_think"] == "after_last_close"


def test_inspect_task_parameter():
    task = math_verified(limit=2, think="after_last_close")
    assert task.metadata["verifier"] == rewards.verifier_id("after_last_close")
    with pytest.raises(ValueError, match="think"):
        math_verified(limit=2, think="sometimes")
