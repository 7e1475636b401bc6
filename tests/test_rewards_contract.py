"""TRL reward-function contract tests for every function in the name table."""

import asyncio
import logging
import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import rewards
from rewards import REWARD_FUNCS, correctness, format_reward, get_reward_funcs

COMPLETIONS = ["2 + 2 = 4\nANSWER: 4", "ANSWER: 5", "I think it is four", "\\boxed{4}", "ANSWER: 4\nANSWER: 5"]
ANSWERS = ["4"] * len(COMPLETIONS)
EXPECTED = {"correctness": [1.0, 0.0, 0.0, 1.0, 0.0], "format": [1.0, 1.0, 0.0, 1.0, 0.0]}
TRL_KWARGS = {
    "prompts": ["q"] * len(COMPLETIONS),
    "completion_ids": [[1, 2]] * len(COMPLETIONS),
    "trainer_state": object(),
    "log_extra": None,
    "log_metric": None,
    "question": ["q"] * len(COMPLETIONS),
    "id": list(range(len(COMPLETIONS))),
}


@pytest.fixture(params=sorted(REWARD_FUNCS))
def named(request):
    return request.param, REWARD_FUNCS[request.param]


def test_values_and_extra_kwargs_ignored(named):
    name, func = named
    assert func(completions=COMPLETIONS, answer=ANSWERS, **TRL_KWARGS) == EXPECTED[name]


def test_conversational_completions(named):
    name, func = named
    chat = [[{"role": "assistant", "content": c}] for c in COMPLETIONS]
    assert func(completions=chat, answer=ANSWERS) == EXPECTED[name]


def test_pickles_to_the_same_function(named):
    _, func = named
    assert pickle.loads(pickle.dumps(func)) is func


def test_runs_in_threads(named):
    name, func = named
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: func(completions=COMPLETIONS, answer=ANSWERS), range(8)))
    assert results == [EXPECTED[name]] * 8


def test_runs_in_an_asyncio_task(named):
    name, func = named

    async def main():
        return await asyncio.create_task(asyncio.to_thread(func, completions=COMPLETIONS, answer=ANSWERS)), func(
            completions=COMPLETIONS, answer=ANSWERS
        )

    assert asyncio.run(main()) == (EXPECTED[name], EXPECTED[name])


def test_unparseable_reference_is_none_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="rewards.math_rewards"):
        result = correctness(completions=["ANSWER: 1", "ANSWER: 1"], answer=["1", "\\frac{"])
    assert result == [1.0, None]
    assert "sample 1" in caplog.text and "\\frac{" in caplog.text


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 completions but 1 answers"):
        correctness(completions=["a", "b"], answer=["1"])


def test_registry_resolves_names_and_rejects_unknown():
    assert get_reward_funcs(["correctness", "format"]) == [correctness, format_reward]
    with pytest.raises(ValueError, match=r"valid names are \['correctness', 'format'\]"):
        get_reward_funcs(["correctness", "accuracy"])


def test_rewards_imports_light_and_fast():
    code = (
        "import sys, time; t = time.perf_counter(); import rewards; dt = time.perf_counter() - t\n"
        "heavy = [m for m in ('torch', 'transformers', 'inspect_ai', 'trl', 'sympy') if m in sys.modules]\n"
        "print(dt, heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert float(out[0]) < 1.0
    assert out[1].strip() == "[]"  # sympy loads only inside the worker process


def test_fingerprint_is_stable_and_versioned():
    ident = rewards.verifier_id()
    assert len(ident["verifier_fingerprint"]) == 16
    assert ident == rewards.verifier_id()
