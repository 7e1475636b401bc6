"""The documentation's commands, as written, in README.md and every page under docs/: every file,
config, task, scorer, make target, extra and option they name exists, every link resolves, and the
Python examples run.

Running every command is the job of the tests that exercise it (training, evals, the audit); this test
catches the drift between them and the docs: a renamed script, a removed option, a task parameter
that no longer exists, a config that moved, a page the README's map does not link.

A command is a line of a ```bash block or an inline code span that starts with a program below. A
command the checker cannot check fails the test (teach the checker or rewrite the line): nothing is
skipped silently. Untagged blocks are program output (the demo's summary) and are not commands.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from tests.helpers import BIN, REPO
from tests.helpers.project_files import project_files

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))
PAGES = [README, *DOCS]
README_MAX_BYTES = 15_000
DOCS_MAP_HEADING = "Documentation"
# the programs a command may start with (after VAR=value assignments); each has a checker below
PROGRAMS = ("make", "pip", "python", "inspect", "accelerate", "sbatch", "bash")


def name(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


@functools.cache
def text(page: Path) -> str:
    return page.read_text()


def fenced_blocks(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, flags=re.S | re.M)


def prose(markdown: str) -> str:
    """The page without its fenced blocks (code, output and the layout tree)."""
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def inline_code(markdown: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", prose(markdown))


FILES = project_files(REPO)
TOP_LEVEL = sorted({file.split("/")[0] for file in FILES if "/" in file})
REPO_PATH = re.compile(rf"(?<![\w./<>-])((?:{'|'.join(map(re.escape, TOP_LEVEL))})/[\w.*@/-]*)")


def path_exists(path: str) -> bool:
    """``evals/x.py@task`` is the file; a glob (``configs/qwen2.5-1.5b-*.yaml``) must match a file."""
    path = path.split("@")[0].rstrip(".")
    return any(REPO.glob(path)) if "*" in path else (REPO / path).exists()


# --- commands -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Command:
    page: str
    line: str

    @functools.cached_property
    def argv(self) -> list[str]:
        """The words, without leading VAR=value assignments and a trailing ``&``."""
        argv = shlex.split(self.line)
        while argv and re.match(r"^[A-Z_][A-Z0-9_]*=", argv[0]):
            argv.pop(0)
        return argv[:-1] if argv[-1:] == ["&"] else argv

    def __str__(self) -> str:
        return f"{self.page}: {self.line}"


def block_commands(markdown: str) -> list[str]:
    """Shell command lines of the ```bash blocks: comments dropped, continuation lines joined."""
    lines = []
    for block in fenced_blocks(markdown, "bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.split(r"\s#\s", " " + line, maxsplit=1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def inline_commands(markdown: str) -> list[str]:
    """Inline code spans that are commands: a program of PROGRAMS and at least one word after it."""
    commands = []
    for span in inline_code(markdown):
        words = [w for w in span.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
        if len(words) >= 2 and words[0] in PROGRAMS:
            commands.append(span)
    return commands


def page_commands(page: Path) -> list[Command]:
    markdown = text(page)
    return [Command(name(page), line) for line in block_commands(markdown) + inline_commands(markdown)]


COMMANDS = [command for page in PAGES for command in page_commands(page)]


def options(argv: list[str]) -> list[str]:
    return [word.split("=")[0] for word in argv if word.startswith("--")]


def help_in_this_process(command: tuple[str, ...]) -> str | None:
    """The page of the two help commands whose new process would spend seconds importing torch and TRL before printing
    it (accelerate's launch parser; the trainer's TRL list, ``--help-all``), printed by the same parser here; None for
    every other command. The trainer's own ``--help`` is still run as a command (here and in tests/test_script_help.py)."""
    if Path(command[0]).name == "accelerate" and command[1:] == ("launch", "--help"):
        from accelerate.commands.launch import launch_command_parser

        # its help formatter lists what sys.argv asks for, as in the command
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "argv", ["accelerate", "launch", "--help"])
            return launch_command_parser().format_help()
    if command[1:] == ("train/grpo.py", "--help-all"):
        from train.config import parse_config

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as exit_status:
            parse_config(["--help-all"])  # argparse prints every key and exits 0, as the command does
        assert exit_status.value.code == 0, printed.getvalue()[-2000:]
        return printed.getvalue()
    return None


@functools.cache
def help_text(*command: str) -> str:
    """What ``command`` (ending in --help or the like) prints."""
    printed = help_in_this_process(command)
    if printed is not None:
        return printed
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stderr[-2000:]}"
    return result.stdout


def accepted_options(*command: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", help_text(*command)))


def unknown_options(program: list[str], given: list[str]) -> list[str]:
    """The options ``program --help`` does not list (nor ``--help-all``, where the short help offers it:
    the trainer's --help shows its own options, --help-all every TRL key)."""
    unknown = [o for o in given if o not in accepted_options(*program, "--help") | {"--help", "--help-all"}]
    if unknown and "--help-all" in help_text(*program, "--help"):
        unknown = [o for o in unknown if o not in accepted_options(*program, "--help-all")]
    return unknown


def require_installed(module: str) -> None:
    """Skip (saying so) where an optional package is absent; CI requires vLLM (VERIGRPO_REQUIRE_VLLM=1)."""
    top = module.split(".")[0]
    if importlib.util.find_spec(top) is None:
        if top == "vllm" and os.environ.get("VERIGRPO_REQUIRE_VLLM") == "1":
            pytest.fail(f"vLLM is not installed, but VERIGRPO_REQUIRE_VLLM=1: cannot check python -m {module}")
        pytest.skip(f"{top} is not installed here: cannot check python -m {module}")


def check_make(argv: list[str]) -> None:
    makefile = (REPO / "Makefile").read_text()
    for target in argv[1:]:
        assert re.search(rf"^{re.escape(target)}:", makefile, re.M), f"no make target {target}"


def check_pip(argv: list[str]) -> None:
    from packaging.requirements import Requirement

    assert argv[1] == "install", f"pip {argv[1]} is not a documented use of pip"
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    if argv[2:3] == ["-e"]:
        assert re.fullmatch(r"\.(\[.*\])?", argv[3]), f"pip install -e installs this repository ('.'), not {argv[3]}"
        for extra in re.findall(r"\[(.*?)\]", argv[3])[0].split(",") if "[" in argv[3] else []:
            assert extra in extras, f"pyproject.toml has no extra {extra!r}"
    else:
        for requirement in argv[2:]:
            if requirement == "--no-deps":  # vllm-bnb-plugin next to vLLM's CPU build (docs/gpu-16gb.md)
                continue
            Requirement(requirement)  # a third-party package: at least a valid requirement


def check_python(argv: list[str]) -> None:
    if argv[1] == "-m":
        require_installed(argv[2])
        unknown = unknown_options([sys.executable, "-m", argv[2]], options(argv[3:]))
        assert not unknown, f"python -m {argv[2]} does not accept {unknown}"
        return
    script = argv[1]
    assert script.endswith(".py") and (REPO / script).is_file(), f"python runs {script}, which is not a file here"
    help_text(sys.executable, script, "--help")  # every script a command runs answers --help
    unknown = unknown_options([sys.executable, script], options(argv[2:]))
    assert not unknown, f"python {script} does not accept {unknown}"


def check_accelerate(argv: list[str]) -> None:
    assert argv[1] == "launch", f"accelerate {argv[1]} is not a documented use of accelerate"
    script_at = next((i for i, word in enumerate(argv) if word.endswith(".py")), len(argv))
    unknown = unknown_options([str(BIN / "accelerate"), "launch"], options(argv[2:script_at]))
    assert not unknown, f"accelerate launch does not accept {unknown}"
    if script_at < len(argv):
        check_python(["python", *argv[script_at:]])


def check_inspect(argv: list[str]) -> None:
    flags = [w.split("=")[0] for w in argv[2:] if re.match(r"^--?[A-Za-z]", w)]
    unknown = unknown_options([str(BIN / "inspect"), argv[1]], flags)
    assert not unknown, f"inspect {argv[1]} does not accept {unknown}"


def check_sbatch(argv: list[str]) -> None:
    """The options override the script's own #SBATCH directives."""
    script = next((word for word in argv[1:] if (REPO / word).is_file()), None)
    assert script, "sbatch names no batch script of this repository"
    directives = set(re.findall(r"^#SBATCH (--[\w-]+)", (REPO / script).read_text(), re.M))
    unknown = [o for o in options(argv[1 : argv.index(script)]) if o not in directives]
    assert not unknown, f"{script} sets no #SBATCH {unknown}"


def check_bash(argv: list[str]) -> None:
    assert (REPO / argv[1]).is_file(), f"bash runs {argv[1]}, which is not a file here"


CHECKERS = {
    "make": check_make,
    "pip": check_pip,
    "python": check_python,
    "inspect": check_inspect,
    "accelerate": check_accelerate,
    "sbatch": check_sbatch,
    "bash": check_bash,
}
assert set(CHECKERS) == set(PROGRAMS)


def test_the_docs_have_commands_to_check():
    assert len(COMMANDS) >= 25
    assert any(c.argv[:2] == ["python", "train/grpo.py"] for c in COMMANDS)
    assert sum(c.argv[:2] == ["inspect", "eval"] for c in COMMANDS) >= 5
    readme = [c.argv for c in COMMANDS if c.page == "README.md"]
    assert ["make", "demo"] in readme and ["make", "test"] in readme


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_command_is_checked(page):
    """Every command starts with a program the checker knows and passes its checker; a command that needs
    an optional package this machine lacks is named in the skip, after every other command was checked."""
    unchecked = []
    for command in page_commands(page):
        argv = command.argv
        if not argv or argv[0] not in CHECKERS:
            pytest.fail(f"{command}: the checker does not know {argv[:1]}; teach tests/test_readme.py or rewrite it")
        try:
            CHECKERS[argv[0]](argv)
        except AssertionError as error:
            raise AssertionError(f"{command}: {error}") from None
        except pytest.skip.Exception as skip:
            unchecked.append(f"{command} ({skip.msg})")
    if unchecked:
        pytest.skip("not checked: " + "; ".join(unchecked))


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_path_a_command_names_exists(page):
    for command in page_commands(page):
        for word in command.argv:
            for path in REPO_PATH.findall(word):
                assert path_exists(path), f"{command} names {path}, which does not exist"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_path_the_text_names_exists(page):
    """``rewards/math/answer_format.py``, ``tests/integration/test_resume.py``, ... anywhere in the prose or the layout tree."""
    missing = [path for path in REPO_PATH.findall(text(page)) if not path_exists(path)]
    assert not missing, f"{name(page)} names paths that do not exist: {sorted(set(missing))}"


def _task(reference: str):
    """``evals/x.py@name`` -> the task function (imported the way Inspect does, by file)."""
    path, _, task = reference.partition("@")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, task)


def test_inspect_eval_commands_name_real_tasks_and_parameters():
    import inspect

    checked = 0
    for command in COMMANDS:
        argv = command.argv
        if argv[:2] != ["inspect", "eval"] or len(argv) < 3 or "@" not in argv[2]:
            continue
        if not (REPO / argv[2].split("@")[0]).is_file():
            # a user's task file (outside the checkout, FILE.py@NAME): docs/inspect-tasks.md's own test runs its
            # commands; a path into this repository that does not exist fails test_every_path_a_command_names_exists
            continue
        parameters = inspect.signature(_task(argv[2])).parameters
        for i, word in enumerate(argv):
            if word == "-T":
                key = argv[i + 1].split("=")[0]
                assert key in parameters, f"{argv[2]} has no parameter {key!r}: {command}"
        checked += 1
    assert checked >= 5


def test_inspect_score_scorers_exist():
    """``verigrpo/<name>`` is a scorer the installed plugin exports; ``file.py@name`` one the file defines."""
    import evals.inspect_plugin as plugin

    checked = 0
    for command in COMMANDS:
        argv = command.argv
        if argv[:2] == ["inspect", "score"] and "--scorer" in argv:
            scorer = argv[argv.index("--scorer") + 1]
            if scorer.startswith("verigrpo/"):
                assert callable(getattr(plugin, scorer.removeprefix("verigrpo/"), None)), f"no {scorer}: {command}"
            elif "@" in scorer and (REPO / scorer.split("@")[0]).exists():
                assert callable(_task(scorer)), f"no {scorer}: {command}"
            checked += 1
    assert checked >= 2


PYTHON_EXAMPLES = [(page, block) for page in PAGES for block in fenced_blocks(text(page), "python")]


@pytest.mark.parametrize(("page", "block"), PYTHON_EXAMPLES, ids=[name(p) for p, _ in PYTHON_EXAMPLES])
def test_python_examples_run(page, block):
    """The ```python blocks run as written (the code example needs the sandbox)."""
    from rewards.sandbox import SandboxUnavailable

    try:
        exec(compile(block, name(page), "exec"), {})  # noqa: S102 - the docs' own example code, not model text
    except SandboxUnavailable:
        if "grade_code" not in block or os.environ.get("VERIGRPO_REQUIRE_SANDBOX") == "1":
            raise
        pytest.skip("bubblewrap cannot run here")


def test_the_readme_has_a_python_example():
    assert any(page == README for page, _ in PYTHON_EXAMPLES)


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_json_examples_are_json_lines(page):
    for block in fenced_blocks(text(page), "json"):
        for line in block.splitlines():
            if line.strip():
                assert isinstance(json.loads(line), dict), f"{name(page)}: not a JSON object: {line}"


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_environment_variable_of_ours_exists(page):
    """A ``VERIGRPO_*`` setting the docs name is read somewhere in the code (or set by CI)."""
    code = "\n".join((REPO / file).read_text(errors="ignore") for file in FILES if not file.endswith(".md"))
    unknown = sorted(v for v in set(re.findall(r"VERIGRPO_[A-Z0-9_]+", text(page))) if v not in code)
    assert not unknown, f"{name(page)} names {unknown}, which no code reads"


# --- the README and the docs map --------------------------------------------------------------------


def test_the_readme_stays_short():
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes (limit {README_MAX_BYTES}): move detail to docs/"


def section(markdown: str, heading: str) -> str:
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", prose(markdown), flags=re.S | re.M)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def test_every_docs_page_is_in_the_readme_map():
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", section(text(README), DOCS_MAP_HEADING)))
    assert DOCS, "docs/ has no pages"
    assert linked == {name(page) for page in DOCS}, f"the docs map links {sorted(linked)}"


def test_the_readme_tree_lists_the_top_level():
    """One line per top-level folder in the Layout block, and every name in it exists."""
    block = re.search(r"^## Layout\n+```\n(.*?)^```", text(README), flags=re.S | re.M)
    assert block, "README.md has no Layout block"
    entries = [line.split()[0] for line in block.group(1).splitlines() if line.strip()]
    missing = [entry for entry in entries if not (REPO / entry).exists()]
    assert not missing, f"the README's Layout names {missing}, which do not exist"
    folders = {entry.split("/")[0] for entry in entries if "/" in entry}
    assert folders == set(TOP_LEVEL), f"the Layout lists {sorted(folders)}, the repository has {TOP_LEVEL}"


@pytest.mark.parametrize("page", DOCS, ids=name)
def test_every_docs_page_says_first_what_it_covers(page):
    paragraphs = [p.strip() for p in text(page).split("\n\n") if p.strip()]
    assert paragraphs[0].startswith("# ") and "\n" not in paragraphs[0], f"{name(page)} starts with its title"
    assert not paragraphs[1].startswith(("#", "```", "|", "-")), f"{name(page)}: a paragraph says what it covers"


def anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered."""
    seen: collections.Counter[str] = collections.Counter()
    found = set()
    for title in re.findall(r"^#{1,6} +(.+?) *$", prose(markdown), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_link_resolves(page):
    """Links to repository files and docs pages (and their #anchors) point at something that exists."""
    for target in re.findall(r"\]\(([^)\s]+)\)", prose(text(page))):
        if re.match(r"^[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.is_relative_to(REPO) and resolved.exists(), f"{name(page)} links {target}: no such file"
        if anchor:
            assert resolved.suffix == ".md", f"{name(page)} links {target}: an anchor in a non-Markdown file"
            assert anchor in anchors(text(resolved)), f"{name(page)} links {target}: no such heading"
