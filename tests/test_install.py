"""The package as a user gets it: ``pyproject.toml``'s package list is the tree's packages, the wheel built from it
installs into a fresh virtual environment and works from outside the checkout, and every test path a source file
names exists (a moved test must not leave a pointer to nowhere)."""

import re
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

import tomllib

from tests.helpers import REPO, SOURCE_PACKAGES
from tests.helpers.project_files import copy_sources

PLUGIN_DIR = "evals/inspect_plugin"  # installed as the top-level package `verigrpo` (see its docstring)


def tracked_inits() -> list[Path]:
    """Every tracked ``__init__.py``, relative to the repository."""
    listed = subprocess.run(["git", "ls-files", "*__init__.py"], cwd=REPO, capture_output=True, text=True, check=True)
    return [Path(path) for path in listed.stdout.split()]


def tree_packages() -> set[str]:
    """Every tracked folder with an ``__init__.py`` under the source packages, as a dotted name (tracked: a checkout
    may hold untracked package links, such as a worktree's ``verigrpo -> evals/inspect_plugin``)."""
    found = set()
    for init in tracked_inits():
        folder = init.parent.as_posix()
        if init.parts[0] in SOURCE_PACKAGES:
            found.add("verigrpo" if folder == PLUGIN_DIR else folder.replace("/", "."))
    return found


def test_the_package_list_is_the_tree():
    """setuptools' automatic discovery cannot also map evals/inspect_plugin to `verigrpo`, so the list is by hand;
    a package added to the tree and not to the list (train.gpu_check was) would be missing from every wheel."""
    tool = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(tool["packages"]) == tree_packages()
    tops = {init.parts[0] for init in tracked_inits() if len(init.parts) == 2} - {"tests"}
    assert tops == set(SOURCE_PACKAGES), "a new top-level package belongs in tests/helpers' SOURCE_PACKAGES"
    assert tool["package-dir"] == {"verigrpo": PLUGIN_DIR}


def test_every_test_path_a_source_file_names_exists():
    named = {}
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if name.endswith((".py", ".toml", ".sh", ".yaml", ".cfg")) or name in ("Makefile", ".ci/run"):
            for path in re.findall(r"\btests/[\w/]+\.py\b", (REPO / name).read_text(errors="replace")):
                named.setdefault(path, set()).add(name)
    missing = {path: sorted(where) for path, where in named.items() if not (REPO / path).exists()}
    assert not missing, f"test paths named but not in the tree: {missing}"


# From outside the checkout, with only the installed wheel providing verigrpo's packages. Each line is one check.
INSTALLED_CHECKS = """
import importlib, sys, pathlib
site = pathlib.Path(sys.argv[1])
for name in sys.argv[2].split(","):
    module = importlib.import_module(name)
    assert pathlib.Path(module.__file__).is_relative_to(site), (name, module.__file__)
from inspect_ai._util.registry import registry_lookup
for kind, name in [("scorer", "verigrpo/math_verifier"), ("scorer", "verigrpo/unit_test_scorer"),
                   ("scorer", "verigrpo/domain_scorer"),
                   ("metric", "verigrpo/group_mean"), ("metric", "verigrpo/pass_at_G"),
                   ("sandboxenv", "verigrpo/bwrap"), ("modelapi", "verigrpo/verigrpo"),
                   ("modelapi", "verigrpo/verigrpo-policy")]:
    assert registry_lookup(kind, name) is not None, (kind, name)
from problems.domains import DOMAINS, reward_choices
assert list(DOMAINS)[:2] == ["math", "code"] and reward_choices() == ["code_tests", "correctness", "format"]
print("ok")
"""


def test_the_wheel_installs_and_works_outside_the_checkout(tmp_path):
    """Build the wheel, install it (no deps) into a fresh venv whose dependencies are this environment's (a .pth to
    its site-packages, so torch is not installed again), then from a directory outside the checkout: import every
    package, the two entry points' --help and Inspect's view of the installed tasks and registered names."""
    source = copy_sources(REPO, tmp_path / "src", leave_out=("tests", "docs"))
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip"]
    run = dict(capture_output=True, text=True, timeout=600)
    built = subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels, source], **run)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = wheels.glob("verigrpo-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True, **run)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, **run
        ).stdout.strip()
    )
    (site / "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    installed = subprocess.run([*pip, "--python", python, "install", "--no-deps", "-q", wheel], **run)
    assert installed.returncode == 0, installed.stderr[-2000:]

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}

    def in_venv(*args: str, cwd: Path = outside) -> subprocess.CompletedProcess:
        return subprocess.run([python, *args], cwd=cwd, env=env, **run)

    packages = ",".join(sorted(tree_packages()))
    checks = in_venv("-c", INSTALLED_CHECKS, str(site), packages)
    assert checks.stdout.strip() == "ok", checks.stderr[-3000:]

    grpo = in_venv("-m", "train.grpo", "--help")
    assert grpo.returncode == 0 and "--config" in grpo.stdout, grpo.stderr[-3000:]
    gpu = in_venv("-c", "import sys, train.grpo; from train.gpu_check.run import cli; sys.exit(cli(['--help']))")
    assert gpu.returncode == 0 and "--memory-cap" in gpu.stdout, gpu.stderr[-3000:]

    tasks = in_venv("-m", "inspect_ai", "list", "tasks", "evals", cwd=site)  # Inspect takes relative paths only
    assert tasks.returncode == 0, tasks.stderr[-3000:]
    assert tasks.stdout.split() == [
        "evals/code_task.py@code_verified",
        "evals/domain_task.py@domain_verified",
        "evals/math_task.py@math_verified",
    ]


def test_the_build_copy_takes_what_git_ships_and_skips_sockets(tmp_path):
    """In CI, XDG_DATA_HOME is inside the checkout and Inspect keeps control sockets there while an eval runs; a
    copy of the working tree failed on them (shutil cannot copy a socket). The copy takes tracked and untracked,
    not ignored, files only."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / ".local" / "share").mkdir(parents=True)
    (repo / ".gitignore").write_text(".local/\n")
    (repo / "pkg" / "tracked.py").write_text("x = 1\n")
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run(["git", "-C", repo, "add", "."], check=True)
    (repo / "pkg" / "new.py").write_text("y = 2\n")  # not yet added: a build from the working tree includes it
    (repo / "tests").mkdir()
    (repo / "tests" / "t.py").write_text("")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(repo / ".local" / "share" / "control.sock"))
    try:
        copied = copy_sources(repo, tmp_path / "copy", leave_out=("tests",))
    finally:
        listener.close()
    files = sorted(str(p.relative_to(copied)) for p in copied.rglob("*") if p.is_file())
    assert files == [".gitignore", "pkg/new.py", "pkg/tracked.py"]
