"""What a rollout log holds for a reader: the conversation, why each reward was paid, real times and usage,
labelled results; and old logs (written before these fields) still load, re-score and audit the same."""

import math
import shutil
from datetime import timedelta

import pytest
from inspect_ai import score as inspect_score
from inspect_ai.event import ModelEvent, ScoreEvent
from inspect_ai.log import read_eval_log, recompute_metrics, resolve_sample_attachments

import rewards
from evals.log_stats.rollout_audit import audit_logs, load_scorer
from records.inspect_seams import EvalMetricDefinition
from rewards import ANSWER_INSTRUCTION, build_messages, grade
from rewards.reward_log import whys_from_columns
from tests.helpers import REPO
from tests.helpers.rollouts import (
    COMPLETIONS,
    FORMAT,
    GRADED_COMPLETIONS,
    PAID,
    PROBLEMS,
    START,
    G,
    graded_batch,
    rescore_with_cli,
    write_run,
)
from train.artifacts.rollout_log import rollouts_from_batch

OLD_RUNS = REPO / "tests" / "fixtures" / "rollouts_before_viewer"


@pytest.fixture
def new_log(tmp_path):
    (path,) = write_run(tmp_path, [graded_batch(1), graded_batch(2)])
    return read_eval_log(str(path))


def test_a_rollout_sample_is_the_conversation_the_policy_had(new_log):
    sample = next(s for s in new_log.samples if s.id == "arith-0@1" and s.epoch == 1)
    sample = resolve_sample_attachments(sample)  # each sample stores its prompt once (condense_sample)
    prompt = build_messages(PROBLEMS[0][0], 1)
    # the list leads with the problem; the conversation is exactly the prompt the policy saw, then its completion
    assert sample.input == "What is 3 + 4?"
    assert [(m.role, m.text) for m in sample.messages] == [(m["role"], m["content"]) for m in prompt] + [
        ("assistant", GRADED_COMPLETIONS[0])
    ]
    assert sample.messages[0].text == ANSWER_INSTRUCTION
    assert sample.output.completion == GRADED_COMPLETIONS[0] and sample.output.model == "smollm2-135m-instruct"
    assert sample.output.choices[0].stop_reason == "stop"
    (model_event,) = [e for e in sample.events if isinstance(e, ModelEvent)]
    assert [m.text for m in model_event.input] == [m["content"] for m in prompt]
    assert model_event.output.completion == GRADED_COMPLETIONS[0] and model_event.config.temperature == 0.7
    assert model_event.config.max_tokens == 48
    assert [e.scorer for e in sample.events if isinstance(e, ScoreEvent)] == ["train_correctness", "train_format"]
    truncated = next(s for s in new_log.samples if s.id == "arith-1@1" and s.epoch == G)
    assert truncated.metadata["truncated"] and truncated.output.choices[0].stop_reason == "max_tokens"


def test_every_reward_score_carries_the_verdict_that_set_it(new_log):
    """answer, explanation and reason come from the reward function's own verdict, through log_extra."""
    samples = [s for s in new_log.samples if s.metadata["step"] == 1]
    assert len(samples) == len(GRADED_COMPLETIONS)
    for sample in samples:
        verdict = grade(sample.output.completion, sample.target)
        paid = sample.scores["train_correctness"]
        assert paid.value == (1.0 if verdict.correct else 0.0)
        assert (paid.answer, paid.explanation, paid.metadata) == (
            verdict.answer,
            verdict.explanation,
            {"reason": verdict.reason.value},
        )
        found = rewards.find_final_answer(sample.output.completion)
        fmt = sample.scores["train_format"]
        assert fmt.answer == found.answer and fmt.explanation
        assert fmt.metadata["reason"] == ("found" if found.answer is not None else found.reason.value)
    by_completion = {s.output.completion: s.scores for s in samples}
    assert by_completion["ANSWER: 8"]["train_correctness"].explanation == "got '8', want '7'"
    assert by_completion["It is seven."]["train_format"].explanation == "no ANSWER: line or \\boxed{}"
    assert by_completion["ANSWER: 4\nANSWER: 5"]["train_format"].metadata["reason"] == "hedged"
    assert by_completion["\\boxed{7}"]["train_format"].explanation == "one final answer: '7'"


def test_a_reward_that_did_not_apply_is_unscored_with_its_reason(tmp_path):
    (path,) = write_run(tmp_path, [graded_batch(1, problems=[("q1", "\\frac{"), ("q2", "4")])])
    broken = next(s for s in read_eval_log(str(path)).samples if s.id == "arith-0@1").scores["train_correctness"]
    assert math.isnan(broken.value) and broken.reason == "invalid_reference"
    assert broken.metadata == {"reason": "invalid_reference"} and "cannot be parsed" in broken.explanation


