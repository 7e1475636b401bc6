"""The one private asyncio attribute verigrpo touches: a subprocess's transport, to close it.

asyncio has no public close() for a finished subprocess (``asyncio.subprocess.Process``): without it,
pipes left open when a run is cut short are closed by the garbage collector after their loop is gone
(a ResourceWarning, or an error on a closed loop). Written against CPython 3.10-3.13, where the
attribute is ``Process._transport``; a Python without it makes this a no-op (the garbage collector
closes the pipes later). Exercised by every sandbox run that is cancelled or killed:
tests/rewards/code/test_code_verifier.py (cancel mid-run) and tests/rewards/sandbox/test_sandbox_isolation.py.
"""

from __future__ import annotations

import asyncio


def close_subprocess_transport(process: asyncio.subprocess.Process) -> None:
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()
