"""An Inspect sandbox provider on the verifier's bubblewrap isolation: ``sandbox="bwrap"``.

Each sample gets two private host directories, mounted read-write at ``/work`` (the working directory)
and ``/tmp`` in a fresh sandbox per ``exec`` — same hardening as the code verifier (no network, no host
files, empty environment, seccomp, rlimits, a small init as pid 1 so the command gets the signals an
ordinary process gets). Both persist across the sample's calls, as a container's would. ``read_file``
and ``write_file`` also run inside a sandbox, so a symlink the model plants can never make the host read
or write its own files. Registered as ``verigrpo/bwrap``; Inspect matches the bare name, so a task says
``sandbox="bwrap"``. It passes Inspect's own conformance suite (``inspect_ai.util._sandbox.self_check``,
run by tests/evals/test_sandbox_conformance.py) but for one deliberate difference, ``user=``. It lives with the
python tool: the tool's Inspect side (``python_tool/inspect_tool.py``) runs each call with the sample's ``/work``.

What differs from Inspect's docker provider:

- no images or services: the sandbox sees the host's ``/usr`` (and the ``/bin``, ``/lib*`` links),
  read-only, and nothing else of the host. ``/etc`` is the provider's own, not the host's: ``passwd``,
  ``group`` (root, nobody and the sandbox user), ``hostname``, ``hosts`` and ``nsswitch.conf`` (``ETC``),
  so ``whoami``, ``ps`` and ``id`` name users; no certificates, no package database, no host config.
- ``user`` must be None: every command runs as one unprivileged user with no capabilities, so
  ``exec(..., user=...)`` raises ``SandboxUserUnsupportedError`` (the suite's ``test_exec_as_user`` is
  its one expected failure) and nothing can install packages or add users.
- each ``exec`` is a fresh sandbox: only files in ``/work`` and ``/tmp`` persist; no process outlives
  its call (a background server started in one call is gone in the next).
- a timed-out command is not retried (it would time out again).
- the root and ``/dev`` (``/dev/shm`` included) are read-only, so ``/work`` and ``/tmp`` are the only
  writable places; POSIX shared memory and semaphores (``multiprocessing`` pools) do not work.
- ``/work`` and ``/tmp`` live in the host's ``/tmp`` with a 1 GiB cap per file but no cap on their
  total size (that would need a filesystem per sample). ``/tmp`` was a 512 MiB tmpfs lasting one exec
  until issue #43: agentic tools and scorers write ``/tmp`` in one call and read it in the next.
- executing a file that is not executable raises ``PermissionError`` (recognised by ``prlimit``'s own
  message for the command's first word, as docker's provider recognises its wrapper's); a missing
  program is an ordinary result, exit 127, as with docker.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import math
import os
import shutil
import tempfile
from typing import Literal, overload

from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxEnvironment,
    SandboxEnvironmentConfigType,
    SandboxEnvironmentLimits,
    SandboxUnavailableError,
    SandboxUserUnsupportedError,
)
from inspect_ai.util import concurrency as concurrency_limit

from rewards import sandbox

WORKDIR = "/work"
DEFAULT_EXEC_TIMEOUT_S = 600.0  # when the caller gives none; every exec has a wall limit
# Roomier than the verifier's limits: agentic tools run shells, compilers and test suites. No tmp_size_mb:
# /tmp is the sample's directory, not a tmpfs, and has the same caps as /work (file_size_mb per file).
PROVIDER_LIMITS = sandbox.SandboxLimits(
    wall_s=DEFAULT_EXEC_TIMEOUT_S, cpu_s=int(DEFAULT_EXEC_TIMEOUT_S), memory_mb=4096, processes=256,
    file_size_mb=1024, open_files=1024,
)  # fmt: skip

# The file programs report failures as exit statuses: an errno value, read back by _raise_for.
EXIT_NOT_FOUND, EXIT_IS_DIRECTORY, EXIT_DENIED, EXIT_TOO_LARGE = errno.ENOENT, errno.EISDIR, errno.EACCES, errno.EFBIG
_EXIT_ERRORS = {EXIT_NOT_FOUND: FileNotFoundError, EXIT_IS_DIRECTORY: IsADirectoryError, EXIT_DENIED: PermissionError}

_WRITE = f"""import os, sys
path = sys.argv[1]
parent = os.path.dirname(path)
try:
    if parent:
        os.makedirs(parent, exist_ok=True)
    handle = open(path, "wb")
