"""Inspect tasks and scorers: identity with the training reward, end-to-end runs, re-scoring old logs, and the
warning when a checkpoint was trained with another verifier."""

import asyncio
import json
import math
import subprocess
import sys

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import exact

import evals.math_scoring
import evals.verify
import rewards
import verigrpo
from evals.math_scoring import checkpoint_verifier_mismatch, score_completion
from evals.math_task import math_verified, record_to_sample
from problems.math_data import MathProblem
from rewards import correctness
from tests.helpers import BIN, REPO
from tests.helpers.project_files import copy_sources

# --- one function: the scorer's verifier is the reward's verifier ---


def test_scorer_and_reward_share_the_same_objects():
    assert evals.verify.is_correct is rewards.is_correct
    assert evals.verify.grade is rewards.grade
    assert evals.math_scoring.grade is rewards.grade
    assert rewards.math.math_rewards.grade is rewards.grade


AGREEMENT = [
    ("2 + 2 = 4\nANSWER: 4", "4"),
    ("ANSWER: 5", "4"),
    ("The answer is four.", "4"),
    ("\\boxed{\\frac{1}{2}}", "0.5"),
    ("ANSWER: 3\nANSWER: 4", "4"),
    ("ANSWER: 1,000", "1000"),
    ("ANSWER: 9^{9^{9^{9}}}", "1"),
    ("ANSWER: 2(x+1)", "2x+2"),
    ("ANSWER: 50", "0.5"),
    ("ANSWER: (0, 9)", "[0, 9)"),
]


@pytest.mark.parametrize(("completion", "target"), AGREEMENT)
def test_scorer_and_reward_agree(completion, target):
    score = asyncio.run(score_completion(completion, target))
    (reward,) = correctness(completions=[completion], answer=[target])
    assert score.value["correct"] == ("C" if reward == 1.0 else "I")
    assert score.metadata["verifier_fingerprint"] == rewards.verifier_fingerprint()


def test_legacy_import_prints_the_seed_check():
    code = "from evals.verify import is_correct; print(is_correct('0.5','1/2'), is_correct('16','16.0'), is_correct('15','16'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "True True False"


# --- end to end with mockllm ---


