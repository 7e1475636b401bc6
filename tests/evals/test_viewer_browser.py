"""Rollout and eval logs read the way a person reads them: `inspect view` in a real (headless) Chromium.

On screen, not in the JSON: the list tells samples apart by their problem and names the run, steps and
policy; a sample shows the prompt, the completion, the extracted answer and the verifier's explanation
of each reward; nothing renders "NaN". Needs the system Chromium and PyPI's playwright (tests/helpers/view_check.py):
skipped where they are missing, a failure in CI (VERIGRPO_REQUIRE_BROWSER=1, set by .ci/run).
"""

import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from rewards import ANSWER_INSTRUCTION, build_code_messages, code_tests
from tests.helpers import REPO, view_check
from tests.helpers.rollouts import PROBLEMS, graded_batch, write_run
from tests.helpers.view_check import Screen, check_rollout_log, open_log, open_sample, open_tab, shows, wait_for_text

INSTRUCTION_START = ANSWER_INSTRUCTION.split(".")[0]  # "Solve the problem step by step"
# screenshots of every step, to look at: VERIGRPO_SCREENSHOT_DIR=/tmp/shots pytest tests/evals/test_viewer_browser.py
SHOTS = Path(os.environ["VERIGRPO_SCREENSHOT_DIR"]) if os.environ.get("VERIGRPO_SCREENSHOT_DIR") else None


@pytest.fixture(scope="module")
def needs_browser():
    problem = view_check.browser_problem()
    if problem:
        if os.environ.get("VERIGRPO_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser unavailable in CI: {problem}")
        pytest.skip(f"browser unavailable: {problem}")


def test_rollout_and_eval_logs_read_in_the_browser(tmp_path, needs_browser, mock_model):
    """A rollout log written from the real reward functions' verdicts (the trainer's path without the model)
    and a math_verified eval log, in one viewer: the log list, then each log's list and a sample."""
    from evals.math_task import math_verified

    logs = tmp_path / "logs"
    (rollouts,) = write_run(tmp_path / "run", [graded_batch(1), graded_batch(2)])
    logs.mkdir()
    rollouts = Path(rollouts.replace(logs / rollouts.name))
    task = math_verified(limit=2)
    samples = list(task.dataset)
    wrong = samples[0].input[-1].text
    (eval_log,) = inspect_eval(
        task, model=mock_model({wrong: "Let me think about this.\nANSWER: 999"}), log_dir=str(logs), display="none"
    )
    assert eval_log.status == "success"

    with view_check.inspect_view(logs) as url, view_check.browser_page() as page:
        screen = Screen(page, "rollouts", SHOTS)
        # the log list: Inspect View 0.3.285 fills its Task Args/Samples/Tokens/Duration cells from a second
        # fetch that randomly leaves one of two rows at "-" (two plain eval logs too), so the run, steps and
        # policy are checked on the log's own page (check_rollout_log), which reads the whole header
        page.goto(url)
        screen.saw(wait_for_text(page, "grpo_rollouts", "math_verified", "mockllm/model"), "logs")
        check_rollout_log(screen, url, rollouts, INSTRUCTION_START)
        assert all(shows(screen.seen[1][1], question) for question, _ in PROBLEMS)  # two groups, two problems
        assert shows(screen.seen[1][1], "run: demo-1, steps: 1-2, policy: smollm2-135m-instruct")

        # the eval log: its sample shows the answer and the verifier's explanation too
        eval_name = Path(eval_log.location).name
        wrong_sample = next(s for s in samples if s.input[-1].text == wrong)
        screen.saw(open_log(page, url, eval_name, str(wrong_sample.id)), "eval-list")
        screen.saw(open_sample(page, str(wrong_sample.id)), "eval-sample")
        scoring = screen.saw(open_tab(page, "Scoring", f"got '999', want '{wrong_sample.target}'"), "eval-scoring")
        assert shows(scoring, "999")
        screen.assert_no_nan()


