"""train/config/resolved.py: the run is resolved once. ``resolve_run`` checks the config and decides the dataset's
domain, the reward functions, the rollout engine and whether held-out evals run; the stages before the model loads
(the data, the exploit pre-flight) read those decisions instead of deriving them again from the config."""

import pytest

import train.grpo
import train.run
from problems.domains import MATH
from tests.helpers import CPU_CONFIG
from tests.helpers.training import count_domain_lookups
from train.config import ConfigError, RunPlan, parse_config, resolve_run
from train.engines.choice import Engine


class PastTheDataStages(Exception):
    """Raised where the run builds its rollout engine: after the data, the pre-flight and the held-out eval."""


@pytest.mark.parametrize(
    "overrides, domain, engine, rewards, held_out",
    [
        ([], MATH, Engine.NONE, ("correctness", "format"), False),
        (["--reward_funcs", "correctness", "--reward_weights", "1.0"], MATH, Engine.NONE, ("correctness",), False),
        (["--eval_strategy", "steps", "--eval_steps", "5"], MATH, Engine.NONE, ("correctness", "format"), True),
        (["--dataset", "jsonl", "--dataset_path", "{jsonl}"], MATH, Engine.NONE, ("correctness", "format"), False),
    ],
)
def test_the_plan_holds_what_the_config_decides(tmp_path, overrides, domain, engine, rewards, held_out):
    jsonl = tmp_path / "mine.jsonl"
    jsonl.write_text('{"id": "a", "question": "1 + 1?", "answer": "2"}\n')
    plan = resolve_run(*parse_config(["--config", CPU_CONFIG, *(o.format(jsonl=jsonl) for o in overrides)]))
    assert isinstance(plan, RunPlan)
    assert (plan.domain, plan.engine, plan.reward_names, plan.held_out) == (domain, engine, rewards, held_out)
    right, wrong = ([[{"role": "assistant", "content": f"ANSWER: {n}"}]] for n in (2, 3))
    paid = {name: (f(right, answer=["2"]), f(wrong, answer=["2"])) for name, f in zip(rewards, plan.reward_funcs)}
    expected = {"correctness": ([1.0], [0.0]), "format": ([1.0], [1.0])}  # format pays any one stated answer
    assert paid == {name: expected[name] for name in rewards}
    assert plan.scorer == MATH.scorer.split("/")[-1] and plan.main_process and not plan.tools


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["--dataset", "nonesuch"], r"dataset: 'nonesuch' is not one of"),
        (["--reward_funcs", "code_tests", "--reward_weights", "1.0"], r"reward_funcs \['code_tests'\] cannot score"),
        (["--reward_funcs", "nonesuch", "--reward_weights", "1.0"], r"unknown reward function\(s\) \['nonesuch'\]"),
    ],
)
def test_a_config_that_fails_a_check_gets_no_plan(overrides, message):
    with pytest.raises(ConfigError, match=message):
        resolve_run(*parse_config(["--config", CPU_CONFIG, *overrides]))


def test_the_stages_before_the_model_resolve_the_domain_once(monkeypatch):
    """Validation, the training data and the exploit pre-flight ask for the dataset's domain once in all (three
    times before the run was resolved once: check_data, load_training_problems and judged_rewards each did)."""
    asked = count_domain_lookups(monkeypatch)

    def past(*args, **kwargs):
        raise PastTheDataStages

    monkeypatch.setattr(train.run, "engine_factory", past)
    with pytest.raises(PastTheDataStages):
        train.grpo.build_trainer(*parse_config(["--config", CPU_CONFIG, "--dataset_size", "64"]))
    assert asked == ["arithmetic"]
