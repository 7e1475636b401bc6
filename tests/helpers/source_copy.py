"""Copy the project's sources (what git would ship) for a build test: setuptools writes build/ and *.egg-info next to
the sources, so builds run on a copy. Copying the working tree instead picked up whatever lived in it, and in CI that
includes Inspect's control sockets under .local/ (XDG_DATA_HOME), which shutil cannot copy."""

import shutil
import subprocess
from pathlib import Path


def copy_sources(repo: Path, dest: Path, *, leave_out: tuple[str, ...] = ()) -> Path:
    """Copy the files git tracks or would track (not ignored) from `repo` to `dest`, leaving out top-level entries
    named in `leave_out`; returns `dest`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for name in filter(None, listed):
        source = repo / name
        if Path(name).parts[0] in leave_out or not source.is_file():  # deleted but not staged, or a submodule
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return dest