def test_math_task_end_to_end(tmp_path, mock_model):
    task = math_verified(limit=4)
    samples = list(task.dataset)
    replies = {
        samples[0].input[-1].text: f"So it is {samples[0].target}.\nANSWER: {samples[0].target}",
        samples[1].input[-1].text: "ANSWER: 999",
        samples[2].input[-1].text: f"\\boxed{{{samples[2].target}}}",
    }
    (log,) = inspect_eval(task, model=mock_model(replies), log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    scores = {s.id: s.scores["math_verifier"] for s in log.samples}
    assert [scores[s.id].value for s in samples] == [
        {"correct": "C", "format": 1.0},
        {"correct": "I", "format": 1.0},
        {"correct": "C", "format": 1.0},
        {"correct": "I", "format": 0.0},
    ]
    assert scores[samples[1].id].explanation == f"got '999', want '{samples[1].target}'"
    assert scores[samples[3].id].metadata["reason"] == "no_answer"
    metrics = {(r.name, m): v.value for r in log.results.scores for m, v in r.metrics.items()}
    assert metrics[("correct", "accuracy")] == 0.5 and metrics[("format", "mean")] == 0.75
    assert log.eval.metadata["verifier"] == rewards.verifier_id()
    from records.inspect_seams import resolve_declared_headline  # None when the declaration matches nothing

    headline = resolve_declared_headline(log.results.scores, log.eval.headline_metric)
    assert (headline.score.name, headline.metric.name, headline.metric.value) == ("correct", "accuracy", 0.5)
    assert log.eval.config.epochs is None or log.eval.config.epochs == 1


@pytest.mark.parametrize(
    ("answer_format", "line"),
    [("gsm8k", "#### {}"), ("minerva", "Final Answer: The final answer is ${}$. I hope it is correct.")],
)
def test_a_named_answer_format_end_to_end(tmp_path, mock_model, answer_format, line):
    """``-T answer_format=``: the prompt teaches the format, the scorer reads it from the sample (the same rule as the
    training reward: the default ``ANSWER:`` line is not this format's), pleasantries pass and take-backs do not, and
    the log header records the format (issue #50)."""
    task = math_verified(limit=4, answer_format=answer_format)
    samples = list(task.dataset)
    assert line.format("<answer>") in samples[0].input[0].text  # the instruction teaches the format's line
    assert samples[0].input[-2].text.splitlines()[-1].startswith(line.split("{}")[0])  # and the worked example ends so
    answers = [s.target for s in samples]
    replies = {
        samples[0].input[-1].text: "So it is this.\n" + line.format(answers[0]),
        samples[1].input[-1].text: f"ANSWER: {answers[1]}",  # the default format's line: not this task's
        samples[2].input[-1].text: line.format(answers[2]) + "\n\nLet me know if you have any other questions!",
        samples[3].input[-1].text: line.format(answers[3]) + "\nWait, that is wrong. It is 1000.",
    }
    (log,) = inspect_eval(task, model=mock_model(replies), log_dir=str(tmp_path), display="none")
    assert log.status == "success" and log.eval.task_args.get("answer_format", answer_format) == answer_format
    assert log.eval.metadata["answer_format"] == answer_format
    scores = {s.id: s.scores["math_verifier"] for s in log.samples}
    verdicts = [(scores[s.id].value["correct"], scores[s.id].metadata["reason"]) for s in samples]
    assert verdicts == [("C", "correct"), ("I", "no_answer"), ("C", "correct"), ("I", "hedged")]


def test_an_unknown_answer_format_is_one_message():
    from evals.task_errors import TaskArgumentError

    with pytest.raises(TaskArgumentError, match="answer_format must be one of") as caught:
        math_verified(answer_format="lm-eval")
    assert caught.value.message.startswith("error: math_verified: answer_format must be one of")


def test_prompt_is_the_training_prompt():
    problem = MathProblem("x", "What is 2+2?", "4")
    sample = record_to_sample(problem, num_shots=1)
    assert [(m.role, m.text) for m in sample.input] == [
        (m["role"], m["content"]) for m in rewards.build_messages("What is 2+2?", 1)
    ]


def test_unreadable_reference_is_unscored_not_wrong(tmp_path, mock_model):
    dataset = MemoryDataset([Sample(input="q1", target="\\frac{"), Sample(input="q2", target="3")])
    task = Task(dataset=dataset, scorer=evals.verify.math_verifier())
    (log,) = inspect_eval(task, model=mock_model({"q1": "ANSWER: 1", "q2": "ANSWER: 3"}), log_dir=str(tmp_path))
    assert log.status == "success"
    bad, good = (s.scores["math_verifier"] for s in sorted(log.samples, key=lambda s: s.input))
    assert isinstance(bad.value, float) and math.isnan(bad.value)
    assert bad.reason == "invalid_reference" and "cannot be parsed" in bad.explanation
    assert good.value["correct"] == "C"
    accuracy = next(r for r in log.results.scores if r.name == "correct").metrics["accuracy"].value
    assert accuracy == 1.0  # the dataset bug is excluded, not counted against the model


def test_too_complex_candidate_is_incorrect_not_unscored(tmp_path, mock_model):
    # a symbolic reference: for a number, a tower of numerals is a computation and refused before its size matters
    task = Task(dataset=MemoryDataset([Sample(input="q", target="x")]), scorer=evals.verify.math_verifier())
    (log,) = inspect_eval(task, model=mock_model({"q": "ANSWER: x^{9^{9^{9}}}"}), log_dir=str(tmp_path))
    score = log.samples[0].scores["math_verifier"]
    assert score.value["correct"] == "I" and score.metadata["reason"] == "too_complex"


# --- discovery and registry names ---


def test_inspect_eval_evals_discovers_only_offline_tasks():
    out = subprocess.run([BIN / "inspect", "list", "tasks", "evals/"], cwd=REPO, capture_output=True, text=True)
    tasks = out.stdout.split()
    assert "evals/math_task.py@math_verified" in tasks
    assert not [t for t in tasks if "gsm8k" in t or "math500" in t]


@pytest.mark.parametrize("where", ["repo", "elsewhere"])
def test_registered_scorer_name_is_the_same_everywhere(where, tmp_path):
    code = (
        "import verigrpo; from inspect_ai.util import registry_info\n"
        "print(registry_info(verigrpo.math_verifier).name, registry_info(verigrpo.checkpoint_provider).name)"
    )
    cwd = REPO if where == "repo" else tmp_path
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    # the model provider: Inspect matches its unqualified name, so `--model verigrpo/<run dir>`
    assert out.stdout.split() == ["verigrpo/math_verifier", "verigrpo/verigrpo"], out.stderr
    assert verigrpo.NAMESPACE == "verigrpo"


# --- re-scoring an old log ---


def test_rescore_crude_log_with_our_scorer_from_outside_the_repo(tmp_path, mock_model):
    problems = [("q1", "0.5", "ANSWER: 1/2"), ("q2", "12", "12"), ("q3", "7", "ANSWER: 8"), ("q4", "1000", "1,000")]
    dataset = MemoryDataset([Sample(input=q, target=t, id=q) for q, t, _ in problems])
    task = Task(dataset=dataset, scorer=exact())  # deliberately crude: whole output == target
    (log,) = inspect_eval(task, model=mock_model({q: reply for q, _, reply in problems}), log_dir=str(tmp_path))
    assert log.status == "success"

    rescored = tmp_path / "rescored.eval"
    cmd = [BIN / "inspect", "score", log.location, "--scorer", "verigrpo/math_verifier"]
    cmd += ["--action", "append", "--output-file", str(rescored), "--model", "none/none"]
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]

    new = read_eval_log(str(rescored))
    ours = {s.id: s.scores["math_verifier"].value["correct"] for s in new.samples}
    crude = {s.id: s.scores["exact"].value for s in new.samples}
    assert crude == {"q1": "I", "q2": "C", "q3": "I", "q4": "C"}
    # "12" and "1,000" have no ANSWER line: ours says no_answer (the format contract), exact() accepted them
    assert ours == {"q1": "C", "q2": "I", "q3": "I", "q4": "I"}

    diff = subprocess.run(
        [sys.executable, REPO / "scripts" / "score_diff.py", str(rescored)], capture_output=True, text=True, timeout=120
    )
    assert diff.returncode == 0, diff.stderr
    assert "exact -> math_verifier: 3 of 4 items changed grade (1 up, 2 down)" in diff.stdout
    assert "q1 (epoch 1): 0 -> 1" in diff.stdout and "q2 (epoch 1): 1 -> 0" in diff.stdout


