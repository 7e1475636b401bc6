"""A domain's ``grade`` may be ``async def`` (the way to reuse an async scorer), or a plain function that runs an event
loop of its own (``asyncio.run``): both pay the same in training's reward and in ``inspect eval`` (#52). Before, an
async ``grade`` was a coroutine where a number was due, and a plain one calling ``asyncio.run`` worked in training but
crashed the eval ("asyncio.run() cannot be called from a running event loop"). The toy domain is
tests/integration/test_new_domain.py's "even or odd", judged by an async check; its reward is called as TRL calls it
(and from inside a running loop, as a caller with one would), and the eval runs through the registry names with
Inspect's mockllm model."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace

import pytest
from inspect_ai import eval as inspect_eval

from problems.domains import DOMAINS
from tests.helpers import REPO
from tests.integration.test_new_domain import PARITY, load_parity


async def last_word_is(completion: str, target: str) -> float:
    """An async check, as an Inspect scorer is: it yields to the loop before it answers."""
    await asyncio.sleep(0)
    words = re.findall(r"[a-z]+", completion.lower())
    return float(bool(words) and words[-1] == target)


async def grade_async(completion: str, target: str) -> float:
    return await last_word_is(completion, target)


def grade_with_its_own_loop(completion: str, target: str) -> float:
    return asyncio.run(last_word_is(completion, target))


DOMAINS_BY_GRADE = {  # the toy domain's row with another name and grade (its reward, scorer and task derived again)
    "async def": replace(PARITY, name="parity_async", grade=grade_async, rewards={}, metrics=()),
    "asyncio.run": replace(PARITY, name="parity_run", grade=grade_with_its_own_loop, rewards={}, metrics=()),
}
COMPLETIONS = ["It is even", "odd", [{"role": "assistant", "content": "even."}]]


@pytest.mark.parametrize("kind", DOMAINS_BY_GRADE)
def test_the_training_reward_pays_what_grade_says(kind):
    domain = DOMAINS_BY_GRADE[kind]
    (reward,) = domain.rewards.values()
    assert reward(COMPLETIONS, answer=["even"] * 3) == [1.0, 0.0, 1.0]  # as TRL calls it: no event loop running


def test_an_async_grade_pays_from_inside_a_running_loop_too():
    (reward,) = DOMAINS_BY_GRADE["async def"].rewards.values()

    async def from_a_running_loop():
        return reward(COMPLETIONS, answer=["odd"] * 3)

    assert asyncio.run(from_a_running_loop()) == [0.0, 1.0, 0.0]


def test_a_plain_grade_stays_a_plain_call():
    from problems.domains import grade_all

    assert grade_all(lambda text, target: text == target, [("a", "a"), ("b", "a")]) == [1.0, 0.0]


@pytest.mark.parametrize("kind", DOMAINS_BY_GRADE)
def test_inspect_eval_scores_it_with_the_same_grade(kind, tmp_path, mock_model, monkeypatch):
    domain = DOMAINS_BY_GRADE[kind]
    monkeypatch.setitem(DOMAINS, domain.name, domain)
    monkeypatch.chdir(REPO)
    replies = {
        p.question: ("It is " + p.answer) if i % 2 == 0 else "no idea"
        for i, p in enumerate(load_parity("", split="test"))
    }
    (log,) = inspect_eval(
        domain.eval_task,
        task_args={"domain": domain.name, "limit": 4},
        model=mock_model(replies),
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert {s.id: s.scores["domain_scorer"].value for s in log.samples} == {
        "parity-100": 1.0,
        "parity-101": 0.0,
        "parity-102": 1.0,
        "parity-103": 0.0,
    }
