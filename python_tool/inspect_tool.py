"""The ``python`` tool for Inspect: ``python_tool.session`` run in the sample's ``verigrpo/bwrap`` sandbox.

The same :class:`python_tool.session.PythonSession` the trainer's tool calls (``python_tool/trl_environment.py``): its limits,
its result text, and the sample's bwrap directory as ``/work`` (a task needs ``sandbox="bwrap"``). Inspect's own
``python()`` tool formats results differently (stderr first, no status line) and has no call limit, so a policy
trained with this tool would meet a different tool there. One session per sample, keyed by the sample's sandbox
directory (removed with it). Inspect's own cut of long tool output is set above anything the tool returns
(``max_result_bytes``): the tool's cut is the only one, as in training.
"""

from __future__ import annotations

import os

from inspect_ai.tool import Tool, ToolDef
from inspect_ai.util import sandbox

from python_tool.inspect_sandbox import BwrapSandboxEnvironment
from python_tool.session import CODE_DESCRIPTION, TOOL_DESCRIPTION, TOOL_NAME, PythonSession, ToolLimits

_sessions: dict[str, PythonSession] = {}


def _session(limits: ToolLimits) -> PythonSession:
    try:
        environment = sandbox().as_type(BwrapSandboxEnvironment)
    except TypeError as exc:
        raise RuntimeError(
            f'the {TOOL_NAME} tool runs in the verigrpo/bwrap sandbox (the one training uses): give the task sandbox="bwrap" ({exc})'
        ) from None
    directory = environment.directory
    session = _sessions.get(directory)
    if session is None:
        for stale in [d for d in _sessions if d != directory and not _exists(d)]:
            del _sessions[stale]  # samples whose sandbox was cleaned up
        session = _sessions[directory] = PythonSession(limits, directory)
    return session


def _exists(directory: str) -> bool:
    return os.path.isdir(directory)


def python_tool(limits: ToolLimits | None = None) -> Tool:
    """The training tool as an Inspect tool (``use_tools(python_tool(limits))`` with ``sandbox="bwrap"``)."""
    limits = limits or ToolLimits()

    async def execute(code: str) -> str:
        return await _session(limits).run(code)

    tool = ToolDef(
        execute,
        name=TOOL_NAME,
        description=TOOL_DESCRIPTION,
        parameters={"code": CODE_DESCRIPTION},
        max_output=max_result_bytes(limits),
    ).as_tool()
    setattr(tool, LIMITS_ATTRIBUTE, limits)  # for a tool-trained policy's provider to check (python_tool/turns.py)
    return tool


LIMITS_ATTRIBUTE = "verigrpo_tool_limits"


def offered_limits(tools) -> ToolLimits | None:
    """The limits of the python tool among a task's tool objects (``TaskState.tools``), or None."""
    for tool in tools or ():
        limits = getattr(tool, LIMITS_ATTRIBUTE, None)
        if limits is not None:
            return limits
    return None


def max_result_bytes(limits: ToolLimits) -> int:
    """Inspect cuts a tool result over its ``max_tool_output`` (16 KiB by default) and wraps it in its own text;
    training never does. The tool's result is already cut to ``output_chars`` characters (at most 4 UTF-8 bytes
    each) plus a cut note and a status line, so this bound leaves it whole."""
    return 4 * limits.output_chars + 1024
