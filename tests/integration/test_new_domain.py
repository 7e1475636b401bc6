"""A new answer domain is one module plus one row (docs/adding-a-domain.md): this module is the whole domain, a toy
"even or odd" one, and the fixture's one row in ``problems.domains.DOMAINS`` is its registration. From the row's
``grade`` alone it trains one GRPO step on CPU through train/grpo.py's real path (reward ``parity_grade``, logged and
recorded in the rollout log) and is evaluated by ``inspect eval`` through the registry names
(``evals/domain_task.py@domain_verified``, scored by ``verigrpo/domain_scorer``): no other file names it."""

import re
from dataclasses import dataclass

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from problems.domains import DOMAINS, Domain
from tests.helpers import CPU_CONFIG, REPO
from train.config import parse_config
from train.grpo import main

# --- the domain: one module ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParityProblem:
    id: str
    question: str
    answer: str  # "even" or "odd"


def load_parity(source, *, split="train", limit=None, **_ignored) -> list[ParityProblem]:
    start = 0 if split == "train" else 100  # the test split is other numbers
    problems = [
        ParityProblem(f"parity-{n}", f"Is {n} even or odd? Answer with one word.", ("even", "odd")[n % 2])
        for n in range(start, start + 8)
    ]
    return problems[:limit]


def parity_row(problem: ParityProblem, num_shots: int) -> dict:
    return {"prompt": [{"role": "user", "content": problem.question}], "answer": problem.answer, "id": problem.id}


def grade_parity(completion: str, target: str) -> float:
    """1.0 when the last word is the target: the reward and the eval metric."""
    words = re.findall(r"[a-z]+", completion.lower())
    return float(bool(words) and words[-1] == target)


PARITY = Domain(
    name="parity",
    sources=("parity_toy",),
    problem_type=ParityProblem,
    load=load_parity,
    training_row=parity_row,
    grade=grade_parity,
)


@pytest.fixture
def parity_domain(monkeypatch):
    """The one row: in a real domain, ``PARITY`` in problems/domains.py's ``DOMAINS`` table."""
    monkeypatch.setitem(DOMAINS, PARITY.name, PARITY)


# --- what the row gives it ----------------------------------------------------------------------------------------


def test_the_row_derives_its_reward_scorer_and_task():
    assert PARITY.reward_names == {"parity_grade"}
    assert (PARITY.scorer, PARITY.eval_task) == ("verigrpo/domain_scorer", "evals/domain_task.py@domain_verified")
    (reward,) = PARITY.rewards.values()
    assert reward.__name__ == "parity_grade"
    assert reward(["It is even", "odd", [{"role": "assistant", "content": "even."}]], answer=["even"] * 3) == [
        1.0,
        0.0,
        1.0,
    ]


def test_it_trains_one_step_on_cpu(parity_domain, tmp_path, cpu_model):
    script_args, training_args, model_args = parse_config(
        ["--config", CPU_CONFIG, "--output_dir", str(tmp_path / "run"), "--dataset", "parity_toy", "--num_shots", "0"]
        + ["--reward_funcs", "parity_grade", "--reward_weights", "1.0", "--max_steps", "1", "--save_steps", "1"]
        + ["--per_device_train_batch_size", "2", "--num_generations", "2", "--max_completion_length", "8"]
        + ["--dataset_size", "2", "--temperature", "1.0"]
    )
    result = main(script_args, training_args, model_args)
    (step,) = [e for e in result["log_history"] if "grad_norm" in e]
    assert 0.0 <= step["rewards/parity_grade/mean"] <= 1.0
    (rollouts,) = result["rollout_logs"]
    log = read_eval_log(rollouts)
    assert [(s.target, s.epoch) for s in log.samples] == [("even", 1), ("even", 2)]  # problem parity-0, G=2
    for sample in log.samples:  # what training paid is the row's grade of what the model wrote
        assert sample.scores["train_parity_grade"].value == grade_parity(sample.output.completion, "even")


def test_inspect_eval_scores_it_through_the_registry_names(parity_domain, tmp_path, mock_model, monkeypatch):
    monkeypatch.chdir(REPO)
    replies = {
        p.question: ("It is " + p.answer) if i % 2 == 0 else "no idea"
        for i, p in enumerate(load_parity("", split="test"))
    }
    (log,) = inspect_eval(
        PARITY.eval_task,
        task_args={"domain": "parity", "limit": 4},
        model=mock_model(replies),
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert [s.name for s in log.eval.scorers] == ["domain_scorer"]  # Inspect records a scorer's unqualified name
    assert {s.id: s.scores["domain_scorer"].value for s in log.samples} == {
        "parity-100": 1.0,
        "parity-101": 0.0,
        "parity-102": 1.0,
        "parity-103": 0.0,
    }
    assert log.results.scores[0].metrics["mean"].value == 0.5
