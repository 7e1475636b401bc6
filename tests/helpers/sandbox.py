"""Which sandbox processes this test run started and left behind (the ``needs_sandbox`` fixture's check)."""

import contextlib
import os
from pathlib import Path


def become_subreaper() -> None:
    """Orphans of this test process's descendants are re-parented to it, not to the host's pid 1, so a
    sandbox process that escaped its bwrap still counts as this run's (PR_SET_CHILD_SUBREAPER)."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _process_table() -> dict[int, tuple[int, int | None, str, str]]:
    """pid -> (parent pid, real uid, state, name) of every process on the machine."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line)
        except OSError:
            continue  # gone meanwhile
        uid = int(fields["Uid"].split()[0]) if "Uid" in fields else None
        table[int(entry.name)] = (int(fields["PPid"]), uid, fields["State"].strip(), fields["Name"].strip())
    return table


def _in_another_pid_namespace(pid: int) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") != os.readlink("/proc/self/ns/pid")
    except OSError:
        return False


def sandbox_processes(root: int | None = None) -> list[str]:
    """Sandbox processes (bwrap and everything inside) that descend from ``root`` (this process): must be
    none after any run. Only this run's: other test runs and other bwrap users on the machine are not
    descendants, while orphans of this run's are (it is a child subreaper, see ``needs_sandbox``).

    Zombies count (a process left for the host's pid 1 to reap is the bug); those re-parented to this
    process are reaped once reported, so one leak fails one test, not every later one.
    """
    from rewards.sandbox import SANDBOX_UID

    root = os.getpid() if root is None else root
    table = _process_table()
    left = []
    for pid, (parent, uid, state, name) in table.items():
        ancestor, hops = parent, 0
        while ancestor not in (root, 0, 1) and ancestor in table and hops < 1000:
            ancestor, hops = table[ancestor][0], hops + 1
        if pid == root or ancestor != root:
            continue
        sandboxed = uid == SANDBOX_UID if os.geteuid() == 0 else (name == "bwrap" or _in_another_pid_namespace(pid))
        if sandboxed:
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()[:120]
            except OSError:
                command = b"?"
            left.append(f"{pid} {name} ({state}): {command!r}")
            if parent == os.getpid() and state.startswith("Z"):
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
    return left
