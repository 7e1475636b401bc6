"""The ``python`` tool: one implementation that training (TRL) and evaluation (Inspect) both call.

A policy trained with a tool must meet the very same tool when it is evaluated: same sandbox, same
limits, same result text. So the tool is defined once, here, and the two adapters
(``python_tool/trl_environment.py`` for TRL, ``python_tool/inspect_tool.py`` for Inspect) only carry a :class:`PythonSession`
to the framework; neither formats, limits or runs anything itself.

Each call runs the code with the sandbox's own Python (``python3 -I``, standard library and whatever the
system has under /usr) in a fresh bubblewrap sandbox (``rewards.sandbox``: no network, no host files,
empty environment, seccomp, rlimits). The session's directory is mounted read-write at ``/work`` (the
working directory), so a file written by one call is there for the next call **of the same rollout or
sample** and for no other; ``/tmp`` is private to one call. The code goes in on stdin.

Result text (what the model reads; :func:`format_result`):

- stdout, then stderr, decoded as UTF-8 (invalid bytes replaced);
- cut to ``ToolLimits.output_chars`` characters, with ``[... N more characters cut]`` appended;
- then one status line when the run did not simply succeed: ``[exit status N]``,
  ``[killed: time limit of T s]`` or ``[killed: output over B bytes]``; ``[no output]`` when there was none;
- a call past ``ToolLimits.max_calls`` runs nothing and reads ``[call limit: ...]``.

Standard library and ``rewards.sandbox`` only: no Inspect, no torch.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from dataclasses import dataclass

from rewards import sandbox

TOOL_NAME = "python"
TOOL_DESCRIPTION = (
    "Run a Python 3 program in a sandbox (no network, no internet, standard library only) and return what it "
    "printed. Use print() to see values. Files written in the working directory stay for your later calls."
)
CODE_DESCRIPTION = "The complete Python program to run; print what you want to see."
WORKDIR = "/work"


@dataclass(frozen=True)
class ToolLimits:
    """Per-call limits (time, memory, output) and the per-rollout call limit. Config keys ``tool_*``."""

    timeout_s: float = 10.0  # per call (SIGKILL), in its own time (rewards/sandbox/own_time.py); also the CPU rlimit
    memory_mb: int = 512  # address space per process
    output_chars: int = 2000  # characters of stdout + stderr the model sees
    max_calls: int = 4  # calls per rollout (training) or sample (eval); later calls run nothing

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            if not value > 0:
                raise ValueError(f"tool limit {name} must be positive, got {value!r}")

    def sandbox_limits(self) -> sandbox.SandboxLimits:
        # the host reads at most 16x the shown characters (4 bytes per UTF-8 character, stdout and stderr) then kills
        return sandbox.SandboxLimits(
            wall_s=self.timeout_s,
            cpu_s=max(1, int(self.timeout_s + 0.999)),
            memory_mb=self.memory_mb,
            processes=32,
            file_size_mb=16,
            open_files=64,
            tmp_size_mb=32,
            output_bytes=max(4096, 16 * self.output_chars),
        )


def call_limit_text(limits: ToolLimits) -> str:
    return f"[call limit: {limits.max_calls} calls per rollout were used; this call ran nothing]"


def format_result(result: sandbox.SandboxResult, limits: ToolLimits) -> str:
    """The text the model reads for one run (the module docstring lists the rules)."""
    out = result.stdout.decode("utf-8", errors="replace")
    err = result.stderr.decode("utf-8", errors="replace")
    text = out + ("\n" if out and err and not out.endswith("\n") else "") + err
    if len(text) > limits.output_chars:
        text = f"{text[: limits.output_chars]}\n[... {len(text) - limits.output_chars} more characters cut]"
    if result.timed_out:
        status = f"[killed: time limit of {limits.timeout_s:g} s]"
    elif result.output_limited:
        status = f"[killed: output over {limits.sandbox_limits().output_bytes} bytes]"
    elif result.returncode != 0:
        status = f"[exit status {result.returncode}]"
    else:
        status = "" if text else "[no output]"
    if status and text and not text.endswith("\n"):
        text += "\n"
    return text + status


def new_workdir() -> str:
    """A private host directory for one session, writable by the sandbox user (as the Inspect provider makes)."""
    directory = tempfile.mkdtemp(prefix="verigrpo-tool-", dir="/tmp")  # the sandbox user must reach it
    os.chown(directory, *sandbox.sandbox_dir_owner_ids())
    os.chmod(directory, 0o700)
    return directory


@dataclass
class ToolStats:
    """What one session did: read into per-step metrics (calls/rollout, errors, seconds)."""

    calls: int = 0  # calls that ran code
    refused: int = 0  # calls past max_calls
    errors: int = 0  # runs that exited non-zero, timed out or hit the output cap
    seconds: float = 0.0  # wall time spent in the sandbox


class PythonSession:
    """One rollout's (or one eval sample's) tool: its directory, limits and counters.

    ``workdir``: the host directory mounted at ``/work`` (the Inspect adapter passes its bwrap sandbox's;
    training makes one per rollout with :func:`new_workdir`). A :class:`rewards.sandbox.SandboxError` (the
    sandbox itself failed) propagates: it is never the program's output.
    """

    def __init__(self, limits: ToolLimits, workdir: str) -> None:
        self.limits = limits
        self.workdir = workdir
        self.stats = ToolStats()

    async def run(self, code: str) -> str:
        if not isinstance(code, str):
            raise TypeError(f"code must be a string, got {type(code).__name__}")
        if self.stats.calls >= self.limits.max_calls:
            self.stats.refused += 1
            return call_limit_text(self.limits)
        self.stats.calls += 1
        started = time.monotonic()
        try:
            result = await sandbox.run_sandboxed(
                [sandbox.sandbox_python(), "-I", "-"],
                limits=self.limits.sandbox_limits(),
                stdin=code.encode("utf-8", errors="replace"),
                workdir=self.workdir,
                cwd=WORKDIR,
            )
        finally:
            self.stats.seconds += time.monotonic() - started
        if result.timed_out or result.output_limited or result.returncode != 0:
            self.stats.errors += 1
        return format_result(result, self.limits)


def remove_workdir(directory: str | None) -> None:
    if directory:
        shutil.rmtree(directory, ignore_errors=True)
