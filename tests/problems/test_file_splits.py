"""A file of one's own has no held-out split: it is read whole (``all``; ``train``, what training asks for), ``test``
is refused rather than answered with problems training may have used, and the eval's log header says a file's
problems are not held out (issue: ``-T dataset=jsonl -T path=data.jsonl`` silently ignored ``split=test`` and scored
the training problems as if held out)."""

from __future__ import annotations

import json

import pytest

from problems.math_data import DatasetError, default_split, load_problems
from tests.helpers import REPO

FIXTURES = REPO / "tests" / "fixtures"

PROBLEMS = [{"id": f"p{n}", "question": f"What is {n} + 1?", "answer": str(n + 1)} for n in range(10)]


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PROBLEMS))
    return path


SPLITS = [
    # (source, split, problems read, or the refusal)
    ("jsonl", None, 10, None),
    ("jsonl", "all", 10, None),
    ("jsonl", "train", 10, None),
    ("jsonl", "test", None, r"dataset 'jsonl' \(.*data.jsonl\) has no 'test' split: a file is one set of problems"),
    ("jsonl", "validation", None, r"has no 'validation' split"),
    ("json", "test", None, r"dataset 'json' .* has no 'test' split"),
]


@pytest.mark.parametrize(("source", "split", "count", "refusal"), SPLITS)
def test_a_file_is_read_whole_or_refused(tmp_path, data, source, split, count, refusal):
    path = data
    if source == "json":
        path = tmp_path / "data.json"
        path.write_text(json.dumps(PROBLEMS))
    if refusal:
        with pytest.raises(DatasetError, match=refusal):
            load_problems(source, path=path, split=split)
    else:
        assert [p.id for p in load_problems(source, path=path, split=split)] == [p["id"] for p in PROBLEMS][:count]


@pytest.mark.parametrize(
    ("source", "split"), [("arithmetic", "test"), ("gsm8k", "test"), ("math500", "test"), ("jsonl", "all")]
)
def test_the_default_split_is_the_sources_held_out_one(source, split):
    assert default_split(source) == split


HEADERS = [
    # (task arguments, split in the log header, held out)
    ({"dataset": "jsonl"}, "all", False),
    ({"dataset": "jsonl", "split": "all"}, "all", False),
    ({"dataset": "arithmetic", "limit": 3}, "test", True),
    # a file given to a Hub source is the user's file too: never known to be held out (it said True, split test)
    ({"dataset": "gsm8k"}, "all", False),
    ({"dataset": "math500"}, "all", False),
]


@pytest.mark.parametrize(("args", "split", "held_out"), HEADERS)
def test_the_log_header_says_whether_the_problems_are_held_out(data, tmp_path, args, split, held_out):
    from evals.math_task import math_verified

    path = {"jsonl": data, "gsm8k": FIXTURES / "gsm8k_sample.jsonl", "math500": FIXTURES / "math500_sample.jsonl"}
    task = math_verified(**({"path": str(path[args["dataset"]])} if args["dataset"] in path else {}), **args)
    assert (task.metadata["split"], task.metadata["held_out"]) == (split, held_out)


def test_the_hub_tasks_given_a_file_say_it_is_not_held_out():
    from evals.math_task import gsm8k_verified, math500_verified

    for task, name in ((gsm8k_verified, "gsm8k_sample.jsonl"), (math500_verified, "math500_sample.jsonl")):
        built = task(path=str(FIXTURES / name))
        assert (built.metadata["split"], built.metadata["held_out"]) == ("all", False)
        with pytest.raises(DatasetError, match="has no 'test' split"):
            task(path=str(FIXTURES / name), split="test")


def test_the_eval_refuses_a_test_split_of_a_file(data):
    from evals.math_task import math_verified

    with pytest.raises(DatasetError, match="has no 'test' split"):
        math_verified(dataset="jsonl", path=str(data), split="test")