except IsADirectoryError:
    sys.exit({EXIT_IS_DIRECTORY})
except OSError:
    sys.exit({EXIT_DENIED})
with handle:
    handle.write(sys.stdin.buffer.read())
"""
_READ = f"""import os, sys
path, limit = sys.argv[1], int(sys.argv[2])
try:
    handle = open(path, "rb")
except FileNotFoundError:
    sys.exit({EXIT_NOT_FOUND})
except IsADirectoryError:
    sys.exit({EXIT_IS_DIRECTORY})
except OSError:
    sys.exit({EXIT_DENIED})
with handle:
    if os.path.isdir(path):
        sys.exit({EXIT_IS_DIRECTORY})
    if os.fstat(handle.fileno()).st_size > limit:
        sys.exit({EXIT_TOO_LARGE})
    sys.stdout.buffer.write(handle.read())
"""


def _etc() -> dict[str, bytes]:
    """The sandbox's ``/etc``: made here, nothing of the host's. The sandbox user keeps its host uid (65534,
    "nobody", when we run as root; 65534 is also the id the user namespace shows for host files it does not map)."""
    uid, gid = sandbox.sandbox_dir_owner_ids()
    users = {0: ("root", 0, "/root"), 65534: ("nobody", 65534, "/nonexistent")}
    users.setdefault(uid, ("sandbox", gid, "/tmp"))
    passwd = "".join(f"{name}:x:{u}:{g}:{name}:{home}:/bin/sh\n" for u, (name, g, home) in users.items())
    groups = {0: "root", 65534: "nogroup"}
    groups.setdefault(gid, "sandbox")
    group = "".join(f"{name}:x:{g}:\n" for g, name in groups.items())
    return {
        "/etc/passwd": passwd.encode(),
        "/etc/group": group.encode(),
        "/etc/hostname": b"sandbox\n",
        "/etc/hosts": b"127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n::1\tlocalhost\n",
        "/etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files\n",
    }


ETC = _etc()


def _inside(path: str | None) -> str:
    if not path:
        return WORKDIR
    return path if path.startswith("/") else f"{WORKDIR}/{path}"


def _exec_refused(cmd: list[str], result: sandbox.SandboxResult) -> bool:
    """True when ``prlimit`` (the last step before the command) could not exec ``cmd[0]`` for lack of permission.

    Its message, not the exit status alone: a command may exit 126 itself. A command that writes this exact
    line about its own name to stderr and exits 126 is read the same way (only it is fooled)."""
    first = result.stderr.split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return result.returncode == 126 and first == f"prlimit: failed to execute {cmd[0]}: Permission denied"


class BwrapSandboxEnvironment(SandboxEnvironment):
    """One sample's sandbox: two host directories that every exec mounts at /work and /tmp."""

    def __init__(self, root: str) -> None:
        super().__init__()
        self.root = root  # removed at cleanup, with both
        self.directory = os.path.join(root, "work")  # /work (the python tool mounts it too)
        self.tmp_directory = os.path.join(root, "tmp")  # /tmp

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        sandbox.ensure_available()
        root = tempfile.mkdtemp(prefix="verigrpo-bwrap-", dir="/tmp")  # the sandbox user must reach it
        environment = cls(root)
        # /tmp's usual mode inside; on the host the 0700 root keeps every other user out of both
        for path, mode in ((root, 0o700), (environment.directory, 0o700), (environment.tmp_directory, 0o1777)):
            os.makedirs(path, exist_ok=True)
            os.chown(path, *sandbox.sandbox_dir_owner_ids())
            os.chmod(path, mode)
        return {"default": environment}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            shutil.rmtree(environment.as_type(cls).root, ignore_errors=True)

    async def exec(
        self,
        cmd: list[str],
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        user: str | None = None,
        timeout: int | None = None,
        timeout_retry: bool = True,
        concurrency: bool = True,
    ) -> ExecResult[str]:
        if user is not None:
            raise SandboxUserUnsupportedError(
                f"the bwrap sandbox runs every command as one unprivileged user, not {user!r}"
            )
        wall = float(timeout) if timeout else DEFAULT_EXEC_TIMEOUT_S
        limits = dataclasses.replace(
            PROVIDER_LIMITS,
            wall_s=wall,
            cpu_s=max(1, math.ceil(wall)),
            output_bytes=SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE,
        )
        data = input.encode("utf-8") if isinstance(input, str) else input
        # like Inspect's local provider: local subprocesses share the "subprocesses" limit when asked to
        throttle = concurrency_limit("subprocesses", os.cpu_count() or 1) if concurrency else contextlib.nullcontext()
        try:
            async with throttle:
                result = await self._run(list(cmd), limits, data, cwd=_inside(cwd), env=env)
        except sandbox.SandboxError as exc:  # bwrap's failure must not read as the command's output
            raise SandboxUnavailableError(str(exc)) from exc
        stdout = result.stdout.decode("utf-8", errors="replace")
        if result.timed_out:
            raise TimeoutError(f"command timed out after {wall:g} s: {cmd!r:.200}")
        if _exec_refused(list(cmd), result):
            raise PermissionError(errno.EACCES, "Permission denied executing command", cmd[0])
        if result.output_limited:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_EXEC_OUTPUT_SIZE_STR, stdout)
        returncode = result.returncode if result.returncode is not None else -9
        return ExecResult(returncode == 0, returncode, stdout, result.stderr.decode("utf-8", errors="replace"))

    async def write_file(self, file: str, contents: str | bytes) -> None:
        data = contents.encode("utf-8") if isinstance(contents, str) else contents
        result = await self._python(_WRITE, [_inside(file)], data)
        self._raise_for(result, file)

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        limit = SandboxEnvironmentLimits.MAX_READ_FILE_SIZE
        result = await self._python(_READ, [_inside(file), str(limit)], None, output_bytes=limit + 1)
        self._raise_for(result, file)
        return result.stdout.decode("utf-8") if text else result.stdout

    async def _python(self, program: str, args: list[str], stdin: bytes | None, output_bytes: int = 1 << 16):
        limits = dataclasses.replace(PROVIDER_LIMITS, wall_s=120.0, cpu_s=120, output_bytes=output_bytes)
        argv = [sandbox.sandbox_python(), "-I", "-S", "-c", program, *args]
        return await self._run(argv, limits, stdin, cwd=WORKDIR)

    async def _run(
        self,
        argv: list[str],
        limits: sandbox.SandboxLimits,
        stdin: bytes | None,
        cwd: str,
        env: dict[str, str] | None = None,
    ) -> sandbox.SandboxResult:
        return await sandbox.run_sandboxed(
            argv,
            files=ETC,
            limits=limits,
            stdin=stdin,
            workdir=self.directory,
            tmpdir=self.tmp_directory,
            cwd=cwd,
            env=env,
        )

    @staticmethod
    def _raise_for(result: sandbox.SandboxResult, file: str) -> None:
        if result.timed_out:
            raise TimeoutError(f"file operation on {file} timed out")
        if result.output_limited or result.returncode == EXIT_TOO_LARGE:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
        if result.returncode in _EXIT_ERRORS:  # errno-style: str() names the file and says "Is a directory"
            raise _EXIT_ERRORS[result.returncode](result.returncode, os.strerror(result.returncode), file)
        if result.returncode != 0:
            raise RuntimeError(f"file operation on {file} failed: {result.stderr.decode(errors='replace')[-500:]}")
