"""The code task, the unit-test scorer and the ``bwrap`` sandbox provider, end to end with mockllm."""

import asyncio
import json
import subprocess
import sys

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, solver
from inspect_ai.util import OutputLimitExceededError, SandboxUserUnsupportedError, sandbox

import evals.code_scoring
import evals.verify
import rewards.code.code_verifier
from evals.code_task import code_verified
from problems.code_data import load_code_problems
from python_tool.inspect_sandbox import BwrapSandboxEnvironment
from rewards import code_tests
from tests.helpers import BIN, REPO

pytestmark = pytest.mark.usefixtures("needs_sandbox")

PROBLEMS = {p.id: p for p in load_code_problems()}


def fenced(code: str) -> str:
    return f"Here is my solution.\n```python\n{code}```\n"


def test_scorer_and_reward_run_the_same_coroutine():
    assert evals.code_scoring.grade_code is rewards.code.code_verifier.grade_code
    assert evals.verify.grade_code is rewards.code.code_verifier.grade_code


@pytest.mark.parametrize("problem_id", ["gcd", "safe_divide", "sum_line"])
@pytest.mark.parametrize("variant", ["solution", "wrong", "none"])
def test_scorer_and_reward_agree(problem_id, variant):
    problem = PROBLEMS[problem_id]
    completion = {
        "solution": fenced(problem.solution),
        "wrong": fenced("def gcd(a, b):\n    return 1\nprint(6)\n"),
        "none": "no idea",
    }[variant]
    score = asyncio.run(evals.code_scoring.score_code_completion(completion, problem.tests))
    assert [score.value["fraction"]] == code_tests([completion], tests=[problem.tests])


def test_every_bundled_reference_solution_passes_all_its_tests():
    problems = list(PROBLEMS.values())
    assert 20 <= len(problems) <= 40 and sum(p.entry_point is None for p in problems) >= 4
    rewards_ = code_tests([fenced(p.solution) for p in problems], tests=[p.tests for p in problems])
    assert rewards_ == [1.0] * len(problems)