def test_registered_scorer_name_after_a_regular_install(tmp_path):
    """`pip install .` (not -e) puts the packages in site-packages; the name must not change."""
    site = tmp_path / "venv" / "site-packages"
    source = copy_sources(REPO, tmp_path / "src")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q", "--target", site, source],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    code = (
        "import verigrpo, evals.verify; from inspect_ai.util import registry_info\n"
        "from problems.code_data import load_code_problems; from rewards.code.sandbox_programs import source\n"
        "print(verigrpo.__file__); print(registry_info(verigrpo.math_verifier).name)\n"
        "print(registry_info(verigrpo.unit_test_scorer).name, registry_info(verigrpo.bwrap).name)\n"
        "print(len(load_code_problems()), len(source('judge.py')) > 0, len(source('server.py')) > 0)"
    )
    env = {"PYTHONPATH": str(site), "PATH": ""}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    where, name, code_scorer, provider, problems, judge, server = out.stdout.split()
    assert where.startswith(str(site)), out.stderr
    assert name == "verigrpo/math_verifier"
    assert (code_scorer, provider) == ("verigrpo/unit_test_scorer", "verigrpo/bwrap")
    assert (problems, judge, server) == ("28", "True", "True")  # package data: problems and sandbox programs


def test_checkpoint_trained_with_another_verifier_warns(tmp_path):
    same, other = tmp_path / "same", tmp_path / "other"
    for directory, fingerprint in ((same, rewards.verifier_fingerprint()), (other, "0123456789abcdef")):
        directory.mkdir()
        (directory / "run.json").write_text(
            json.dumps({"verifier_fingerprint": fingerprint, "verigrpo_version": "0.0"})
        )
    assert checkpoint_verifier_mismatch(f"hf/{same}") is None
    with pytest.warns(UserWarning, match="was trained with verifier 0123456789abcdef"):
        message = checkpoint_verifier_mismatch(f"vllm/base-model:{other}")
    assert message and str(other) in message
    assert checkpoint_verifier_mismatch("mockllm/model") is None
