"""Which verifier scored this? A version string plus a hash of the ``rewards`` source.

Recorded in checkpoints (``run.json``) and eval logs, so a score can be matched to the exact
verifier code that produced it: if any file in ``rewards/`` changes, the fingerprint changes.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def verigrpo_version() -> str:
    try:
        return metadata.version("verigrpo")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def verifier_fingerprint() -> str:
    """sha256 (first 16 hex digits) over the path and bytes of every ``.py`` under ``rewards/`` (sandbox programs too)."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def verifier_id() -> dict[str, str]:
    """The dict logs and checkpoints record."""
    return {"verigrpo_version": verigrpo_version(), "verifier_fingerprint": verifier_fingerprint()}