def test_code_task_end_to_end(tmp_path, mock_model):
    task = code_verified(limit=6)
    samples = list(task.dataset)
    problems = [PROBLEMS[s.id] for s in samples]
    replies = {
        samples[0].input[-1].text: fenced(problems[0].solution),
        samples[1].input[-1].text: fenced("import sys\nsys.exit(0)\n"),
        samples[2].input[-1].text: fenced("def is_palindrome(s):\n    return s == s[::-1]\n"),
        samples[3].input[-1].text: "I would use a loop.",
    }
    (log,) = inspect_eval(task, model=mock_model(replies), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    scores = {s.id: s.scores["unit_test_scorer"] for s in log.samples}
    first, hack, partial, none = (scores[s.id] for s in samples[:4])
    assert first.value == {"fraction": 1.0, "passed_all": 1.0} and first.answer == problems[0].solution
    assert hack.value == {"fraction": 0.0, "passed_all": 0.0} and hack.metadata["tamper_markers"] == ["sys.exit"]
    assert partial.value["passed_all"] == 0.0 and 0 < partial.value["fraction"] < 1  # honest partial credit
    assert "first failure" in partial.explanation and partial.metadata["failed_tests"]
    assert none.metadata["reason"] == "no_answer" and none.value["fraction"] == 0.0
    metrics = {(r.name, m): v.value for r in log.results.scores for m, v in r.metrics.items()}
    assert metrics[("passed_all", "mean")] == pytest.approx(1 / 6)
    from records.inspect_seams import resolve_declared_headline

    headline = resolve_declared_headline(log.results.scores, log.eval.headline_metric)
    assert (headline.score.name, headline.metric.name) == ("fraction", "mean")


def test_unusable_tests_are_unscored_not_wrong(tmp_path, mock_model):
    dataset = MemoryDataset([Sample(input="q", target='{"asserts": []}')])
    task = Task(dataset=dataset, scorer=evals.verify.unit_test_scorer())
    (log,) = inspect_eval(task, model=mock_model({"q": fenced("x = 1\n")}), log_dir=str(tmp_path), display="none")
    score = log.samples[0].scores["unit_test_scorer"]
    assert score.reason == "invalid_tests" and "exactly one of" in score.explanation


def test_an_eval_with_hostile_completions_scores_every_other_sample(tmp_path, mock_model):
    """Answers that once made the judge fail (issue #12) fail their own tests; the eval still succeeds."""
    from tests.rewards.code.test_code_hacks import BATCH_HOSTILE, HACKS, MBPP, WRONG

    codes = {"right": "def add(a, b):\n    return a + b\n", "wrong": WRONG}
    codes.update({f"hostile {i}": HACKS[name] for i, name in enumerate(BATCH_HOSTILE)})
    samples = [Sample(input=name, target=json.dumps(MBPP), id=name) for name in codes]
    task = Task(dataset=MemoryDataset(samples), scorer=evals.verify.unit_test_scorer())
    replies = {name: fenced(code) for name, code in codes.items()}
    (log,) = inspect_eval(task, model=mock_model(replies), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    fractions = {s.id: s.scores["unit_test_scorer"].value["fraction"] for s in log.samples}
    assert fractions == {"right": 1.0, "wrong": 0.25, **{f"hostile {i}": 0.0 for i in range(len(BATCH_HOSTILE))}}


def test_inspect_lists_the_code_task():
    out = subprocess.run([BIN / "inspect", "list", "tasks", "evals/"], cwd=REPO, capture_output=True, text=True)
    assert "evals/code_task.py@code_verified" in out.stdout.split()


def test_rescore_an_old_log_with_the_registered_scorer(tmp_path, mock_model):
    problem = PROBLEMS["gcd"]
    dataset = MemoryDataset([Sample(input="q", target=problem.tests, id="gcd")])
    task = Task(dataset=dataset, scorer=includes())  # a crude scorer, as an old log might have
    (log,) = inspect_eval(
        task, model=mock_model({"q": fenced(problem.solution)}), log_dir=str(tmp_path), display="none"
    )
    rescored = tmp_path / "rescored.eval"
    cmd = [BIN / "inspect", "score", log.location, "--scorer", "verigrpo/unit_test_scorer"]
    cmd += ["--action", "append", "--output-file", str(rescored), "--model", "none/none"]
    run = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    sample = read_eval_log(str(rescored)).samples[0]
    assert sample.scores["unit_test_scorer"].value == {"fraction": 1.0, "passed_all": 1.0}


# --- the bwrap sandbox provider ---------------------------------------------------------------------


@solver
def probe_sandbox():
    async def solve(state, generate):
        box = sandbox()
        await box.write_file("notes/hello.txt", "hi from the host\n")
        result = await box.exec(
            ["bash", "-c", "cat notes/hello.txt; id -u; hostname; ls /; echo $SECRET_TOKEN"], env={"X": "1"}
        )
        state.metadata["probe"] = {"ok": result.success, "stdout": result.stdout}
        state.metadata["read_back"] = await box.read_file("notes/hello.txt")
        return await generate(state)

    return solve


def test_task_with_sandbox_bwrap_runs_exec_read_and_write(tmp_path, mock_model, monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "hunter2")
    task = Task(
        dataset=MemoryDataset([Sample(input="q", target="x")]), solver=[probe_sandbox(), generate()], sandbox="bwrap"
    )
    (log,) = inspect_eval(task, model=mock_model({}), log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.eval.sandbox.type == "bwrap"
    meta = log.samples[0].metadata
    lines = meta["probe"]["stdout"].splitlines()
    assert meta["probe"]["ok"] and lines[0] == "hi from the host" and lines[2] == "sandbox"
    assert lines[1] != "0" and "hunter2" not in meta["probe"]["stdout"] and "root" not in lines[3:]
    assert meta["read_back"] == "hi from the host\n"


def test_agentic_code_task_runs_the_python_tool_in_bwrap(tmp_path, mock_output):
    problem = PROBLEMS["add_two"]
    outputs = [
        ModelOutput.for_tool_call(
            "mockllm/model", "python", {"code": "import os\nprint('uid', os.getuid(), sorted(os.listdir('/')))"}
        ),
        mock_output(fenced(problem.solution)),
    ]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    task = code_verified(limit=1, tools=True)
    (log,) = inspect_eval(
        task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    sample = log.samples[0]
    (tool_message,) = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert tool_message.text.startswith("uid ") and "'usr'" in tool_message.text and "'root'" not in tool_message.text
    assert sample.scores["unit_test_scorer"].value["passed_all"] == 1.0


def run_provider(coroutine_factory):
    async def main():
        environments = await BwrapSandboxEnvironment.sample_init("t", None, {})
        box = environments["default"]
        try:
            return await coroutine_factory(box)
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("t", None, environments, False)

    return asyncio.run(main())


def test_provider_errors_follow_inspects_contract():
    async def scenario(box):
        with pytest.raises(TimeoutError):
            await box.exec(["sleep", "30"], timeout=1)
        with pytest.raises(OutputLimitExceededError):
            await box.exec(["python3", "-c", "import sys\nfor _ in range(20): sys.stdout.write('x' * (1 << 20))"])
        with pytest.raises(SandboxUserUnsupportedError):
            await box.exec(["true"], user="root")
        with pytest.raises(FileNotFoundError):
            await box.read_file("missing.txt")
        await box.exec(["mkdir", "adir"])
        with pytest.raises(IsADirectoryError):
            await box.read_file("adir")
        with pytest.raises(PermissionError):
            await box.write_file("/usr/pwned", "x")
        missing = await box.exec(["no-such-program"])
        assert not missing.success and missing.returncode != 0
        piped = await box.exec(["python3", "-c", "import sys; print(sys.stdin.read()[::-1])"], input="abc", cwd="adir")
        assert piped.stdout == "cba\n"
        await box.write_file("blob.bin", bytes(range(256)))
        assert await box.read_file("blob.bin", text=False) == bytes(range(256))

    run_provider(scenario)


def test_provider_can_write_only_work_and_tmp():
    """/work is the sample's scratch and /tmp the sample's own, capped like /work and kept across execs; / and /dev are read-only (issue #12)."""
    probe = (
        "import json\nresult = {}\n"
        "for path in ('/work/f', '/tmp/f', '/f', '/dev/f', '/dev/shm/f', '/usr/f'):\n"
        "    try:\n        open(path, 'wb').write(b'x' * 1000)\n        result[path] = 'written'\n"
        "    except OSError as exc:\n        result[path] = exc.strerror\n"
        "print(json.dumps(result))"
    )

    async def scenario(box):
        return json.loads((await box.exec(["python3", "-c", probe])).stdout)

    result = run_provider(scenario)
    assert {path for path, outcome in result.items() if outcome == "written"} == {"/work/f", "/tmp/f"}, result


def test_provider_file_api_cannot_be_turned_on_the_host():
    """A symlink planted in /work resolves inside the sandbox, where host files do not exist."""

    async def scenario(box):
        await box.exec(["ln", "-s", "/etc/shadow", "shadow"])
        await box.exec(["ln", "-s", str(REPO / "pyproject.toml"), "project"])
        for name in ("shadow", "project"):
            with pytest.raises(FileNotFoundError):
                await box.read_file(name)
        with pytest.raises(PermissionError):
            await box.write_file("project", "overwritten")
        return json.loads(
            (await box.exec(["python3", "-c", "import json, os; print(json.dumps(os.listdir('.')))"])).stdout
        )

    assert sorted(run_provider(scenario)) == ["project", "shadow"]
    assert "overwritten" not in (REPO / "pyproject.toml").read_text()


def test_rewards_module_has_no_inspect_dependency():
    code = "import sys, rewards; print(any(m.startswith(('inspect_ai', 'torch')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
