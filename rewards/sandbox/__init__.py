"""Run untrusted programs under bubblewrap, hardened the way measurements on this machine kind showed necessary.

Every run: an unprivileged host uid (65534 when we are root), all namespaces (no network, own pid
tree, no nested user namespaces), a small init as the namespace's pid 1 so the program (pid 2) gets the
signals an ordinary process gets, a read-only root, ``/dev`` and ``/usr``,
a size-capped private ``/tmp`` (the only writable place, with the provider's ``/work``; the provider may
bind a per-sample directory there instead), an empty environment for bwrap *and* the program, files injected from memory
(``--ro-bind-data``; nothing is written to the host disk), a seccomp denylist, rlimits set by
``prlimit`` inside, a time limit in the program's own time (``own_time``: the wall clock less its waits
for a CPU, so no limit fires because the host is loaded) and a host-side output cap. The kill path SIGKILLs the
namespace's init through a pidfd (which takes every process inside with it) and waits for bwrap to
reap it and exit (its process group is killed only if it does not), so nothing outlives a run.

If any of this cannot be set up, :class:`SandboxUnavailable` says what is missing. There is no
fallback that runs code on the host.

- ``__init__`` (this module): ``run_sandboxed``, ``SandboxLimits``, the kill path, ``sandbox_problem`` /
  ``sandbox_available``, ``SandboxUnavailable``
- ``seccomp_policy``: the seccomp denylist, compiled with libseccomp (pyseccomp)
- ``asyncio_seam``: closing a finished subprocess's transport (asyncio has no public call for it)
- ``own_time``: the time limit's clock (wall time less the time the sandbox's processes waited for a CPU)
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rewards.sandbox.asyncio_seam import close_subprocess_transport
from rewards.sandbox.own_time import OwnClock
from rewards.sandbox.seccomp_policy import SeccompUnavailable, seccomp_bpf

SANDBOX_UID = 65534  # "nobody": the host uid sandboxes run as when verigrpo itself runs as root
PRLIMIT = "/usr/bin/prlimit"
POLL_S = 0.2  # how often a running sandbox's processes are read (own_time.py)
INIT = "/usr/bin/timeout"  # GNU coreutils, run with no time limit as the namespace's pid 1 (see _init_prefix)
SETPRIV = "/usr/bin/setpriv"
# What the sandbox sees of the host: the system's programs and libraries, read-only. Nothing else.
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ENVIRONMENT = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the program in it): never to be scored as the program's failure."""


