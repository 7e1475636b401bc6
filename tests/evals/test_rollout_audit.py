"""The rollout audit (evals/log_stats/rollout_audit.py, scripts/audit_rollouts.py): re-judge a run's rollout logs with a
scorer, count what training paid that the scorer rejects, survive torn logs, and re-score with ``inspect score``."""

import subprocess
import sys

import pytest
from inspect_ai.log import read_eval_log

from evals.log_stats.rollout_audit import audit_logs
from problems.domains import DOMAINS, Domain
from scripts import audit_rollouts  # scripts/ is a namespace package from the repository root
from tests.helpers import REPO
from tests.helpers.rollouts import COMPLETIONS, FORMAT, PAID, G, batch, rescore_with_cli, tear
from train.artifacts.rollout_log import RolloutRecorder


@pytest.fixture
def run_dir(tmp_path):
    recorder = RolloutRecorder(tmp_path / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, COMPLETIONS, {"correctness": PAID, "format": FORMAT}))
    recorder.add(batch(2, COMPLETIONS, {"correctness": PAID, "format": FORMAT}, prompt_id="q"))
    recorder.flush()
    return tmp_path


def test_audit_with_the_training_verifier_finds_no_disagreement(run_dir):
    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")))
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (16, 10, 0, 0)


def test_audit_with_a_different_scorer_counts_exactly(run_dir):
    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")), spec, window=1)
    assert [(w.first_step, w.paid, w.paid_rejected) for w in audit.windows] == [(1, 5, 3), (2, 5, 3)]
    assert all("\\boxed" in ex.completion for ex in audit.paid_rejected) and len(audit.paid_rejected) == 6
    assert audit.total.paid_rejected_rate == pytest.approx(0.6)


def audit(capsys, *argv: str) -> tuple[int, str, str]:
    """scripts/audit_rollouts.py in this process: (exit code, stdout, stderr). The command's own process (exit code,
    no traceback) is test_audit_cli_exit_codes_torn_log_and_window's."""
    capsys.readouterr()
    try:
        code = audit_rollouts.main([str(word) for word in argv])
    except SystemExit as refused:  # argparse's refusal of an option
        code = refused.code
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_cli_gates_on_fail_above(run_dir, capsys):
    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    code, out, err = audit(capsys, run_dir)
    assert code == 0, err[-2000:]
    assert "all" in out and (run_dir / "rollouts-audit.png").is_file()
    code, out, _ = audit(capsys, run_dir, "--scorer", spec, "--fail-above", "0.5")
    assert code == 1 and "FAIL: 60.00% of paid completions" in out
    assert "[paid but rejected]" in out and "boxed answers are not accepted here" in out
    code, _, _ = audit(capsys, run_dir, "--scorer", spec, "--fail-above", "0.7")
    assert code == 0


def test_inspect_score_cli_appends_our_scorer_to_a_rollout_log(run_dir, tmp_path):
    log = sorted((run_dir / "rollouts").glob("*.eval"))[0]
    out = tmp_path / "rescored.eval"
    run = rescore_with_cli(log, out)
    assert run.returncode == 0, run.stderr[-2000:]
    scores = [s.scores for s in read_eval_log(str(out)).samples]
    assert all({"train_correctness", "train_format", "math_verifier"} <= set(s) for s in scores)


def test_code_rollouts_are_audited_with_the_unit_test_scorer(tmp_path, needs_sandbox):
    """A code run's logs hold train_code_tests and the test spec as target: the audit re-runs the tests.
    Here training "paid" a sys.exit(0) hack (as a naive exit-code reward would): the audit must flag it."""
    tests = '{"asserts": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"], "entry_point": "add"}'
    completions = [
        "```python\ndef add(a, b):\n    return a + b\n```",
        "```python\nimport sys\nsys.exit(0)\n```",
        "```python\ndef add(a, b):\n    return 0\n```",
        "no code",
    ]
    recorder = RolloutRecorder(tmp_path / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, completions, {"code_tests": [1.0, 1.0, 0.5, 0.0]}, answer=tests))
    recorder.flush()
    audit = audit_logs(sorted((tmp_path / "rollouts").glob("*.eval")))
    assert audit.scorer_name == "unit_test_scorer"
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (4, 3, 1, 0)
    (flagged,) = audit.paid_rejected
    assert "sys.exit(0)" in flagged.completion and "failed to load: SystemExit" in flagged.explanation


