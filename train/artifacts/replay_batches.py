"""Each training step's exact loss batches, written while training with ``log_replay_batches: true``, so that
``python -m train.replay RUN --step N`` can recompute the step without generating (``train/replay.py``).

``<output_dir>/replay/step-000002.pt``: a list with one entry per gradient-accumulation micro-batch, each the inputs
TRL's ``compute_loss`` received (token ids and masks, advantages, old and sampling logprobs) and
``num_items_in_batch``, on the CPU. Written atomically (a hidden partial file renamed into place).

Each row also carries ``replay_row``: its index in the step's generation batch, in the order TRL scored it and the
rollout log numbers it (group x num_generations + position; ``RecordingGRPOTrainer.on_batch_scored`` adds it before
TRL shuffles and splits the batch). TRL's loss ignores the key; the counterfactual (``train/counterfactual.py``)
matches each recorded row to its rollout-log sample by it, exactly.
"""

from __future__ import annotations

from pathlib import Path

REPLAY_DIR = "replay"
BATCH_NAME = "step-{step:06d}.pt"
REPLAY_ROW = "replay_row"  # a recorded row's index in its generation batch


class ReplayRecorder:
    """Writes each step's loss batches (called from the trainer's ``compute_loss`` while training)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.directory = Path(run_dir) / REPLAY_DIR
        self._step: int | None = None
        self._batches: list[dict] = []

    def add(self, step: int, inputs: dict, num_items_in_batch) -> None:
        import torch

        if step != self._step:
            self._step, self._batches = step, []
        cpu = {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        items = (
            num_items_in_batch.detach().cpu() if isinstance(num_items_in_batch, torch.Tensor) else num_items_in_batch
        )
        self._batches.append({"inputs": cpu, "num_items_in_batch": items})
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / BATCH_NAME.format(step=step)
        partial = path.with_name(f".{path.name}.partial")
        torch.save(self._batches, partial)
        partial.replace(path)  # a crash never leaves a torn file
