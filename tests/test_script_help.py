"""Every script's ``--help`` is its own: exit 0, the script's own usage or docstring (not train/grpo.py's page, which
the scripts that pass their arguments to the trainer's parser used to print), and nothing run. ``train/grpo.py --help``
imports no model library to print its page, lists every shipped config and ends quietly when its reader closes the
pipe (``--help | head``)."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys

import pytest

from tests.helpers import REPO, SOURCE_PACKAGES
from train.config.cli_help import shipped_configs

SCRIPTS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "scripts").glob("*.py"))
# scripts whose top-level imports load torch/transformers before argparse runs (tens of seconds under load)
HEAVY = {"scripts/prepare_tool_model.py"}
MODEL_LIBRARIES = ("torch", "transformers", "trl", "peft", "vllm", "inspect_ai")
TRAINER_PAGE = "usage: python train/grpo.py"


def run(*argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=600, **kw)


def own_help(script: str) -> str:
    """What the script's help must start with: argparse's ``usage: <name>`` or its docstring's first line."""
    source = (REPO / script).read_text()
    doc = re.match(r'\s*(?:#.*\n)*\s*"""(.*?)\n', source)
    return doc.group(1).strip() if doc else ""


@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.slow) if s in HEAVY else s for s in SCRIPTS])
def test_every_script_prints_its_own_help(script):
    result = run(sys.executable, script, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    name = script.rsplit("/", 1)[1]
    first = result.stdout.lstrip().splitlines()[0]
    assert first.startswith(("usage:", own_help(script))), first
    assert name in first or first == own_help(script), first
    assert TRAINER_PAGE not in result.stdout


@pytest.mark.parametrize("argv", [["--help"], ["-h"], ["--bogus"]])
def test_install_system_deps_answers_help_without_running(argv):
    result = run("bash", "scripts/install_system_deps.sh", *argv)
    if argv == ["--bogus"]:
        assert result.returncode == 2 and "unknown argument: --bogus" in result.stderr
        return
    assert result.returncode == 0 and result.stdout.startswith("OS packages the code verifier's sandbox needs")
    assert "installing" not in result.stdout and "present" not in result.stdout


@functools.cache
def help_run(*argv: str) -> subprocess.CompletedProcess:
    """``python -X importtime argv``: the page on stdout, every module it imported on stderr (one run for both)."""
    result = run(sys.executable, "-X", "importtime", *argv)
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def test_the_trainer_help_lists_every_shipped_config():
    page = help_run("train/grpo.py", "--help").stdout
    assert "configs/cpu-smollm2-tools.yaml" in shipped_configs()
    for config in shipped_configs():
        assert config in page


def test_the_trainer_help_survives_a_closed_pipe():
    """``python train/grpo.py --help | head -1``: the page's first line and no BrokenPipeError traceback."""
    result = subprocess.run(
        f"{sys.executable} train/grpo.py --help | head -1", shell=True, cwd=REPO, capture_output=True, text=True
    )
    assert result.stdout.startswith(TRAINER_PAGE) and "Traceback" not in result.stderr, result.stderr[-2000:]


def imported_modules(*argv: str) -> set[str]:
    """The modules ``python -X importtime argv`` imports (names, not times: the machine's load cannot move them)."""
    lines = help_run(*argv).stderr.splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


@pytest.mark.parametrize(
    "argv",
    [
        ["scripts/check_on_policy.py", "--help"],
        ["scripts/bench_share_base.py", "--help"],
        ["scripts/measure_sleep_backup.py", "--help"],
        ["train/grpo.py", "--help"],
    ],
    ids=lambda a: a[0],
)
def test_help_imports_no_model_library(argv):
    loaded = imported_modules(*argv)
    assert not [m for m in MODEL_LIBRARIES if m in loaded]


GOOD_ANSWERS = '{"answer": "x^2+1", "candidate": "y^3"}\n'
LIMITS_REPORT_FILES = [
    # (file content or None for a missing file, exit status, what stdout (exit 0) or stderr says, line by line)
    (None, 2, [r"^error: \S+mine.jsonl: cannot be read \(FileNotFoundError: No such file or directory\)$"]),
    ('{"answer": "x^2+1"}\nnot json\n', 2, [r"^error: \S+mine.jsonl:2: not a JSON object \(Expecting value\)$"]),
    ('["x"]\n', 2, [r"^error: \S+mine.jsonl:1: not a JSON object$"]),
    (
        GOOD_ANSWERS,
        0,
        [
            r"^== \S+mine.jsonl: references: 1 distinct answers, 1 symbolic leaves ==$",
            r"^nodes +400 +5 +0  'x\^2\+1'$",
            r"^== \S+mine.jsonl: candidates: 1 distinct answers, 1 symbolic leaves ==$",
            r"^== dataset references",  # the project's own answers after, apart
        ],
    ),
]


@pytest.mark.parametrize(("content", "status", "says"), LIMITS_REPORT_FILES)
def test_the_limits_report_reports_each_file_given_on_its_own(tmp_path, content, status, says):
    path = tmp_path / "mine.jsonl"
    if content is not None:
        path.write_text(content)
    result = run(sys.executable, "scripts/verifier_limits_report.py", str(path))
    assert result.returncode == status, result.stderr[-2000:]
    out = result.stdout if status == 0 else result.stderr.strip()
    if status:
        assert len(out.splitlines()) == 1, out
    for pattern in says:
        assert re.search(pattern, out, re.M), (pattern, out[-2000:])


# One convention for commands: a command is the file its user types. `python scripts/X.py` is that script (its
# arguments, output and exit status; the packages hold the functions it calls). A package module keeps a command line
# only where it must run from an installed wheel, which has no scripts/: the trainer (`python train/grpo.py`,
# `python -m train.grpo`), `python -m train.replay`, `python -m rewards.scorecard`, the GPU check's `cli`
# (scripts/check_gpu.py runs it; tests/test_install.py runs it from the wheel), and the programs the code sandbox runs.
PACKAGE_COMMANDS = {
    "rewards/code/sandbox_programs/judge.py",
    "rewards/code/sandbox_programs/server.py",
    "rewards/scorecard.py",
    "train/gpu_check/run.py",
    "train/grpo.py",
    "train/replay.py",
}


def has_command_line(path) -> bool:
    """A top-level ``main``/``cli`` function or an ``if __name__ == "__main__":`` block."""
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("main", "cli"):
            return True
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
    return False


def test_commands_live_in_scripts_unless_a_wheel_runs_them():
    found = {
        p.relative_to(REPO).as_posix()
        for top in SOURCE_PACKAGES
        for p in (REPO / top).rglob("*.py")
        if has_command_line(p)
    }
    assert found == PACKAGE_COMMANDS, f"a command in a package (else: scripts/): {sorted(found ^ PACKAGE_COMMANDS)}"