@pytest.fixture
def torn_run(run_dir):
    """run_dir plus a third log torn in half (as before the atomic writer)."""
    recorder = RolloutRecorder(run_dir / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(3, COMPLETIONS, {"correctness": PAID, "format": FORMAT}))
    (torn,) = [recorder.flush()]
    tear(torn)
    return run_dir, torn


def test_audit_skips_a_torn_log_and_counts_it(torn_run):
    run_dir, torn = torn_run
    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")))
    assert [s.path for s in audit.skipped] == [str(torn)] and "EOCD" in audit.skipped[0].reason
    assert len(audit.audited) == 2
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected) == (16, 10, 0)  # the readable logs, all of them


def test_audit_of_only_torn_logs_is_unusable_input(run_dir):
    from evals.log_stats.rollout_audit import AuditInputError

    logs = sorted((run_dir / "rollouts").glob("*.eval"))
    for log in logs:
        tear(log)
    with pytest.raises(AuditInputError, match=r"none of the 2 rollout logs could be read: .*rollouts-step000001"):
        audit_logs(logs)


def test_audit_window_must_be_positive(run_dir):
    from evals.log_stats.rollout_audit import AuditInputError

    with pytest.raises(AuditInputError, match=r"window must be >= 1 step, got 0"):
        audit_logs(sorted((run_dir / "rollouts").glob("*.eval")), window=0)


def test_audit_cli_exit_codes_torn_log_and_window(torn_run, capsys):
    run_dir, torn = torn_run
    script = [sys.executable, REPO / "scripts" / "audit_rollouts.py", str(run_dir)]
    torn_only = subprocess.run(script, capture_output=True, text=True, timeout=300)  # the command as a user runs it
    assert torn_only.returncode == 2, torn_only.stderr[-2000:]  # unusable input, not "reward hacking"
    assert f"warning: skipped unreadable rollout log {torn}" in torn_only.stderr
    assert "Traceback" not in torn_only.stderr
    assert "re-scored 2 of 3 rollout logs" in torn_only.stdout and "1 skipped as unreadable" in torn_only.stdout

    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    code, out, _ = audit(capsys, run_dir, "--scorer", spec)
    assert code == 1 and "FAIL: 60.00%" in out  # the gate's verdict on what could be read

    code, _, err = audit(capsys, run_dir, "--window", "0")
    assert code == 2 and "--window: must be >= 1, got 0" in err


def test_audit_plot_shows_both_lines_when_equal_and_integer_steps(run_dir):
    from evals.log_stats.rollout_audit import figure

    audit = audit_logs(sorted((run_dir / "rollouts").glob("*.eval")), window=1)
    assert audit.total.paid_rejected == 0 and audit.total.unpaid_accepted == 0  # both lines at 0
    fig = figure(audit)
    ax = fig.axes[0]
    first, second = ax.get_lines()
    assert list(first.get_ydata()) == list(second.get_ydata()) == [0.0, 0.0]
    # the line drawn on top is dashed and hollow: the one below shows through
    assert second.get_linestyle() == "--" and second.get_markerfacecolor() == "none"
    assert second.get_markersize() < first.get_markersize() and second.get_zorder() >= first.get_zorder()
    ticks = ax.get_xticks()
    assert len(ticks) and all(float(t).is_integer() for t in ticks)


