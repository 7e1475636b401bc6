"""Inspect's own conformance suite for sandbox providers, run against ``verigrpo/bwrap``.

``inspect_ai.util._sandbox.self_check`` holds plain async test functions; importing them here collects
them, and ``sandbox_env`` gives each one a fresh sample sandbox (``sample_init`` / ``sample_cleanup``),
the way Inspect runs them for its docker and local providers. Every check must pass but those in
``EXPECTED_FAILURES``, each a deliberate, documented choice of this provider (python_tool/inspect_sandbox.py):

- ``test_exec_as_user``: every command runs as one unprivileged user with no capabilities, so
  ``user=`` raises ``SandboxUserUnsupportedError`` (and nothing can add users).

The xfails are strict: a listed check that starts passing fails the run, so the list cannot go stale.
Where bubblewrap cannot isolate the checks are skipped, except in CI (``VERIGRPO_REQUIRE_SANDBOX=1``),
where that fails (the ``needs_sandbox`` fixture, which also checks no sandbox process outlives a check).
"""

import pytest
from inspect_ai.util._sandbox.self_check import *  # noqa: F403  (the checks, by their own __all__)

from python_tool.inspect_sandbox import BwrapSandboxEnvironment

pytestmark = pytest.mark.anyio

EXPECTED_FAILURES = {
    "test_exec_as_user": "one unprivileged user runs every command: user= raises SandboxUserUnsupportedError",
}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
async def sandbox_env(request, needs_sandbox):
    reason = EXPECTED_FAILURES.get(request.node.originalname)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    environments = await BwrapSandboxEnvironment.sample_init(request.node.name, None, {})
    try:
        yield environments["default"]
    finally:
        await BwrapSandboxEnvironment.sample_cleanup(request.node.name, None, environments, False)


def test_every_expected_failure_is_a_check_of_the_suite():
    """A renamed or removed check upstream must not leave a dead entry here."""
    from inspect_ai.util._sandbox import self_check

    assert set(EXPECTED_FAILURES) <= set(self_check.__all__)
