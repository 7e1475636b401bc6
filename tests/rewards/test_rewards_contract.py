"""TRL reward-function contract tests for every function in the name table (the domain rows' rewards)."""

import asyncio
import logging
import pickle
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import rewards
from problems.domains import reward_funcs, reward_owners
from rewards import correctness, format_reward

COMPLETIONS = ["2 + 2 = 4\nANSWER: 4", "ANSWER: 5", "I think it is four", "\\boxed{4}", "ANSWER: 4\nANSWER: 5"]
ANSWERS = ["4"] * len(COMPLETIONS)
CODE_TESTS = '{"asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"], "entry_point": "add"}'
CODE_COMPLETIONS = [
    "```python\ndef add(a, b):\n    return a + b\n```",
    "```python\ndef add(a, b):\n    return 3\n```",
    "def add(a, b): return a + b",  # not fenced: no answer
    "```python\nimport sys\nsys.exit(0)\n```",
    "```python\ndef add(a, b):\n    return a * b\n```",  # right only for (2, 2)
]
# name -> (completions, dataset columns, expected rewards)
CASES = {
    "correctness": (COMPLETIONS, {"answer": ANSWERS}, [1.0, 0.0, 0.0, 1.0, 0.0]),
    "format": (COMPLETIONS, {"answer": ANSWERS}, [1.0, 1.0, 0.0, 1.0, 0.0]),
    "code_tests": (CODE_COMPLETIONS, {"tests": [CODE_TESTS] * 5}, [1.0, 0.5, 0.0, 0.0, 0.5]),
}
ROW_REWARDS = {name: domain.rewards[name] for name, domain in reward_owners().items()}  # every name a config may give
TRL_KWARGS = {
    "prompts": ["q"] * len(COMPLETIONS),
    "completion_ids": [[1, 2]] * len(COMPLETIONS),
    "trainer_state": object(),
    "log_extra": None,
    "log_metric": None,
    "question": ["q"] * len(COMPLETIONS),
    "id": list(range(len(COMPLETIONS))),
}


def test_every_registered_reward_has_contract_cases():
    assert set(CASES) == set(ROW_REWARDS)


@pytest.fixture(params=sorted(ROW_REWARDS))
def named(request):
    if request.param == "code_tests":
        request.getfixturevalue("needs_sandbox")
    return request.param, ROW_REWARDS[request.param]


def test_values_and_extra_kwargs_ignored(named):
    name, func = named
    completions, columns, expected = CASES[name]
    assert func(completions=completions, **columns, **TRL_KWARGS) == expected


def test_conversational_completions(named):
    name, func = named
    completions, columns, expected = CASES[name]
    chat = [[{"role": "assistant", "content": c}] for c in completions]
    assert func(completions=chat, **columns) == expected


def test_pickles_to_the_same_function(named):
    _, func = named
    assert pickle.loads(pickle.dumps(func)) is func


def test_runs_in_threads(named):
    name, func = named
    completions, columns, expected = CASES[name]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: func(completions=completions, **columns), range(8)))
    assert results == [expected] * 8


def test_runs_in_an_asyncio_task(named):
    """From a worker thread and from inside a running event loop (the sync wrapper must not deadlock)."""
    name, func = named
    completions, columns, expected = CASES[name]

    async def main():
        in_thread = await asyncio.create_task(asyncio.to_thread(func, completions=completions, **columns))
        return in_thread, func(completions=completions, **columns)

    assert asyncio.run(main()) == (expected, expected)


def test_unusable_code_tests_are_none_with_a_warning(caplog, needs_sandbox):
    with caplog.at_level(logging.WARNING, logger="rewards.code.code_rewards"):
        result = rewards.code_tests(completions=CODE_COMPLETIONS[:2], tests=[CODE_TESTS, '{"asserts": []}'])
    assert result == [1.0, None]
    assert "sample 1" in caplog.text and "exactly one of" in caplog.text


def test_unparseable_reference_is_none_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="rewards.math.math_rewards"):
        result = correctness(completions=["ANSWER: 1", "ANSWER: 1"], answer=["1", "\\frac{"])
    assert result == [1.0, None]
    assert "sample 1" in caplog.text and "\\frac{" in caplog.text


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 completions but 1 answers"):
        correctness(completions=["a", "b"], answer=["1"])


def test_the_table_resolves_names_and_rejects_unknown():
    assert reward_funcs(["correctness", "format"], think="none") == [correctness, format_reward]
    with pytest.raises(ValueError, match=r"valid names are \['code_tests', 'correctness', 'format'\]"):
        reward_funcs(["correctness", "accuracy"], think="none")


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


def test_correctness_logs_the_share_of_each_reason_through_trl_hooks():
    """TRL 1.16 passes log_metric(name, value) and log_extra(column, values) to reward functions."""
    metrics, extras = {}, {}
    completions = ["ANSWER: 4", "ANSWER: 5", "no idea", "ANSWER: 3\nANSWER: 4", "ANSWER: 4", "ANSWER: 1"]
    answer = ["4", "4", "4", "4", "\\frac{", "1"]
    result = correctness(
        completions=completions,
        answer=answer,
        log_metric=metrics.__setitem__,
        log_extra=extras.__setitem__,
        trainer_state=None,
    )
    assert result == [1.0, 0.0, 0.0, 0.0, None, 1.0]
    # why each completion got its reward, per completion, for the rollout log (rewards.reward_log)
    assert extras["correctness/reason"] == [
        "correct",
        "mismatch",
        "no_answer",
        "hedged",
        "invalid_reference",
        "correct",
    ]
    assert extras["correctness/answer"] == ["4", "5", None, None, None, "1"]
    assert (
        extras["correctness/explanation"][1] == "got '5', want '4'"
        and "cannot be parsed" in extras["correctness/explanation"][4]
    )
    assert metrics["verdict/correct"] == pytest.approx(2 / 6)
    assert (
        metrics["verdict/mismatch"] == metrics["verdict/no_answer"] == metrics["verdict/hedged"] == pytest.approx(1 / 6)
    )
    assert metrics["verdict/too_complex"] == 0.0  # every reason is logged every step, so TRL's average is a share
    assert sum(metrics.values()) == pytest.approx(1.0)


def test_correctness_without_logging_hooks():
    assert correctness(completions=["ANSWER: 4"], answer=["4"], log_metric=None, log_extra=None) == [1.0]
    assert correctness(["ANSWER: 4"], ["4"]) == [1.0]


def test_trl_passes_the_logging_hooks_by_these_names():
    """Guards the kwarg names against a TRL upgrade."""
    import inspect as pyinspect

    from trl import GRPOTrainer

    source = pyinspect.getsource(GRPOTrainer._calculate_rewards)
    assert 'reward_kwargs["log_metric"]' in source and 'reward_kwargs["log_extra"]' in source
