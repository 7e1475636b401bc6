"""Which checkpoint a run names best (``<run>/best_checkpoint.json``), read by the ``verigrpo/<run>@best`` model
provider and written by training (``train/guards/best_checkpoint.py``): a format, so the evals read it here without
importing training code (standard library only).
"""

from __future__ import annotations

import json
from pathlib import Path

BEST_JSON = "best_checkpoint.json"
BEST_SUFFIX = "@best"  # verigrpo/<run>@best


class NoBestCheckpoint(ValueError):
    """A run that names no best checkpoint (no held-out evals, or the best eval was not saved); says what to do."""


def best_checkpoint_dir(run_dir: Path) -> Path:
    """The directory ``verigrpo/<run>@best`` loads: ``best_checkpoint.json``'s checkpoint, or, for a run still
    training, the best checkpoint its newest ``trainer_state.json`` records."""
    record_path = run_dir / BEST_JSON
    if record_path.is_file():
        record = json.loads(record_path.read_text())
        if record["checkpoint"] is None:
            why = (
                "the base model (step 0) scored best: evaluate the base itself (--model hf/<base>)"
                if record["best_step"] == 0
                else f"the best eval (step {record['best_step']}) has no saved checkpoint: align save_steps with "
                "eval_steps"
            )
            raise NoBestCheckpoint(f"{record_path}: {why}")
        return (run_dir / record["checkpoint"]).resolve()
    states = sorted(run_dir.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[1]))
    best = json.loads(states[-1].read_text()).get("best_model_checkpoint") if states else None
    if not best:
        raise NoBestCheckpoint(
            f"{run_dir}: no {BEST_JSON} and no best checkpoint in its trainer_state.json; a run names its best "
            "checkpoint when it trains with held-out evals (eval_strategy: steps)"
        )
    return run_dir / Path(best).name