class SandboxUnavailable(SandboxError):
    """Isolation cannot be established here. Code is never run without it."""


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits. The defaults suit unit tests of small functions."""

    wall_s: float = 5.0  # the program's own time (wall clock less its waits for a CPU: own_time.py), host SIGKILL
    cpu_s: int = 5  # CPU seconds per process (RLIMIT_CPU; see cpu_rlimit)
    memory_mb: int = 1024  # RLIMIT_AS, per process (no cgroups here)
    processes: int = 32  # RLIMIT_NPROC inside the sandbox's own user namespace
    file_size_mb: int = 16  # RLIMIT_FSIZE
    open_files: int = 64  # RLIMIT_NOFILE
    tmp_size_mb: int = 32  # size of the private /tmp (tmpfs)
    output_bytes: int = 1 << 20  # per captured stream; more and the run is killed

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            if not value > 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, got {value!r}")


@dataclass
class SandboxResult:
    """What came back from one run. ``returncode`` is None when the host killed it."""

    returncode: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    starved: bool = False  # stopped by own_time's hard stop before its own time was up: the host's doing
    output_limited: bool = False  # a stream passed SandboxLimits.output_bytes
    elapsed_s: float = 0.0
    waited_s: float = 0.0  # wall time given back for waiting on a CPU (own_time.py)
    flags: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- availability


def sandbox_python() -> str:
    """The interpreter sandboxes run (``VERIGRPO_SANDBOX_PYTHON``, default /usr/bin/python3), read at each use;
    the availability probe checks the one set when it first runs (it is cached per process)."""
    return os.environ.get("VERIGRPO_SANDBOX_PYTHON", "/usr/bin/python3")


@functools.cache
def _bwrap() -> str | None:
    """bwrap's absolute path (it is exec'd with an empty environment, so no PATH lookup later)."""
    return shutil.which("bwrap")


@functools.cache
def _static_problem() -> str | None:
    """What is missing on this machine before anything is tried (cached per process)."""
    if _bwrap() is None:
        return "bubblewrap (`bwrap`) is not installed: `apt-get install bubblewrap` (Debian/Ubuntu) or `dnf install bubblewrap`."
    if not os.access(PRLIMIT, os.X_OK) or (os.geteuid() == 0 and not os.access(SETPRIV, os.X_OK)):
        return f"{PRLIMIT} or {SETPRIV} is missing: `apt-get install util-linux`."
    if not os.access(INIT, os.X_OK):
        return f"{INIT} (the sandbox's init) is missing: `apt-get install coreutils`."
    python = sandbox_python()
    if not os.access(python, os.X_OK) or not python.startswith("/usr/"):
        return (
            f"the sandbox runs {python}, which must be an executable under /usr (the only host tree the "
            "sandbox sees): `apt-get install python3-minimal`, or set VERIGRPO_SANDBOX_PYTHON."
        )
    try:
        seccomp_bpf()
    except SeccompUnavailable as exc:
        return str(exc)
    return None


_HOW_TO_ENABLE = (
    "Unprivileged user namespaces look blocked. On Ubuntu >= 23.10: `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` "
    "or an AppArmor profile for /usr/bin/bwrap; elsewhere `sysctl -w kernel.unprivileged_userns_clone=1` and "
    "`user.max_user_namespaces > 0`; inside Docker run with `--security-opt seccomp=unconfined --security-opt "
    "apparmor=unconfined`."
)


@functools.cache
def _probe() -> str | None:
    """Run one trivial sandbox; None when isolation works, else why not."""
    problem = _static_problem()
    if problem:
        return problem
    seccomp_fd, info_read, info_write = _memfd("seccomp", seccomp_bpf()), *os.pipe()
    try:
        cmd = bwrap_command([sandbox_python(), "-I", "-S", "-c", "pass"], {}, SandboxLimits(), seccomp_fd, info_write)
        result = subprocess.run(cmd, pass_fds=(seccomp_fd, info_write), env={}, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start a sandbox ({exc})."
    finally:
        for fd in (seccomp_fd, info_read, info_write):
            os.close(fd)
    if result.returncode != 0:
        detail = result.stderr.decode(errors="replace").strip() or f"exit status {result.returncode}"
        return f"bubblewrap could not start a sandbox ({detail}). {_HOW_TO_ENABLE}"
    return None


def ensure_available() -> None:
    """Raise :class:`SandboxUnavailable` (with the fix) unless sandboxes work here. Cheap after the first call."""
    problem = _probe()
    if problem:
        raise SandboxUnavailable(problem)


def sandbox_problem() -> str | None:
    """Why sandboxes cannot run here (with the fix), or None when they can. Cached after the first call."""
    return _probe()


def sandbox_available() -> bool:
    return _probe() is None


# --------------------------------------------------------------------------- command line


def _drop_privileges() -> list[str]:
    """A prefix that starts bwrap as an unprivileged host user when we are root.

    bwrap started by root maps the sandbox user to host uid 0. ``setpriv`` (an exec) rather than
    Popen's ``user=``: changing uid in the child stops CPython from using vfork, and fork() of a
    trainer holding gigabytes costs ~130 ms per sandbox (measured with a 4 GB process) instead of ~1 ms.
    """
    if os.geteuid() != 0:
        return []
    ids = [f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups"]
    return [SETPRIV, *ids, "--inh-caps=-all", "--bounding-set=-all", "--"]


def _system_mounts() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


def _init_prefix() -> list[str]:
    """The namespace's pid 1: GNU ``timeout`` with no time limit, so the program runs as an ordinary process.

    The kernel drops every signal a namespace's pid 1 has no handler for, even one it sends itself: with
    the program as pid 1 (``bwrap --as-pid-1`` alone), ``sh -c 'kill -TERM $$'`` exited 0 and
    ``signal.alarm`` with the default action never ended a program. ``timeout 0`` forks the program (pid 2),
    forwards SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGALRM sent to pid 1 on to it (``--foreground``: to it
    alone), waits for it and exits with its status, 128 + N when signal N killed it (what bash reports).
    When it exits the kernel kills whatever else is left in the namespace, as before.

    Not bubblewrap's own init (dropping ``--as-pid-1``): bwrap's outer process exits as soon as the
    program does, before its init, which is then re-parented to the host's pid 1 (30 of 30 runs measured,
    2026-12-03): a zombie for good in a container whose pid 1 is the trainer. ``timeout`` stays bwrap's
    direct child, reaped by it. It is not under the rlimits (``prlimit`` comes after it), runs no code of
    the program's and holds only the stdin, stdout and stderr it passes on.
    """
    return [INIT, "--foreground", "0"]


def cpu_rlimit(limits: SandboxLimits) -> int:
    """RLIMIT_CPU in seconds: ``cpu_s``, or one second more when ``cpu_s >= wall_s``.

    A process running alone never has more CPU time than own time (``own_time``), so with ``cpu_s >= wall_s``
    the time limit comes first anyway. At ``cpu_s`` exactly the kernel (exact) and the host (which wakes late
    on a loaded machine) would race to stop a program that only computes, and which of them did (a timeout,
    or death by SIGKILL) would depend on the load; one second later the kernel is only a backstop. A program
    with threads or children (back on the wall clock) may spend that one more CPU second per process.
    """
    return limits.cpu_s + 1 if limits.cpu_s >= limits.wall_s else limits.cpu_s


def _rlimit_prefix(limits: SandboxLimits) -> list[str]:
    return [
        PRLIMIT,
        f"--cpu={cpu_rlimit(limits)}",  # soft = hard: the kernel SIGKILLs the program at the limit (no SIGXCPU first)
        f"--as={limits.memory_mb << 20}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_size_mb << 20}",
        f"--nofile={limits.open_files}",
        "--core=0",
        "--",
    ]


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(name)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def bwrap_command(
    argv: Sequence[str],
    file_fds: Mapping[str, int],
    limits: SandboxLimits,
    seccomp_fd: int,
    info_fd: int,
    workdir: str | None = None,
    cwd: str = "/tmp",
    env: Mapping[str, str] | None = None,
    tmpdir: str | None = None,
) -> list[str]:
    """The full bwrap invocation (exposed so tests and docs can show exactly what runs).

    ``tmpdir``: a host directory mounted read-write at ``/tmp`` instead of a fresh capped tmpfs (the
    Inspect provider's per-sample ``/tmp``)."""
    cmd = [
        *_drop_privileges(),
        _bwrap() or "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        *_system_mounts(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    if tmpdir is None:
        cmd += ["--size", str(limits.tmp_size_mb << 20), "--tmpfs", "/tmp"]
    else:
        cmd += ["--bind", tmpdir, "/tmp"]
    if workdir is not None:
        cmd += ["--bind", workdir, "/work"]
    for path, fd in file_fds.items():
        cmd += ["--ro-bind-data", str(fd), path]
    # Last, once everything is mounted: bwrap's root and /dev are tmpfs in host memory with no size cap
    # (a solution wrote 200 MiB to /fill*). Read-only, they leave /tmp (and /work) the only writable
    # places; a remount is not recursive, so those mounts stay writable. /dev/null and the other device
    # nodes stay writable (a read-only mount does not stop writes to devices); /dev/shm does not, so
    # POSIX shared memory and semaphores (multiprocessing locks and pools) are unavailable inside.
    cmd += ["--remount-ro", "/dev", "--remount-ro", "/"]
    cmd += ["--chdir", cwd, "--clearenv"]
    for key, value in {**ENVIRONMENT, **(env or {})}.items():
        cmd += ["--setenv", key, value]
    cmd += ["--seccomp", str(seccomp_fd), "--info-fd", str(info_fd), "--", *_init_prefix(), *_rlimit_prefix(limits)]
    return [*cmd, *argv]


# --------------------------------------------------------------------------- one running sandbox


class Sandbox:
    """A started sandbox: its bwrap process and (once known) a pidfd on the namespace's init."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        info_reader: asyncio.StreamReader,
        info_transport: asyncio.BaseTransport,
    ) -> None:
        self.process = process
        self._info_reader = info_reader
        self._info_transport = info_transport
        self._init_pidfd: int | None = None
        self.init_pid: int | None = None  # the namespace's pid 1 as the host numbers it

    async def read_info(self, timeout: float) -> bool:
        """Read bwrap's ``--info-fd`` JSON and hold the init process by pidfd. False if bwrap gave none."""
        try:
            raw = await asyncio.wait_for(self._info_reader.read(), timeout)
        except asyncio.TimeoutError:
            return False
        if not raw:
            return False
        pid = json.loads(raw)["child-pid"]
        with contextlib.suppress(ProcessLookupError):
            self._init_pidfd = os.pidfd_open(pid)
            self.init_pid = pid
        return True

    def kill(self) -> None:
        """SIGKILL the namespace's init: the kernel kills everything inside, and bwrap then reaps it and exits.

        Only without a pidfd (bwrap never reported the init) is bwrap's own group killed here: killing
        bwrap first would orphan the init to the host's pid 1 as a zombie.
        """
        if self._init_pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._init_pidfd, signal.SIGKILL)
        else:
            self._kill_bwrap()

    def _kill_bwrap(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def reap(self) -> None:
        """Kill and wait for bwrap, even while the caller is being cancelled."""
        self.kill()
        try:
            await asyncio.shield(self._wait_for_bwrap())
        finally:
            if self._init_pidfd is not None:
                os.close(self._init_pidfd)
                self._init_pidfd = None
            self._info_transport.close()
            close_subprocess_transport(self.process)

    async def _wait_for_bwrap(self) -> None:
        try:
            await asyncio.wait_for(self.process.wait(), 2.0)
        except asyncio.TimeoutError:
            self._kill_bwrap()  # last resort
            await self.process.wait()


async def start(
    argv: Sequence[str],
    files: Mapping[str, bytes],
    limits: SandboxLimits,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    pass_fds: Sequence[int] = (),
    workdir: str | None = None,
    cwd: str = "/tmp",
    env: Mapping[str, str] | None = None,
    tmpdir: str | None = None,
) -> Sandbox:
    """Start ``argv`` in a new sandbox (``stdin``/``stdout``/``stderr``: fds, or ``subprocess.PIPE``).

    ``files`` maps sandbox paths to contents, injected read-only from memory.
    """
    own_fds: list[int] = []
    try:
        seccomp_fd = _memfd("seccomp", seccomp_bpf())
        own_fds.append(seccomp_fd)
        file_fds = {}
        for path, data in files.items():
            file_fds[path] = _memfd("file", data)
            own_fds.append(file_fds[path])
        info_read, info_write = os.pipe()
        own_fds.append(info_write)
        cmd = bwrap_command(argv, file_fds, limits, seccomp_fd, info_write, workdir, cwd, env, tmpdir)
        loop = asyncio.get_running_loop()
        info_reader = asyncio.StreamReader(limit=1 << 16)
        try:
            process = await asyncio.create_subprocess_exec(
                *cmd,
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                stdout=stdout if stdout is not None else subprocess.DEVNULL,
                stderr=stderr if stderr is not None else subprocess.DEVNULL,
                pass_fds=(*own_fds, *pass_fds),
                env={},  # bwrap's own environment is readable inside as /proc/1/environ otherwise
                start_new_session=True,
                close_fds=True,
            )
        except FileNotFoundError as exc:
            os.close(info_read)
            raise SandboxUnavailable(_static_problem() or str(exc)) from exc
        info_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(info_reader), os.fdopen(info_read, "rb", 0)
        )
        return Sandbox(process, info_reader, info_transport)
    finally:
        for fd in own_fds:
            os.close(fd)


async def drain(stream: asyncio.StreamReader | None, cap: int) -> tuple[bytes, bool]:
    """Read a stream to EOF keeping at most ``cap`` bytes; True when it had more (the caller kills)."""
    if stream is None:
        return b"", False
    kept = bytearray()
    while chunk := await stream.read(65536):
        kept += chunk
        if len(kept) > cap:
            return bytes(kept[:cap]), True
    return bytes(kept), False


async def _run(
    argv: Sequence[str],
    files: Mapping[str, bytes],
    limits: SandboxLimits,
    stdin: bytes | None,
    workdir: str | None = None,
    cwd: str = "/tmp",
    env: Mapping[str, str] | None = None,
    tmpdir: str | None = None,
) -> SandboxResult:
    ensure_available()
    started = time.monotonic()
    stdin_fd = _memfd("stdin", stdin) if stdin is not None else None
    try:
        box = await start(
            argv,
            files,
            limits,
            stdin=stdin_fd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            workdir=workdir,
            cwd=cwd,
            env=env,
            tmpdir=tmpdir,
        )
    finally:
        if stdin_fd is not None:
            os.close(stdin_fd)
    result = SandboxResult(returncode=None)
    clock = OwnClock(started, limits.wall_s)
    try:
        if not await box.read_info(limits.wall_s):
            await box.reap()
            detail = (await drain(box.process.stderr, 4096))[0].decode(errors="replace").strip()
            raise SandboxError(f"bubblewrap did not start the sandbox (exit {box.process.returncode}): {detail}")
        streams = [
            asyncio.ensure_future(drain(s, limits.output_bytes)) for s in (box.process.stdout, box.process.stderr)
        ]
        waiting = {*streams, asyncio.ensure_future(box.process.wait())}
        clock.watch(box.init_pid, timed=True)
        while waiting:
            if any(t.done() and t.result()[1] for t in streams):
                result.output_limited = True
                break
            clock.sample()
            if clock.reached(limits.wall_s):
                result.timed_out = True
                result.starved = clock.starved(limits.wall_s)
                break
            timeout = min(clock.until(limits.wall_s), POLL_S)
            _, waiting = await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if waiting:
            box.kill()  # timed out or too much output: the streams end once everything inside is dead
        else:
            result.returncode = box.process.returncode
        (result.stdout, over_out), (result.stderr, over_err) = [await t for t in streams]
        result.output_limited |= over_out or over_err
    finally:
        await box.reap()
    if result.output_limited:
        result.returncode = None
    result.elapsed_s = time.monotonic() - started
    result.waited_s = clock.given_back_s
    if result.starved:
        result.flags.append(clock.starvation())
    elif result.timed_out:
        result.flags.append(f"timeout after {limits.wall_s:g} s")
    if result.output_limited:
        result.flags.append(f"output over {limits.output_bytes} bytes")
    return result


async def run_sandboxed(
    argv: Sequence[str],
    files: Mapping[str, bytes] | None = None,
    limits: SandboxLimits | None = None,
    stdin: bytes | None = None,
    workdir: str | None = None,
    cwd: str = "/tmp",
    env: Mapping[str, str] | None = None,
    tmpdir: str | None = None,
) -> SandboxResult:
    """Run ``argv`` isolated and collect its output. Raises :class:`SandboxUnavailable`, never runs unisolated.

    ``workdir``: a host directory mounted read-write at ``/work`` (for the Inspect provider and the python
    tool; the verifier passes code as ``files``). ``tmpdir``: one mounted at ``/tmp`` instead of a fresh
    capped tmpfs (the Inspect provider's per-sample ``/tmp``).
    """
    return await _run(
        argv, files or {}, limits or SandboxLimits(), stdin, workdir=workdir, cwd=cwd, env=env, tmpdir=tmpdir
    )


def run_sandboxed_sync(argv: Sequence[str], **kwargs) -> SandboxResult:
    """Blocking :func:`run_sandboxed` for scripts and threads without an event loop."""
    return asyncio.run(run_sandboxed(argv, **kwargs))


def python_argv(script: str, *args: str) -> list[str]:
    """The sandbox's Python, isolated from env and user site (``-I``) and without site-packages (``-S``)."""
    return [sandbox_python(), "-I", "-S", script, *args]


def sandbox_dir_owner_ids() -> tuple[int, int]:
    """Host uid/gid a writable ``workdir`` must belong to so the sandbox user can write it."""
    return (SANDBOX_UID, SANDBOX_UID) if os.geteuid() == 0 else (os.geteuid(), os.getegid())


__all__ = [
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "ensure_available",
    "run_sandboxed",
    "run_sandboxed_sync",
    "sandbox_available",
    "python_argv",
]
