"""inspect_evals' tasks train through the bridge on local samples (no Hub here): gsm8k's chain (few-shot system
message, its prompt template) and scorer (match(numeric=True)), ARC's multiple_choice() and choice(), each built from
the task's own module (tests/fixtures/inspect_tasks/inspect_evals_local.py). The rewards equal what a real
``inspect eval`` of the same task scores for the same completions; a registry name whose data is on the Hub is
refused naming the spec. The one-step training run is tests/integration/test_inspect_task_runs.py (slow)."""

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.scorer import value_to_float
from inspect_evals.gsm8k.gsm8k import MATH_PROMPT_TEMPLATE

from inspect_tasks.loading import TaskError
from inspect_tasks.training_task import prepare_task
from tests.helpers import REPO
from tests.helpers.mock_models import answering_model

FIXTURES = REPO / "tests" / "fixtures"
LOCAL = FIXTURES / "inspect_tasks" / "inspect_evals_local.py"


@pytest.fixture(scope="module")
def gsm8k():
    return prepare_task(f"{LOCAL}@gsm8k_local", {"path": str(FIXTURES / "gsm8k_sample.jsonl"), "fewshot": 1})


@pytest.fixture(scope="module")
def arc():
    return prepare_task(f"{LOCAL}@arc_local", {"path": str(FIXTURES / "inspect_tasks" / "arc_sample.jsonl")})


def test_gsm8k_prompts_come_from_its_own_template_and_few_shot(gsm8k):
    assert gsm8k.solvers == ["system_message", "prompt_template", "generate"]
    first = next(iter(gsm8k.samples))
    system, user = gsm8k.prompt_messages(first)
    assert system["role"] == "system" and "Natalia sold clips" in system["content"]  # the few-shot record
    assert user["content"] == MATH_PROMPT_TEMPLATE.format(prompt=gsm8k.sample(first).input)
    assert gsm8k.reward_names == ("match",)


def test_arc_is_a_multiple_choice_task(arc):
    assert arc.solvers == ["multiple_choice"] and arc.reward_names == ("choice",)
    (message,) = arc.prompt_messages("local-arc-3")
    assert "A) carbon dioxide" in message["content"]  # ARC's numeric labels become letters (its record_to_sample)
    assert arc.score("local-arc-3", "ANSWER: A").rewards == {"choice": 1.0}


@pytest.mark.parametrize("which", ["gsm8k", "arc"])
def test_the_rewards_are_what_inspect_eval_scores(request, which, tmp_path):
    task = request.getfixturevalue(which)
    ids = list(task.samples)
    if which == "gsm8k":
        candidates = ["ANSWER: {t}", "ANSWER: {t} or 1", "The answer is {t}", "ANSWER: 1,000,000", "{t}\nANSWER: 3"]
    else:
        candidates = ["ANSWER: {t}", "ANSWER: A", "ANSWER: D", "{t}", "ANSWER: A,B,C,D"]
    replies = {i: candidates[n % len(candidates)].format(t=task.target(i)) for n, i in enumerate(ids)}
    by_prompt = {task.prompt_messages(i)[-1]["content"]: reply for i, reply in replies.items()}
    (log,) = inspect_eval(task.task, model=answering_model(by_prompt), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (scorer,) = task.scorers
    evaluated = {str(s.id): value_to_float()(s.scores[scorer.name].value) for s in log.samples}
    bridged = dict(zip(ids, (s.rewards[scorer.name] for s in task.score_many(list(replies.items())))))
    assert bridged == evaluated
    assert 0 < sum(evaluated.values()) < len(evaluated)


def test_a_registry_task_whose_data_is_on_the_hub_is_refused_naming_it():
    with pytest.raises(TaskError, match=r"inspect_task 'inspect_evals/gsm8k' does not load"):
        prepare_task("inspect_evals/gsm8k", {"fewshot": 0})