def test_times_tokens_and_task_args_are_real(new_log):
    sample = new_log.samples[0]
    assert sample.total_time == sample.working_time == 7.5
    assert sample.started_at.startswith("2026-01-02T03:05:05") and sample.completed_at.startswith("2026-01-02T03:05:12")
    usage = sample.model_usage["smollm2-135m-instruct"]
    assert usage.output_tokens == sample.metadata["completion_length"] and usage.input_tokens >= 120
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    # the log list: when, how many tokens, which run, policy and steps (the file name is hidden there)
    assert new_log.stats.started_at.startswith("2026-01-02T03:05:05")
    assert new_log.stats.completed_at.startswith("2026-01-02T03:06:12")
    assert new_log.stats.model_usage["smollm2-135m-instruct"].total_tokens == sum(
        s.model_usage["smollm2-135m-instruct"].total_tokens for s in new_log.samples
    )
    assert new_log.eval.task_args_passed == {"run": "demo-1", "steps": "1-2", "policy": "smollm2-135m-instruct"}
    assert new_log.eval.dataset.samples == 4 and new_log.eval.config.epochs == G  # 4 groups x 4 completions


def test_results_are_one_row_per_score_with_the_group_mean_and_pass_at_g(new_log):
    rows = {(r.name, r.reducer): {k: m.value for k, m in r.metrics.items()} for r in new_log.results.scores}
    # arith-0 pays 2 of 4 (3 + 4: "ANSWER: 7", "\boxed{7}"), arith-1 pays 1 of 4 ("9 - 5 = 4"), both steps alike
    assert rows == {
        ("train_correctness", None): {"mean": pytest.approx(3 / 8), "pass@4": 1.0},
        ("train_format", None): {"mean": pytest.approx(5 / 8), "pass@4": 1.0},
    }
    assert [r.metrics["mean"].name for r in new_log.results.scores] == ["mean", "mean"]  # the viewer's column name


VALUES = [  # per group of 4: paid, partial credit (code), unscored completions, a group with fewer than G scored
    [1.0, 0.0, 0.0, 0.0],
    [0.5, 0.25, 1.0, 0.0],
    [None, 1.0, 0.0, 0.0],
    [None, None, None, None],
    [0.0, 0.0, 0.0, 0.0],
    [0.5, 0.5, None, 0.5],
]


def test_group_metrics_equal_inspects_epoch_reducers():
    """The same numbers as Inspect's mean and pass_at_4 reducers under mean() (the old layout), NaN included."""
    completions = [f"c{i}" for i in range(G * len(VALUES))]
    batch = rollouts_from_batch(
        ids=[f"g{i // G}" for i in range(len(completions))],
        answers=["1"] * len(completions),
        prompts=[[{"role": "user", "content": "q"}]] * len(completions),
        completions=completions,
        rewards={"code_tests": [v for group in VALUES for v in group]},
        advantages=[0.0] * len(completions),
        lengths=None,
        max_completion_length=8,
        terminated=None,
        num_generations=G,
        step=1,
    )
    from train.artifacts.rollout_log import build_log

    log = build_log(batch, G, {})
    new = {k: m.value for k, m in log.results.scores[0].metrics.items()}
    old = log.model_copy(deep=True)
    old.eval.scorers[0].metrics = [EvalMetricDefinition(name="mean")]
    recompute_metrics(old)
    by_reducer = {r.reducer: r.metrics["mean"].value for r in old.results.scores}
    assert new == {"mean": pytest.approx(by_reducer["mean"]), "pass@4": pytest.approx(by_reducer["pass_at_4"])}
    # by hand: group means 0.25, 0.4375, 1/3, -, 0, 0.5; pass@4 needs 4 scored: groups 1, 2, 5 -> 1, 1, 0
    assert new["mean"] == pytest.approx((0.25 + 0.4375 + 1 / 3 + 0 + 0.5) / 5)
    assert new["pass@4"] == pytest.approx(2 / 3)


# ---- logs written before these fields: still read, re-scored and audited the same ----------------------


def rescored_results(log) -> dict:
    scored = inspect_score(log, scorers=[load_scorer("verigrpo/math_verifier")], action="append", model="none/none")
    return {
        (r.name, r.scorer, r.reducer): {k: m.value for k, m in r.metrics.items()}
        for r in scored.results.scores
        if r.scorer == "math_verifier"
    }


# what re-scoring the old fixture's first log gave before the viewer changes (recorded then, with the same verifier)
OLD_RESCORE = {
    ("correct", "math_verifier", "mean"): {"accuracy": 0.625, "stderr": 0.125},
    ("format", "math_verifier", "mean"): {"mean": 0.875},
    ("correct", "math_verifier", "pass_at_4"): {"accuracy": 1.0, "stderr": 0.0},
    ("format", "math_verifier", "pass_at_4"): {"mean": 1.0},
}


