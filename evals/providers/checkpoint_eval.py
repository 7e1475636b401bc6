"""Score a training run's checkpoint as it was trained, from the command line or in this process.

``eval_command`` is the ``inspect eval ... --model verigrpo/<run dir>`` line (run from the repository root)
that the demo prints and a user runs; ``run_eval`` with ``checkpoint_model_args`` is the same eval in this
process. Both go through the ``verigrpo/`` model provider (``evals/providers/checkpoint_model.py``), greedy on CPU.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def eval_connections(problems: int) -> int:
    """Inspect's hf provider batches up to ``--max-connections`` requests and closes a batch after 2 s
    without a new one: with one batch for all problems the batch, and so every greedy token (padding and
    batch shapes change floating-point sums), does not depend on timing; one batch is also the cheapest
    (``cpu/greedy_batch.py`` decodes it in groups with the shared prompt prefix computed once)."""
    return max(1, problems)


def checkpoint_model_args(quantized: bool) -> dict:
    """Greedy on CPU through the ``verigrpo/`` provider, which loads the run as its run.json says it was
    trained (``quantized``) or unquantized (``precision=full``): the same code as the printed CLI command."""
    return {"do_sample": False, "device": "cpu", "precision": "trained" if quantized else "full"}


def checkpoint_ref(run_dir: Path) -> str:
    """``verigrpo/<run dir>``, relative to the repository root when inside it (where ``inspect eval`` runs)."""
    run_dir = Path(run_dir).resolve()
    return f"verigrpo/{run_dir.relative_to(REPO) if run_dir.is_relative_to(REPO) else run_dir}"


def inspect_command() -> str:
    """This environment's ``inspect`` (``.venv/bin/inspect`` in a checkout), so the printed command works
    without activating the virtual environment."""
    here = Path(sys.executable).parent / "inspect"  # not resolved: the venv's bin/ is what counts
    if not here.is_file():
        return "inspect"
    return str(here.relative_to(REPO) if here.is_relative_to(REPO) else here)


def eval_command(run_dir: Path, task_args: dict, quantized: bool = True) -> str:
    """The ``inspect eval`` command line (run from the repository root) that scores ``run_dir`` on the demo's
    problems as the demo does: greedy, through the ``verigrpo/`` provider, in one batch."""
    # lazy: inspect_ai (seconds, 40x this module's import): scripts/demo.py imports this module at its top
    from evals.math_task import math_verified

    defaults = {name: p.default for name, p in inspect.signature(math_verified).parameters.items()}
    task = " ".join(f"-T {k}={v}" for k, v in task_args.items() if defaults.get(k) != v)
    precision = "" if quantized else " -M precision=full"
    return (
        f"{inspect_command()} eval evals/math_task.py@math_verified {task} --model {checkpoint_ref(run_dir)} "
        f"-M do_sample=false{precision} --max-connections {eval_connections(task_args['limit'])}"
    )


class EvalFailed(RuntimeError):
    """An in-process eval that did not finish with status success; the message says which and why."""


def run_eval(task, model: str, model_args: dict, log_dir: Path, max_connections: int | None = None):
    """One greedy Inspect eval of ``task`` in this process, in one batch unless ``max_connections`` says
    otherwise; its log (EvalFailed if the eval failed)."""
    from inspect_ai import eval as inspect_eval

    (log,) = inspect_eval(
        task,
        model=model,
        model_args=model_args,
        log_dir=str(log_dir),
        max_connections=max_connections or eval_connections(len(task.dataset)),
        display="plain",
    )
    if log.status != "success":
        raise EvalFailed(f"the eval of {model} failed ({log.status}): {log.error}")
    return log
