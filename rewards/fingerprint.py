"""Which verifier scored this? A version string plus a hash of the ``rewards`` source.

Recorded in checkpoints (``run.json``) and eval logs, so a score can be matched to the exact
verifier code that produced it: if any file in ``rewards/`` changes, the fingerprint changes.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from rewards.math.answer_format import DEFAULT_ANSWER_FORMAT, THINK_MODES, THINK_NONE, answer_format_named

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


def verifier_fingerprint(think: str = THINK_NONE, answer_format: str = DEFAULT_ANSWER_FORMAT) -> str:
    """sha256 (first 16 hex digits) over the path and bytes of every ``.py`` under ``rewards/`` (sandbox programs too),
    and the answer-extraction settings ``think`` and ``answer_format`` when they are not the defaults.

    The settings are part of the fingerprint because they change which answer is graded: a model
    trained with ``after_last_close`` and scored with ``none`` is not measured on what it optimized.
    """
    if think not in THINK_MODES:
        raise ValueError(f"think must be one of {THINK_MODES}, got {think!r}")
    answer_format_named(answer_format)
    if think == THINK_NONE and answer_format == DEFAULT_ANSWER_FORMAT:
        return _source_hash()[:16]
    settings = f"think={think}" + ("" if answer_format == DEFAULT_ANSWER_FORMAT else f"\0answer_format={answer_format}")
    return hashlib.sha256(f"{_source_hash()}\0{settings}".encode()).hexdigest()[:16]


def verifier_id(think: str = THINK_NONE, answer_format: str = DEFAULT_ANSWER_FORMAT) -> dict[str, str]:
    """The dict logs and checkpoints record (``run.json``, eval logs, every Score)."""
    return {
        "verigrpo_version": verigrpo_version(),
        "verifier_fingerprint": verifier_fingerprint(think, answer_format),
        "answer_extraction_think": think,
        "answer_format": answer_format,
    }
