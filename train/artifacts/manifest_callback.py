"""The trainer callback that writes run.json and the model card into each checkpoint as it is saved.

Apart from ``train/artifacts/manifest.py`` because it subclasses transformers' ``TrainerCallback``: the manifest
itself is built and written without transformers (the demo and the tests import it light).
"""

from __future__ import annotations

from pathlib import Path

from transformers import TrainerCallback

from train.artifacts.manifest import write_manifest


class ManifestCallback(TrainerCallback):
    """Writes run.json and the model card (README.md) into each checkpoint as it is saved (the checkpoint's log
    history is the Trainer's own trainer_state.json; the output directory's log_history.json is written at the end).

    ``live`` (set once the trainer exists) returns facts that change during the run, merged in at each
    write: ``{"rollout_engine": ...}``, the vLLM engine's servers and the adapter version it serves.
    """

    def __init__(self, manifest: dict) -> None:
        self.manifest = manifest
        self.live = None

    def current(self) -> dict:
        return {**self.manifest, **(self.live() if self.live is not None else {})}

    def on_save(self, args, state, control, **kwargs):
        checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if state.is_world_process_zero:
            write_manifest(self.current(), checkpoint, state.global_step)
        return control
