"""A run on an Inspect task writes rollout logs that name the task's scorer, and ``inspect score`` with what they
name reproduces the training rewards exactly, completion by completion: the task's own scorer where it reads only
the completion, ``verigrpo/task_scorer`` (the chain replayed) for every task, ``multiple_choice`` + ``choice()``
included. The batch goes through the task's row (inspect_tasks/domain.py) as the trainer calls it: TRL's reward
contract, the ``log_extra`` columns read back, the rollout log writer (no model)."""

import shlex
from datetime import datetime, timedelta, timezone

import pytest
from inspect_ai import score as inspect_score
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.scorer import value_to_float
from inspect_ai.util import registry_create

from inspect_tasks.domain import run_record, task_domain
from inspect_tasks.training_task import prepare_task
from rewards.reward_log import whys_from_columns
from tests.helpers import REPO
from train.artifacts.rollout_log import build_log, rollouts_from_batch

TASKS = REPO / "tests" / "fixtures" / "inspect_tasks" / "tasks.py"
G = 4
BATCHES = {
    "marbles": {
        "jar-1-1": ["1 + 1 = 2\nANSWER: 2", "ANSWER: 3", "ANSWER: 2 or 3", "two"],
        "jar-2-3": ["ANSWER: 5", "ANSWER: 5\nDone.", "", "ANSWER: 5\nANSWER: 6"],
    },
    "capitals": {
        "fr": ["ANSWER: B", "ANSWER: A", "Paris", "ANSWER: A\nANSWER: B"],
        "no": ["ANSWER: C", "ANSWER: A, C", "C", "ANSWER: B"],
    },
}


def rollout_log(name: str, tmp_path):
    """One generation batch of task ``name`` scored by its row's reward functions and written as the trainer writes
    it; (log path, the prepared task, the run record)."""
    task = prepare_task(f"{TASKS}@{name}")
    domain, names, split = task_domain(task)
    ids = [i for i, texts in BATCHES[name].items() for _ in texts]
    texts = [t for group in BATCHES[name].values() for t in group]
    table = {}
    rewards = {
        run_name: reward([[{"role": "assistant", "content": t}] for t in texts], id=ids, log_extra=table.__setitem__)
        for run_name, reward in domain.rewards.items()
    }
    start = datetime(2026, 12, 5, tzinfo=timezone.utc)
    rollouts = rollouts_from_batch(
        ids=ids,
        answers=[domain.training_row(domain.load(task.spec)[list(task.samples).index(i)], 0)["answer"] for i in ids],
        prompts=[task.prompt_messages(i) for i in ids],
        completions=texts,
        rewards=rewards,
        advantages=[0.0] * len(ids),
        lengths=[5] * len(ids),
        max_completion_length=32,
        terminated=[True] * len(ids),
        num_generations=G,
        step=1,
        whys={n: whys_from_columns(n, table, len(ids)) for n in domain.rewards},
        started_at=start,
        completed_at=start + timedelta(seconds=3),
    )
    record = run_record(task, domain, names, split, 0.0, 0)
    metadata = {"policy_model": "policy", "inspect_task": {k: v for k, v in record.items() if "ids" not in k}}
    path = tmp_path / f"{name}.eval"
    write_eval_log(build_log(rollouts, G, metadata), str(path))
    return path, task, record


def rescored(path, scorer_args: str) -> dict:
    """``inspect score`` with a scorer named as the run record writes it (``--scorer X -S k=v``): the new score's
    value as a float per (sample id, epoch)."""
    argv = shlex.split(scorer_args)
    name, options = argv[1], {}
    for key, _, value in (argv[i + 1].partition("=") for i in range(2, len(argv), 2)):
        options[key] = value
    spec_file, _, scorer_name = name.rpartition("@")
    scorer = registry_create("scorer", scorer_name if spec_file else name, **options)
    log = inspect_score(read_eval_log(str(path)), scorer, action="append", display="none")
    new = [key for key in log.samples[0].scores if not key.startswith("train_")]
    assert len(new) == 1, new
    to_float = value_to_float()
    return {(s.id, s.epoch): to_float(s.scores[new[0]].value) for s in log.samples}


def trained(path, reward: str) -> dict:
    return {(s.id, s.epoch): s.scores[f"train_{reward}"].value for s in read_eval_log(str(path)).samples}


def test_the_log_names_the_tasks_scorer_and_it_reproduces_the_rewards(tmp_path):
    path, task, record = rollout_log("marbles", tmp_path)
    (scorer,) = read_eval_log(str(path)).eval.metadata["inspect_task"]["scorers"]
    assert scorer["inspect_score"] == f"--scorer {TASKS}@last_line_answer"
    paid = trained(path, "last_line_answer")
    assert sorted(paid.values()) == [0.0] * 6 + [1.0] * 2  # both outcomes
    assert rescored(path, scorer["inspect_score"]) == paid
    assert rescored(path, scorer["inspect_score_replayed"]) == paid


def test_multiple_choice_reproduces_through_the_replayed_chain(tmp_path):
    """choice() reads the letters multiple_choice() marked after generate(), which a log does not hold: the replaying
    scorer runs that solver again on the logged completion, so its value is the training reward's."""
    path, task, record = rollout_log("capitals", tmp_path)
    (scorer,) = record["scorers"]
    paid = trained(path, "choice")
    assert sorted(paid.values()) == [0.0] * 5 + [1.0] * 3
    assert rescored(path, scorer["inspect_score_replayed"]) == paid
    samples = read_eval_log(str(path)).samples
    assert samples[0].scores["train_choice"].answer == "B"  # why it was paid: the choice() score's own answer


@pytest.mark.parametrize("name", ["marbles", "capitals"])
def test_the_record_says_how_each_scorer_is_recreated(name, tmp_path):
    _, task, record = rollout_log(name, tmp_path)
    assert record["spec"] == f"{TASKS}@{name}" and record["file"] == str(TASKS)
    assert record["rewards"] == {task.reward_names[0]: task.reward_names[0]}
    assert record["train_ids"] == list(task.samples) and record["held_out_ids"] == []
