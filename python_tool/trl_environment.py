"""The ``python`` tool for TRL: ``python_tool.session`` as a GRPOTrainer ``environment_factory``, and the config keys
that shape a run's tool turns.

TRL 1.16 builds one environment instance per rollout (pooled, ``reset`` between batches), exposes its public
methods as tools (schema from the signature and docstring) and runs async ones on its event loop. Each
``reset`` gives the rollout a fresh :class:`python_tool.session.PythonSession` (its own ``/work``); the same
session class serves Inspect's tool (``python_tool/inspect_tool.py``), so a policy meets one tool in training and eval.

A sandbox that fails (not the program: :class:`rewards.sandbox.SandboxError`) would reach the policy as TRL's
``{"error": ...}`` text; the environment records it and :func:`tool_metrics` raises it after the batch.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from python_tool.session import (
    CODE_DESCRIPTION,
    TOOL_DESCRIPTION,
    PythonSession,
    ToolLimits,
    new_workdir,
    remove_workdir,
)
from rewards.sandbox import SandboxError


class PythonToolEnvironment:
    """One rollout's python tool (TRL ``environment_factory`` instance)."""

    def __init__(self, limits: ToolLimits) -> None:
        self._limits = limits
        self._session: PythonSession | None = None
        self._failure: SandboxError | None = None
        self._cleanup = None

    def reset(self, **row) -> None:
        """A new rollout: a new empty ``/work`` and counters (the prompt is left as it is)."""
        if self._cleanup is not None:
            self._cleanup()
        directory = new_workdir()
        self._cleanup = weakref.finalize(self, remove_workdir, directory)
        self._session = PythonSession(self._limits, directory)
        self._failure = None

    async def python(self, code: str) -> str:
        if self._session is None:
            raise RuntimeError("the python tool was called before reset()")
        try:
            return await self._session.run(code)
        except SandboxError as exc:
            self._failure = exc
            raise

    @property
    def session(self) -> PythonSession | None:
        return self._session

    @property
    def failure(self) -> SandboxError | None:
        return self._failure


# TRL reads the tool's schema from the docstring (Google style): the same words Inspect's tool shows
PythonToolEnvironment.python.__doc__ = f"""{TOOL_DESCRIPTION}

Args:
    code: {CODE_DESCRIPTION}
"""


def environment_factory(limits: ToolLimits):
    """GRPOTrainer's ``environment_factory`` for the python tool with ``limits``."""

    def factory() -> PythonToolEnvironment:
        return PythonToolEnvironment(limits)

    return factory


def tool_schemas(limits: ToolLimits) -> list[dict]:
    """The JSON schema of each tool, as ``apply_chat_template`` renders the environment methods GRPOTrainer passes
    (the warm start's transcripts and the server length check render prompts with them)."""
    from transformers.utils import get_json_schema  # seconds: train.config (its --help) imports this module

    return [get_json_schema(PythonToolEnvironment(limits).python)]


def tool_metrics(environments) -> dict[str, float]:
    """Per-step metrics from one batch's environments; raises the sandbox's own failure if one happened."""
    sessions = []
    for environment in environments or ():
        if isinstance(environment, PythonToolEnvironment):
            if environment.failure is not None:
                raise environment.failure
            if environment.session is not None:
                sessions.append(environment.session.stats)
    if not sessions:
        return {}
    n = len(sessions)
    return {
        "tools/calls_per_rollout": sum(s.calls for s in sessions) / n,
        "tools/errors_per_rollout": sum(s.errors for s in sessions) / n,
        "tools/refused_per_rollout": sum(s.refused for s in sessions) / n,
        "tools/seconds_per_rollout": sum(s.seconds for s in sessions) / n,
    }


TOOL_CONFIG_KEYS = (
    "tools",
    "tool_timeout_s",
    "tool_memory_mb",
    "tool_output_chars",
    "tool_max_calls",
    "tool_chat_template",
    "max_tool_calling_iterations",
    "chat_template_kwargs",
)
"""The config keys (script and training arguments, as run.json records them) that shape a run's tool turns: what
the tool evals read (``python_tool/turns.py``)."""


def tool_limits(config) -> ToolLimits:
    """The run's tool limits from its ``tool_*`` keys: ScriptArguments, or run.json's config values (a mapping)."""
    values = config if isinstance(config, Mapping) else vars(config)
    return ToolLimits(
        timeout_s=float(values["tool_timeout_s"]),
        memory_mb=int(values["tool_memory_mb"]),
        output_chars=int(values["tool_output_chars"]),
        max_calls=int(values["tool_max_calls"]),
    )


def tool_config(values: dict) -> dict | None:
    """``TOOL_CONFIG_KEYS`` of a run's config values (script and training arguments merged); None without tools."""
    if not values.get("tools"):
        return None
    return {key: values.get(key) for key in TOOL_CONFIG_KEYS}


def tool_rounds(tool_max_calls: int, max_tool_calling_iterations: int | None) -> int:
    """How many rounds of tool calls TRL's loop runs (``max_tool_calling_iterations``; unset: ``tool_max_calls + 1``,
    so the last round shows the call limit). The tool evals stop at the same round (``python_tool/turns.py``)."""
    if max_tool_calling_iterations is not None:
        return int(max_tool_calling_iterations)
    return int(tool_max_calls) + 1
