"""One way, not two (#53 item 7): the bridge on the math domain's own eval task (evals/math_task.py@math_verified)
gives the native math row's prompts, training rows and rewards, completion by completion, through the same TRL
reward contract. The native row stays the built-in domain; the task is what it evaluates with; a task a run trains
on becomes a row of the same table (inspect_tasks/domain.py)."""

import pytest

from inspect_tasks.domain import task_domain
from inspect_tasks.training_task import prepare_task
from problems.math_data import load_problems
from problems.math_domain import MATH
from rewards import correctness, format_reward

pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")

PROBLEMS = 24


@pytest.fixture(scope="module")
def bridged():
    return prepare_task("evals/math_task.py@math_verified", {"split": "train", "limit": PROBLEMS})


@pytest.fixture(scope="module")
def problems():
    return load_problems("arithmetic", split="train", limit=PROBLEMS, seed=0)


def completions(answer: str) -> list[str]:
    """Right, wrong, hedged, boxed, restated, empty, trailing text, a think block: what a policy writes."""
    return [
        f"ANSWER: {answer}",
        f"Let me add.\nANSWER: {answer}",
        "ANSWER: 123456",
        f"ANSWER: {answer}\nANSWER: 9999",
        f"ANSWER: {answer} or 9999",
        rf"The result is \boxed{{{answer}}}.",
        f"ANSWER: {answer}.0",
        f"ANSWER: {answer}/1",
        "",
        f"{answer}",
        f"<think>maybe 7</think>\nANSWER: {answer}",
        f"ANSWER: {answer}\nI hope this helps!",
    ]


def test_the_bridge_gives_the_native_prompts_and_rows(bridged, problems):
    assert list(bridged.samples) == [p.id for p in problems]
    domain, _, _ = task_domain(bridged)
    for problem in problems:
        native = MATH.training_row(problem, 1)  # the CPU default's one worked example, the task's default too
        assert bridged.prompt_messages(problem.id) == native["prompt"]
        row = domain.training_row(domain.load(bridged.spec, split="train")[problems.index(problem)], 0)
        assert (row["prompt"], row["answer"], row["id"]) == (native["prompt"], native["answer"], native["id"])


def test_the_bridge_gives_the_native_rewards_through_the_trl_contract(bridged, problems):
    """The task's scorer (math_verifier: correct, format) as two bridged rewards, called as TRL calls a reward,
    equals the native correctness and format rewards on every completion."""
    domain, names, _ = task_domain(bridged)
    assert names == {"math_verifier.correct": "math_verifier.correct", "math_verifier.format": "math_verifier.format"}
    texts, ids, answers = [], [], []
    for problem in problems:
        for text in completions(problem.answer):
            texts.append(text)
            ids.append(problem.id)
            answers.append(problem.answer)
    conversational = [[{"role": "assistant", "content": t}] for t in texts]
    columns = {"id": ids, "answer": answers}
    correct = domain.rewards["math_verifier.correct"](completions=conversational, **columns)
    formatted = domain.rewards["math_verifier.format"](completions=conversational, **columns)
    assert correct == correctness(completions=conversational, answer=answers)
    assert formatted == format_reward(completions=conversational)
    assert 0 < sum(correct) < len(correct) and 0 < sum(formatted) < len(formatted)  # both outcomes, both rewards
