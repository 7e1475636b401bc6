"""run.json, the record ``train/grpo.py`` writes into its output directory and every ``checkpoint-N``: its one reader.

Training writes it (``train/artifacts/manifest.py``); the checkpoint model provider (``evals/providers/checkpoint_model.py``),
the scorers' verifier check (``evals/math_scoring.py``) and the tests read it here. Standard library only,
so a scorer can read it without importing the trainer.
"""

from __future__ import annotations

import json
from pathlib import Path

RUN_JSON = "run.json"


class RunManifestError(ValueError):
    """A run.json that cannot be read as a JSON object; the message names the file."""


def read_run_manifest(directory: str | Path) -> dict | None:
    """The run.json of ``directory`` as a dict; None when the directory has none."""
    path = Path(directory) / RUN_JSON
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunManifestError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(manifest, dict):
        raise RunManifestError(f"{path}: expected a JSON object, got {type(manifest).__name__}")
    return manifest
