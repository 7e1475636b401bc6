"""Which verifier scored this? A version string plus a hash of the ``rewards`` source.

Recorded in checkpoints (``run.json``) and eval logs, so a score can be matched to the exact
verifier code that produced it: if any file in ``rewards/`` changes, the fingerprint changes.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from rewards.math.answer_format import THINK_MODES, THINK_NONE

_PACKAGE_DIR = Path(__file__).resolve().parent


def verigrpo_version() -> str:
    try:
        return metadata.version("verigrpo")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def _source_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE_DIR.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE_DIR).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def verifier_fingerprint(think: str = THINK_NONE) -> str:
    """sha256 (first 16 hex digits) over the path and bytes of every ``.py`` under ``rewards/`` (sandbox programs too),
    and the answer-extraction setting ``think`` when it is not the default ``"none"``.

    The setting is part of the fingerprint because it changes which answer is graded: a model
    trained with ``after_last_close`` and scored with ``none`` is not measured on what it optimized.
    """
    if think not in THINK_MODES:
        raise ValueError(f"think must be one of {THINK_MODES}, got {think!r}")
    if think == THINK_NONE:
        return _source_hash()[:16]
    return hashlib.sha256(f"{_source_hash()}\0think={think}".encode()).hexdigest()[:16]


def verifier_id(think: str = THINK_NONE) -> dict[str, str]:
    """The dict logs and checkpoints record (``run.json``, eval logs, every Score)."""
    return {
        "verigrpo_version": verigrpo_version(),
        "verifier_fingerprint": verifier_fingerprint(think),
        "answer_extraction_think": think,
    }