def old_style_batch(step, prompt_id):
    """The old fixture's completions and training values (tests/helpers/rollouts.py's), written by today's writer."""
    n = len(COMPLETIONS)
    return rollouts_from_batch(
        ids=[f"{prompt_id}{i // G}" for i in range(n)],
        answers=["5"] * n,
        prompts=[
            [
                {"role": "system", "content": "Solve the problem. End with ANSWER: <answer>."},
                {"role": "user", "content": "What is 2+3?"},
            ]
        ]
        * n,
        completions=COMPLETIONS,
        rewards={"correctness": PAID, "format": FORMAT},
        advantages=[0.5 - i % 2 for i in range(n)],
        lengths=[10 + i for i in range(n)],
        max_completion_length=64,
        terminated=[i % 3 != 0 for i in range(n)],
        num_generations=G,
        step=step,
        started_at=START,
        completed_at=START + timedelta(seconds=3),
    )


def test_old_rollout_logs_still_load_and_rescore_as_before(tmp_path):
    old_paths = sorted((OLD_RUNS / "math" / "rollouts").glob("*.eval"))
    old = read_eval_log(str(old_paths[0]))
    assert old.samples[0].messages == [] and old.samples[0].scores["train_correctness"].answer is None  # the old shape
    assert rescored_results(old) == OLD_RESCORE
    (new_path,) = write_run(tmp_path, [old_style_batch(1, "p")], every_steps=1)
    assert rescored_results(read_eval_log(str(new_path))) == OLD_RESCORE


def test_the_audit_counts_old_and_new_logs_alike(tmp_path):
    old = audit_logs(sorted((OLD_RUNS / "math" / "rollouts").glob("*.eval")))
    new_run = tmp_path / "new"
    write_run(new_run, [old_style_batch(1, "p"), old_style_batch(2, "q")], every_steps=1)
    new = audit_logs(sorted((new_run / "rollouts").glob("*.eval")))
    for audit in (old, new):
        total = audit.total
        assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (16, 10, 0, 0)
    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    strict = [audit_logs(sorted((d / "rollouts").glob("*.eval")), spec, window=1) for d in (OLD_RUNS / "math", new_run)]
    assert [[(w.first_step, w.paid, w.paid_rejected) for w in a.windows] for a in strict] == [
        [(1, 5, 3), (2, 5, 3)]
    ] * 2


def test_the_audit_flags_the_old_code_log_as_before(needs_sandbox):
    audit = audit_logs(sorted((OLD_RUNS / "code" / "rollouts").glob("*.eval")))
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (4, 3, 1, 0)
    assert "failed to load: SystemExit" in audit.paid_rejected[0].explanation


def test_inspect_score_cli_reads_an_old_log(tmp_path):
    old = tmp_path / "old.eval"
    shutil.copy(sorted((OLD_RUNS / "math" / "rollouts").glob("*.eval"))[0], old)
    out = tmp_path / "rescored.eval"
    run = rescore_with_cli(old, out)
    assert run.returncode == 0, run.stderr[-2000:]
    results = {
        (r.name, r.scorer, r.reducer): {k: m.value for k, m in r.metrics.items()}
        for r in read_eval_log(str(out)).results.scores
    }
    assert {k: v for k, v in results.items() if k[1] == "math_verifier"} == OLD_RESCORE
    assert results[("train_correctness", "train_correctness", "mean")] == {"mean": 0.625}  # the old layout, kept


def test_code_tests_reports_which_tests_failed_for_each_completion(needs_sandbox):
    """code_tests hands the verdict of each completion (the code, which tests failed, the first failure) to
    log_extra; unusable tests, caught before or in the judge, give None with the reason."""
    from rewards import code_tests

    tests = '{"asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"], "entry_point": "add"}'
    broken_setup = (
        '{"asserts": ["assert add(1, 2) == 3"], "setup": "import no_such_module_anywhere", "entry_point": "add"}'
    )
    completions = [
        "```python\ndef add(a, b):\n    return a + b\n```",
        "```python\ndef add(a, b):\n    return a * b\n```",
        "no code",
        "```python\ndef add(a, b):\n    return a + b\n```",
        "```python\ndef add(a, b):\n    return a + b\n```",
    ]
    table = {}
    values = code_tests(completions, tests=[tests] * 3 + ['{"asserts": []}', broken_setup], log_extra=table.__setitem__)
    whys = whys_from_columns("code_tests", table, len(completions))
    assert values == [1.0, 0.5, 0.0, None, None]
    assert [w.reason for w in whys] == ["correct", "tests_failed", "no_answer", "invalid_tests", "invalid_tests"]
    assert whys[0].answer == "def add(a, b):\n    return a + b\n" and whys[0].explanation.startswith("passed 2/2")
    assert whys[1].explanation.startswith("passed 1/2 tests; failed: 0; first failure (test 0)")
    assert "no_such_module_anywhere" in whys[4].explanation and "exactly one of" not in whys[4].explanation