def test_code_rollouts_and_eval_show_which_tests_failed(tmp_path, needs_browser, needs_sandbox, mock_model):
    """code_tests' verdicts in a rollout log and unit_test_scorer's in a code_verified eval log, on screen."""
    from evals.code_task import code_verified
    from rewards.reward_log import whys_from_columns
    from train.artifacts.rollout_log import RolloutRecorder, rollouts_from_batch

    logs = tmp_path / "logs"
    tests = '{"asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"], "entry_point": "add"}'
    completions = [
        "Adding them:\n```python\ndef add(a, b):\n    return a + b\n```",
        "Multiplying them:\n```python\ndef add(a, b):\n    return a * b\n```",
        "Exiting early:\n```python\nimport sys\nsys.exit(0)\n```",
        "I would use the plus operator.",
    ]
    table = {}
    paid = code_tests(completions, tests=[tests] * 4, log_extra=table.__setitem__)
    recorder = RolloutRecorder(logs, every_steps=1, num_generations=4, metadata={"policy_model": "code-policy"})
    started = datetime.now(timezone.utc)
    recorder.add(
        rollouts_from_batch(
            ids=["add"] * 4,
            answers=[tests] * 4,
            prompts=[build_code_messages("Write add(a, b) that returns the sum of two integers.", "add")] * 4,
            completions=completions,
            rewards={"code_tests": paid},
            advantages=[0.0] * 4,
            lengths=[20] * 4,
            max_completion_length=64,
            terminated=[True] * 4,
            num_generations=4,
            step=1,
            whys={"code_tests": whys_from_columns("code_tests", table, 4)},
            prompt_lengths=[50] * 4,
            started_at=started,
            completed_at=started + timedelta(seconds=2),
        )
    )
    rollouts = recorder.flush()
    task = code_verified(limit=2)
    sample = list(task.dataset)[0]  # add_two(a, b); the other sample gets the mock's "I don't know."
    multiplies = "```python\ndef add_two(a, b):\n    return a * b\n```"
    (eval_log,) = inspect_eval(
        task, model=mock_model({sample.input[-1].text: multiplies}), log_dir=str(logs), display="none"
    )
    assert eval_log.status == "success" and sample.id == "add_two"

    with view_check.inspect_view(logs) as url, view_check.browser_page() as page:
        screen = Screen(page, "code", SHOTS)
        screen.saw(open_log(page, url, rollouts.name, "Write add(a, b)", "pass@4"), "list")
        screen.saw(open_sample(page, "add@1", 2), "sample")
        scoring = screen.saw(open_tab(page, "Scoring", "train_code_tests", "passed 1/2 tests"), "scoring")
        assert shows(scoring, "first failure (test 0): failed: assert add(1, 2) == 3") and shows(
            scoring, "return a * b"
        )
        screen.saw(open_log(page, url, Path(eval_log.location).name, str(sample.id)), "eval-list")
        screen.saw(open_sample(page, str(sample.id)), "eval-sample")
        scoring = screen.saw(open_tab(page, "Scoring", "return a * b", "first failure (test 0)"), "eval-scoring")
        assert shows(scoring, "passed 1/4 tests; failed: 0, 1, 3"), scoring
        screen.assert_no_nan()


CPU_CONFIG = str(REPO / "configs" / "cpu-smollm2.yaml")


@pytest.mark.slow
@pytest.mark.ci
def test_rollouts_of_a_real_cpu_run_read_in_the_browser(tmp_path, needs_browser):
    """One real GRPO step of configs/cpu-smollm2.yaml (2 prompts x 4 completions), then its rollout log on
    screen. Full precision: the 4-bit base rarely states an ANSWER line (README: format 0.22 vs 0.88), and
    the page must have an extracted answer to show."""
    from train.config import parse_config
    from train.grpo import main

    out = tmp_path / "run"
    args = ["--config", CPU_CONFIG, "--output_dir", str(out), "--max_steps", "1", "--dataset_size", "8"]
    args += ["--per_device_train_batch_size", "8", "--num_generations", "4", "--load_in_4bit", "false"]
    result = main(*parse_config(args))
    (path,) = [Path(p) for p in result["rollout_logs"]]
    with view_check.inspect_view(path.parent) as url, view_check.browser_page() as page:
        screen = Screen(page, "cpu-run", SHOTS)
        check_rollout_log(screen, url, path, INSTRUCTION_START)
        assert shows(screen.seen[0][1], "run: run, steps: 1, policy: smollm2-135m-instruct")
        screen.assert_no_nan()


