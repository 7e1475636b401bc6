"""Programs that run *inside* sandboxes (under the system Python, standard library only).

They are injected as file contents, never imported by the host; ``source(name)`` reads one.
"""

from __future__ import annotations

import functools
from pathlib import Path


@functools.cache
def source(name: str) -> bytes:
    """The text of ``judge.py`` or ``server.py``, as injected into a sandbox."""
    return (Path(__file__).parent / name).read_bytes()
