"""An Inspect sandbox provider on the verifier's bubblewrap isolation: ``sandbox="bwrap"``.

Each sample gets a private host directory, mounted read-write at ``/work`` (the working directory)
in a fresh sandbox per ``exec`` — same hardening as the code verifier (no network, no host files,
empty environment, seccomp, rlimits, a private ``/tmp`` that lasts one exec). ``read_file`` and
``write_file`` also run inside a sandbox, so a symlink the model plants in ``/work`` can never make
the host read or write its own files. Registered as ``verigrpo/bwrap``; Inspect matches the bare
name, so a task says ``sandbox="bwrap"``.

Differences from Inspect's docker provider: no images or services (the sandbox sees the host's
``/usr``, read-only); ``user`` must be None; a timed-out command is not retried (it would time out
again); only ``/work`` persists between calls. The root and ``/dev`` (``/dev/shm`` included) are
read-only, so ``/work`` and the private ``/tmp`` (512 MiB) are the only writable places; POSIX shared
memory and semaphores (``multiprocessing`` pools) do not work. ``/work`` lives in the host's ``/tmp``
with a 1 GiB cap per file but no cap on its total size (that would need a filesystem per sample).
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
# Roomier than the verifier's limits: agentic tools run shells, compilers and test suites.
PROVIDER_LIMITS = sandbox.SandboxLimits(
    wall_s=DEFAULT_EXEC_TIMEOUT_S, cpu_s=int(DEFAULT_EXEC_TIMEOUT_S), memory_mb=4096, processes=256,
    file_size_mb=1024, open_files=1024, tmp_size_mb=512,
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


def _inside(path: str | None) -> str:
    if not path:
        return WORKDIR
    return path if path.startswith("/") else f"{WORKDIR}/{path}"


class BwrapSandboxEnvironment(SandboxEnvironment):
    """One sample's sandbox: a host directory that every exec mounts at /work."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self.directory = directory

    @classmethod
    async def sample_init(
        cls, task_name: str, config: SandboxEnvironmentConfigType | None, metadata: dict[str, str]
    ) -> dict[str, SandboxEnvironment]:
        sandbox.ensure_available()
        directory = tempfile.mkdtemp(prefix="verigrpo-bwrap-", dir="/tmp")  # the sandbox user must reach it
        os.chown(directory, *sandbox.sandbox_dir_owner_ids())
        os.chmod(directory, 0o700)
        return {"default": cls(directory)}

    @classmethod
    async def sample_cleanup(
        cls,
        task_name: str,
        config: SandboxEnvironmentConfigType | None,
        environments: dict[str, SandboxEnvironment],
        interrupted: bool,
    ) -> None:
        for environment in environments.values():
            shutil.rmtree(environment.as_type(cls).directory, ignore_errors=True)

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
                result = await sandbox.run_sandboxed(
                    list(cmd), limits=limits, stdin=data, workdir=self.directory, cwd=_inside(cwd), env=env
                )
        except sandbox.SandboxError as exc:  # bwrap's failure must not read as the command's output
            raise SandboxUnavailableError(str(exc)) from exc
        stdout = result.stdout.decode("utf-8", errors="replace")
        if result.timed_out:
            raise TimeoutError(f"command timed out after {wall:g} s: {cmd!r:.200}")
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
        return await sandbox.run_sandboxed(argv, limits=limits, stdin=stdin, workdir=self.directory, cwd=WORKDIR)

    @staticmethod
    def _raise_for(result: sandbox.SandboxResult, file: str) -> None:
        if result.timed_out:
            raise TimeoutError(f"file operation on {file} timed out")
        if result.output_limited or result.returncode == EXIT_TOO_LARGE:
            raise OutputLimitExceededError(SandboxEnvironmentLimits.MAX_READ_FILE_SIZE_STR, None)
        if result.returncode in _EXIT_ERRORS:
            raise _EXIT_ERRORS[result.returncode](f"{file} (in the bwrap sandbox)")
        if result.returncode != 0:
            raise RuntimeError(f"file operation on {file} failed: {result.stderr.decode(errors='replace')[-500:]}")