@pytest.mark.slow
@pytest.mark.ci
def test_tool_rollouts_show_the_call_its_output_and_the_answer(tmp_path, needs_browser, needs_sandbox):
    """A group of tool rollouts (real sandbox runs, real rewards; tests/helpers/tool_rollouts.py) in the viewer: the
    policy's call (its code), the tool's output and the final answer on the Messages tab, the call in the
    Transcript, and the reward on Scoring."""
    from tests.helpers.tool_rollouts import QUESTION, tool_batch
    from train.artifacts.rollout_log import RolloutRecorder

    batch = tool_batch()
    recorder = RolloutRecorder(tmp_path / "logs", every_steps=1, num_generations=len(batch), metadata={})
    recorder.add(batch)
    rollouts = recorder.flush()
    with view_check.inspect_view(tmp_path / "logs") as url, view_check.browser_page() as page:
        screen = Screen(page, "tools", SHOTS)
        screen.saw(open_log(page, url, rollouts.name, QUESTION), "list")
        screen.saw(open_sample(page, "tool-0@1", 1), "sample")
        messages = screen.saw(open_tab(page, "Messages", "print(17 * 23)", "The product is 391."), "messages")
        assert shows(messages, "ANSWER: 391") and shows(messages, "python") and not shows(messages, "killed")
        screen.saw(open_tab(page, "Transcript", "print(17 * 23)"), "transcript")
        scoring = screen.saw(open_tab(page, "Scoring", "train_correctness"), "scoring")
        assert shows(scoring, "391")
        screen.assert_no_nan()


@pytest.mark.slow
@pytest.mark.ci
def test_a_real_cpu_tool_run_shows_the_policys_call_its_output_and_answer(tmp_path, needs_browser, needs_sandbox):
    """One real GRPO step of configs/cpu-smollm2-tools.yaml (the warm-started CPU model, 1 prompt x 4 completions,
    seeded; tests/helpers/tool_runs.py), then its rollout log on screen: a completion in which the policy called the
    tool shows the call's code, the tool's output and the policy's own answer on the Messages tab, the call and its
    output in the Transcript, and the reward on Scoring."""
    from inspect_ai.log import read_eval_log

    from python_tool.trl_environment import tool_limits
    from tests.helpers.tool_runs import TOOLS_CONFIG, executed_calls, prepare_tool_model, train_tool_run
    from train.config import parse_config

    prepare_tool_model()
    result = train_tool_run(tmp_path / "run")
    (path,) = [Path(p) for p in result["rollout_logs"]]
    log = read_eval_log(str(path))
    calls = executed_calls(log, tool_limits(parse_config(["--config", TOOLS_CONFIG])[0]))
    call = next((c for c in calls if "ANSWER:" in c.answer), None)
    assert call is not None, f"no executed call followed by an ANSWER line: {calls}"
    answer_line = next(line for line in call.answer.splitlines() if line.startswith("ANSWER:"))
    with view_check.inspect_view(path.parent) as url, view_check.browser_page() as page:
        screen = Screen(page, "tool-run", SHOTS)
        screen.saw(open_log(page, url, path.name, "mean"), "list")
        screen.saw(open_sample(page, call.sample_id, call.epoch), "sample")
        shown_call = f"python {call.code} {call.output.strip()}"  # the call's code, then the tool's output under it
        messages = screen.saw(open_tab(page, "Messages", shown_call, answer_line), "messages")
        assert shows(messages, f"{shown_call} assistant") and shows(messages, call.answer)  # then the policy's turn
        screen.saw(open_tab(page, "Transcript", f"tool: python {shown_call}"), "transcript")
        scoring = screen.saw(open_tab(page, "Scoring", "train_correctness"), "scoring")
        assert shows(scoring, answer_line.removeprefix("ANSWER:").strip())
        screen.assert_no_nan()
