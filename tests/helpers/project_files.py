"""The project's files as git sees them, and a copy of them for build tests.

Tests that read or copy "the repository" take git's list (tracked or new, not ignored), never the working tree: the
tree also holds runs/, models/, caches and, in CI (XDG_DATA_HOME inside the checkout), Inspect's live control
sockets under .local/, which shutil cannot copy. Builds run on a copy because setuptools writes build/ and
*.egg-info next to the sources."""

import fnmatch
import shutil
import subprocess
from pathlib import Path


def project_files(repo: Path) -> list[str]:
    """``repo``'s files as git sees them (tracked or new, not ignored), relative, regular files only."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: the files .gitignore does not name
        ignored = [line.strip().rstrip("/") for line in (repo / ".gitignore").read_text().splitlines()]
        ignored = [pattern for pattern in ignored if pattern and not pattern.startswith(("#", "!"))]
        listing = [
            path.relative_to(repo).as_posix()
            for path in repo.rglob("*")
            if not any(fnmatch.fnmatch(part, p) for part in path.relative_to(repo).parts for p in ignored)
        ]
    # is_file: not a file deleted but not yet staged, a submodule, or (without git) a socket or a folder
    return [name for name in listing if name and (repo / name).is_file()]


def copy_sources(repo: Path, dest: Path, *, leave_out: tuple[str, ...] = ()) -> Path:
    """Copy ``project_files(repo)`` to ``dest``, leaving out top-level entries named in ``leave_out``; ``dest``."""
    for name in project_files(repo):
        if Path(name).parts[0] in leave_out:
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)
    return dest