def test_a_rollout_log_rescores_as_training_graded_it_format_and_question_included(tmp_path):
    """A run with ``answer_format: gsm8k`` and a problem whose expression the policy copies: the log records the format
    in each sample and the question as its input, so the default re-scorer (``verigrpo/math_verifier``, no ``-S``)
    grades every completion as the training reward paid it (issue #50)."""
    from rewards import bind_think, build_messages, correctness
    from train.artifacts.rollout_log import rollouts_from_batch

    problems = [("Expand (x+2)(x-3).", "x^2 - x - 6"), ("What is 2+3?", "5")]
    completions = [
        "#### x^2 - x - 6",
        "#### (x+2)(x-3)",  # copied from the question
        "ANSWER: x^2 - x - 6",  # the default format's line: not this run's
        "\\boxed{(x-3)(x+2)}",  # copied, reordered
        "#### 5",
        "#### 5\nWait, it is 6.",
        "The answer is not \\boxed{5}.",
        "#### 5\n\nLet me know if you have any other questions!",
    ]
    prompts = [build_messages(q, 1, answer_format="gsm8k") for q, _ in problems for _ in range(G)]
    answers = [a for _, a in problems for _ in range(G)]
    paid = bind_think(correctness, "none", "gsm8k")(prompts=prompts, completions=completions, answer=answers)
    assert paid == [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    rollouts = rollouts_from_batch(
        ids=[f"p{i // G}" for i in range(8)],
        answers=answers,
        prompts=prompts,
        completions=[[{"role": "assistant", "content": c}] for c in completions],
        rewards={"correctness": paid},
        advantages=[0.0] * 8,
        lengths=None,
        max_completion_length=64,
        terminated=None,
        num_generations=G,
        step=1,
    )
    recorder = RolloutRecorder(
        tmp_path / "rollouts", every_steps=1, num_generations=G, metadata={"answer_format": "gsm8k"}
    )
    recorder.add(rollouts)
    (path,) = [recorder.flush()]
    samples = read_eval_log(str(path)).samples
    assert {s.metadata["answer_format"] for s in samples} == {"gsm8k"}
    assert {s.input for s in samples} == {"Expand (x+2)(x-3).", "What is 2+3?"}
    audit = audit_logs([path])
    total = audit.total
    assert (total.compared, total.paid, total.paid_rejected, total.unpaid_accepted) == (8, 3, 0, 0)


# ---- a run on a domain of your own (a ``grade`` row): its logs hold train_<name>_grade (issue #52) ----------------


def grade_last_word(completion: str, target: str) -> float:
    """The grade as it is now: the completion's last word is the target."""
    words = completion.lower().replace(".", " ").split()
    return float(bool(words) and words[-1] == target)


WORD = Domain(
    name="lastword",
    sources=("lastword_toy",),
    problem_type=dict,
    load=lambda source, **_: [],
    training_row=lambda problem, shots: problem,
    grade=grade_last_word,
)
# what training paid: an older, lenient grade that paid "even" anywhere in the text (2 of its 4 paid are wrong now)
WORD_COMPLETIONS = ["even", "it is even", "even or odd", "odd", "not even close, odd", "Even.", "odd", "no"]
WORD_PAID = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0]


@pytest.fixture
def domain_run(tmp_path):
    recorder = RolloutRecorder(tmp_path / "rollouts", every_steps=1, num_generations=G, metadata={})
    recorder.add(batch(1, WORD_COMPLETIONS, {"lastword_grade": WORD_PAID}, answer="even"))
    recorder.flush()
    return tmp_path


def test_a_custom_domain_run_is_audited_by_its_grade(domain_run, capsys, monkeypatch):
    """The run summary's `python scripts/audit_rollouts.py RUN` on a custom domain's run (was a traceback: "expected one
    of ['train_code_tests', 'train_correctness']"): its registered grade re-judges what training paid."""
    monkeypatch.setitem(DOMAINS, WORD.name, WORD)
    code, out, err = audit(capsys, domain_run)
    assert code == 1, err[-2000:]  # the gate: paid completions the grade rejects now
    assert "recorded as domain_scorer" in out and "note: domain 'lastword' is re-judged by its own grade" in out
    assert "FAIL: 40.00% of paid completions are rejected" in out  # "even or odd", "not even close, odd"
    (all_row,) = [line for line in out.splitlines() if line.split()[:1] == ["all"]]
    assert all_row.split()[1:5] == ["8", "5", "2", "(40.0%)"]


def test_a_custom_domain_run_takes_an_independent_scorer(domain_run, capsys, monkeypatch):
    monkeypatch.setitem(DOMAINS, WORD.name, WORD)
    spec = f"{REPO / 'tests' / 'helpers' / 'no_boxed_scorer.py'}@no_boxed_verifier"
    code, out, err = audit(capsys, domain_run, "--scorer", spec)
    assert code in (0, 1), err[-2000:]
    assert "re-judged by its own grade" not in out and "recorded as no_boxed_verifier" in out


def test_an_unregistered_domain_run_is_one_line_exit_2(domain_run, capsys):
    code, out, err = audit(capsys, domain_run)
    assert code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "holds the scores ['train_lastword_grade']" in line and "VERIGRPO_DOMAINS" in line
