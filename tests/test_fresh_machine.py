"""A fresh machine without bubblewrap (issue #52): the README's `make demo` and `make test` install the sandbox's OS
packages first (scripts/install_system_deps.sh: apt-get as root or through passwordless sudo), or stop at once with
one line that says what to run, before the environment and the model (minutes) and long before the tool model's warm
start, which needs the sandbox (it died there with a 30-line ``SandboxUnavailable`` traceback).

No real apt-get runs: each case gets a PATH holding every program of this machine except ``bwrap``, with stand-ins
for ``apt-get``, ``sudo`` and ``id`` that record how they were called (the stand-in apt-get "installs" bubblewrap by
putting a stand-in ``bwrap`` on that PATH)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import REPO

STAND_INS = {
    "apt-get": """#!/bin/sh
echo "apt-get $*" >> "$CALLS"
case " $* " in *" install "*" bubblewrap"*)
    printf '#!/bin/sh\\necho "bubblewrap 0.8.0"\\n' > "$FAKE_BIN/bwrap"; chmod +x "$FAKE_BIN/bwrap" ;;
esac
""",
    "sudo": """#!/bin/sh
echo "sudo $*" >> "$CALLS"
if [ "$1" = "-n" ]; then [ "$SUDO_WITHOUT_PASSWORD" = 1 ] || exit 1; shift; fi
exec "$@"
""",
    "id": """#!/bin/sh
[ "$1" = "-u" ] && echo "$FAKE_UID" || exec /usr/bin/id "$@"
""",
}
HIDDEN = {"bwrap", *STAND_INS}


@pytest.fixture
def machine(tmp_path):
    """(environment, calls file): this machine's programs without bwrap, the stand-ins first on PATH."""
    fake, system = tmp_path / "fake-bin", tmp_path / "system-bin"
    fake.mkdir()
    system.mkdir()
    for name, text in STAND_INS.items():
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    for directory in os.environ["PATH"].split(os.pathsep) + ["/usr/sbin", "/sbin"]:
        if not Path(directory).is_dir():
            continue
        for program in Path(directory).iterdir():
            link = system / program.name
            if program.name not in HIDDEN and not link.exists() and os.access(program, os.X_OK):
                link.symlink_to(program)
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    env = {
        **os.environ,
        "PATH": f"{fake}{os.pathsep}{system}",
        "FAKE_BIN": str(fake),
        "CALLS": str(calls),
        "FAKE_UID": "1000",
        "SUDO_WITHOUT_PASSWORD": "0",
    }
    assert shutil.which("bwrap", path=env["PATH"]) is None  # hidden, as on a fresh machine
    return env, calls


def run(env: dict, *argv: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        list(argv), cwd=REPO, env={**env, **extra}, capture_output=True, text=True, timeout=120, check=False
    )


def apt_calls(calls: Path) -> list[str]:
    return [line for line in calls.read_text().splitlines() if "apt-get" in line]


def test_as_root_it_installs_bubblewrap_with_apt_get(machine):
    env, calls = machine
    result = run(env, "bash", "scripts/install_system_deps.sh", FAKE_UID="0")
    assert result.returncode == 0, result.stderr
    update, install = apt_calls(calls)
    assert update == "apt-get update -qq"
    assert install.startswith("apt-get install -y -qq --no-install-recommends bubblewrap")
    assert "sudo" not in calls.read_text()
    assert result.stdout.splitlines()[-1].startswith("system dependencies present: bubblewrap 0.8.0")


def test_with_passwordless_sudo_it_installs_through_sudo(machine):
    env, calls = machine
    result = run(env, "bash", "scripts/install_system_deps.sh", SUDO_WITHOUT_PASSWORD="1")
    assert result.returncode == 0, result.stderr
    through_sudo = [line for line in apt_calls(calls) if line.startswith("sudo ")]  # (the stand-in logs its own too)
    assert through_sudo[0] == "sudo apt-get update -qq"
    assert (
        through_sudo[1].startswith("sudo env DEBIAN_FRONTEND=noninteractive apt-get install")
        and "bubblewrap" in through_sudo[1]
    )


def test_where_it_cannot_install_it_stops_with_one_line(machine):
    env, calls = machine
    result = run(env, "bash", "scripts/install_system_deps.sh")
    assert result.returncode == 1 and apt_calls(calls) == []
    assert result.stderr.splitlines() == [
        "error: the code verifier's sandbox needs OS packages that are missing (bubblewrap): run `sudo bash "
        "scripts/install_system_deps.sh` (apt-get needs root), then run this command again."
    ]


@pytest.mark.parametrize("target", ["demo", "test"])
def test_the_readme_commands_stop_first_with_that_line(machine, target):
    """`make demo` / `make test` on a machine where nothing can be installed: the line above, and nothing else ran (no
    pip install, no model conversion, no tool model, no pytest)."""
    env, calls = machine
    result = run(env, "make", "--no-print-directory", target)
    assert result.returncode != 0
    assert result.stderr.splitlines()[0].startswith("error: the code verifier's sandbox needs OS packages")
    assert result.stdout == ""  # make echoed no recipe: the first one failed
    assert apt_calls(calls) == []


def test_make_setup_runs_the_os_packages_before_anything_else(machine):
    """The order `make setup` would run (make -n -B: every recipe, nothing executed): the OS packages first, the tool
    model's warm start after them; `make system-deps` as root installs through the same script."""
    env, calls = machine
    planned = run(env, "make", "-n", "-B", "--no-print-directory", "setup").stdout.splitlines()
    assert planned[0] == "bash scripts/install_system_deps.sh"
    assert any("prepare_tool_model.py" in line for line in planned[1:])
    result = run(env, "make", "--no-print-directory", "system-deps", FAKE_UID="0")
    assert result.returncode == 0, result.stderr
    assert any("install" in call and "bubblewrap" in call for call in apt_calls(calls))
