"""The README's commands, as written: every file, config, task, scorer, make target, extra and option
they name exists, and the Python examples run.

Running every command is the job of the tests that exercise it (training, evals, the audit); this test
catches the drift between them and the README: a renamed script, a removed option, a task parameter
that no longer exists, a config that moved.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys

import pytest
import tomllib

from tests.helpers import REPO

README = (REPO / "README.md").read_text()


def fenced_blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


def commands() -> list[str]:
    """Shell command lines of the ```bash blocks: comments dropped, continuation lines joined."""
    lines = []
    for block in fenced_blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.split(r"\s#\s", " " + line, maxsplit=1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


COMMANDS = commands()


def words(command: str) -> list[str]:
    return shlex.split(command)


@functools.cache
def script_help(script: str) -> str:
    """The script's --help text (and --help-all for the trainer, whose --help is the short form)."""
    flags = ["--help", "--help-all"] if script == "train/grpo.py" else ["--help"]
    text = ""
    for flag in flags:
        result = subprocess.run(
            [sys.executable, script, flag], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
        )
        assert result.returncode == 0, f"python {script} {flag} failed:\n{result.stderr[-2000:]}"
        text += result.stdout
    return text


def options(argv: list[str]) -> list[str]:
    return [word.split("=")[0] for word in argv if word.startswith("--")]


def test_the_readme_has_commands_to_check():
    assert len(COMMANDS) >= 25
    assert any(c.startswith("python train/grpo.py") for c in COMMANDS)
    assert any(c.startswith("inspect eval") for c in COMMANDS)


def test_every_path_a_command_names_exists():
    for command in COMMANDS:
        for word in words(command):
            for path in re.findall(r"(?:^|[=:])((?:configs|scripts|train|evals|rewards|tests)/[\w./-]+)", word):
                path = path.split("@")[0]
                assert (REPO / path).exists(), f"README command names {path}, which does not exist: {command}"


def test_make_targets_and_extras_exist():
    makefile = (REPO / "Makefile").read_text()
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for command in COMMANDS:
        argv = words(command)
        if argv[0] == "make":
            for target in argv[1:]:
                assert re.search(rf"^{target}:", makefile, re.M), f"no make target {target}: {command}"
        if argv[:3] == ["pip", "install", "-e"]:
            for extra in re.findall(r"\[(.*?)\]", argv[3])[0].split(","):
                assert extra in extras, f"pyproject.toml has no extra {extra!r}: {command}"


PYTHON_SCRIPTS = sorted({words(c)[1] for c in COMMANDS if words(c)[0] == "python" and words(c)[1].endswith(".py")})


@pytest.mark.parametrize("script", PYTHON_SCRIPTS)
def test_every_option_a_script_is_given_is_one_it_accepts(script):
    accepted = set(re.findall(r"(?<![\w-])--[\w-]+", script_help(script)))
    for command in COMMANDS:
        argv = words(command)
        if argv[:2] == ["python", script]:
            unknown = [o for o in options(argv[2:]) if o not in accepted and o not in ("--help", "--help-all")]
            assert not unknown, f"python {script} does not accept {unknown}: {command}"


def _task(reference: str):
    """``evals/x.py@name`` -> the task function (imported the way Inspect does, by file)."""
    import importlib

    path, _, name = reference.partition("@")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, name)


def test_inspect_eval_commands_name_real_tasks_and_parameters():
    import inspect

    checked = 0
    for command in COMMANDS:
        argv = words(command)
        if argv[:2] != ["inspect", "eval"] or "@" not in argv[2]:
            continue
        task = _task(argv[2])
        parameters = inspect.signature(task).parameters
        for i, word in enumerate(argv):
            if word == "-T":
                key = argv[i + 1].split("=")[0]
                assert key in parameters, f"{argv[2]} has no parameter {key!r}: {command}"
        checked += 1
    assert checked >= 5


def test_inspect_score_scorers_exist():
    """``verigrpo/<name>`` is a scorer the installed plugin exports; ``file.py@name`` one the file defines."""
    import evals.inspect_plugin as plugin

    for command in COMMANDS:
        argv = words(command)
        if argv[:2] == ["inspect", "score"]:
            scorer = argv[argv.index("--scorer") + 1]
            if scorer.startswith("verigrpo/"):
                assert callable(getattr(plugin, scorer.removeprefix("verigrpo/"), None)), f"no {scorer}: {command}"
            elif "@" in scorer and (REPO / scorer.split("@")[0]).exists():
                assert callable(_task(scorer)), f"no {scorer}: {command}"


def test_python_examples_run():
    """The ```python blocks run as written (the code example needs the sandbox)."""
    from rewards.sandbox import SandboxUnavailable

    for block in fenced_blocks("python"):
        try:
            exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - the README's own example code, not model text
        except SandboxUnavailable:
            if "grade_code" not in block or os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
                raise
            pytest.skip("bubblewrap cannot run here")
