"""A run's output directory before any model loads: which checkpoint ``resume_from_checkpoint`` means, and whether the
directory already holds another run.

Re-running a command used to start over silently in the same ``output_dir``: the new ``checkpoint-1`` replaced the old
one, a longer old run's later checkpoints stayed beside the new ones (and ``resume_from_checkpoint`` would pick them),
and the rollout logs of both runs mixed in ``rollouts/``. Now a directory holding a previous run's checkpoints or logs
is refused in one line that offers both ways on: continue it (``--resume_from_checkpoint true``) or start over
(``--overwrite_output_dir true``, which removes the previous run's checkpoints and logs just before the first step,
once every check has passed; nothing else in the directory is touched).

``resume_from_checkpoint: true`` (or ``latest``) is the latest complete checkpoint in ``output_dir``, as transformers'
``Trainer.train(resume_from_checkpoint=True)`` means it (TRL's command line would read the word as a path); ``false``
is no resume. It is resolved when the config is parsed, so every check, run.json and the start-up line see the
directory. Standard library only (``--help`` imports this package).
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from train.config.arguments import ConfigError

LATEST = ("true", "latest")  # transformers' True: the last checkpoint in output_dir
NO_RESUME = ("false", "none", "")
CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# what a run writes in its output_dir besides its checkpoints: the final save's files and its logs
RUN_FILES = (
    "run.json",
    "README.md",
    "log_history.json",
    "best_checkpoint.json",
    "trainer_state.json",
    "training_args.bin",
    "adapter_config.json",
    "adapter_model.safetensors",
    "model.safetensors",
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
    "curve.png",
    "rollouts-audit.png",
)
RUN_DIRS = ("rollouts", "evals", "replay")  # rollout logs, held-out evals, replay batches


def checkpoints(output_dir: str | Path) -> list[Path]:
    """The complete ``checkpoint-N`` directories of ``output_dir`` (those with trainer_state.json, which a save writes
    after the weights), by step."""
    root = Path(output_dir)
    if not root.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in root.iterdir() if (m := CHECKPOINT.match(p.name)) and p.is_dir()]
    return [p for _, p in sorted(found) if (p / "trainer_state.json").is_file()]


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    found = checkpoints(output_dir)
    return found[-1] if found else None


def resolve_resume(training_args) -> None:
    """``resume_from_checkpoint: true``/``latest`` -> the latest checkpoint of ``output_dir`` (ConfigError when there is
    none); ``false`` -> no resume. A path is left as it is (``check_model_and_resume`` checks it)."""
    value = training_args.resume_from_checkpoint
    if value is None or isinstance(value, bool):
        word = "" if value is None else str(value).lower()
    else:
        word = str(value).strip().lower()
    if word in NO_RESUME:
        training_args.resume_from_checkpoint = None
        return
    if word not in LATEST:
        return
    output_dir = training_args.output_dir
    last = latest_checkpoint(output_dir)
    if last is None:
        raise ConfigError(
            f"resume_from_checkpoint: {value} means the latest checkpoint in output_dir {output_dir}, and it holds "
            f"none (no checkpoint-N with trainer_state.json; resolved: {Path(output_dir).resolve()}). Give the "
            "output_dir of the run to continue, or a <output_dir>/checkpoint-N directory."
        )
    training_args.resume_from_checkpoint = str(last)


def previous_run(output_dir: str | Path) -> list[str]:
    """What a previous run left in ``output_dir`` (checkpoints, logs, the final save's files), by name; [] for a
    directory that does not exist or holds none of them."""
    root = Path(output_dir)
    if not root.is_dir():
        return []
    names = sorted((p.name for p in root.iterdir() if CHECKPOINT.match(p.name) and p.is_dir()), key=_step_order)
    names += [f"{name}/" for name in RUN_DIRS if (root / name).is_dir() and any((root / name).iterdir())]
    names += [name for name in RUN_FILES if (root / name).is_file()]
    # a directory holding only files a run also writes (a README.md, a config.json) is not a run's without these
    return (
        names if any(CHECKPOINT.match(n) or n in ("run.json", "rollouts/", "trainer_state.json") for n in names) else []
    )


def _step_order(name: str) -> int:
    return int(CHECKPOINT.match(name).group(1))


def check_output_dir(script_args, training_args) -> None:
    """Refuse (ConfigError, one line) to start a run in a directory that holds another, unless it resumes or
    ``overwrite_output_dir`` says to start over."""
    output_dir = training_args.output_dir
    overwrite = getattr(script_args, "overwrite_output_dir", False)
    if training_args.resume_from_checkpoint:
        if overwrite:
            raise ConfigError(
                "overwrite_output_dir: true removes the previous run's checkpoints, and resume_from_checkpoint continues "
                "from one: choose one of them."
            )
        return
    found = previous_run(output_dir)
    if not found or overwrite:
        return
    shown = describe(found)
    last = latest_checkpoint(output_dir)
    resume = (
        f"continue it with --resume_from_checkpoint true (from {last.name})"
        if last
        else "it saved no checkpoint to continue from"
    )
    raise ConfigError(
        f"output_dir {output_dir} already holds a run ({shown}): {resume}; start over with --overwrite_output_dir "
        "true (removes that run's checkpoints and logs); or give another --output_dir."
    )


def clear_previous_run(output_dir: str | Path) -> list[str]:
    """Remove what ``previous_run`` finds (``overwrite_output_dir: true``, called once every check has passed, just
    before the first step); the names removed. Files and folders a run does not write stay."""
    root = Path(output_dir)
    removed = previous_run(root)
    for name in removed:
        path = root / name.rstrip("/")
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return removed


def describe(names: list[str]) -> str:
    """``previous_run``'s names in a line: the checkpoints (a range when there are many), the folders, run.json, and
    a count of the other saved files."""
    steps = [n for n in names if CHECKPOINT.match(n)]
    parts = [f"{len(steps)} checkpoints ({steps[0]} to {steps[-1]})"] if len(steps) > 2 else steps
    parts += [n for n in names if n.endswith("/") or n == "run.json"]
    rest = len([n for n in names if not CHECKPOINT.match(n) and not n.endswith("/") and n != "run.json"])
    if rest:
        parts.append(f"{rest} saved file{'s' if rest > 1 else ''}")
    return ", ".join(parts)


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C while training: where the run stood, for train/grpo.py's one paragraph and exit code 130."""

    def __init__(self, output_dir: str, step: int, save_steps, main_process: bool):
        super().__init__(f"interrupted during step {step + 1}")
        self.output_dir, self.step, self.save_steps, self.main_process = output_dir, step, save_steps, main_process


def interruption(exc: KeyboardInterrupt, command: list[str], output_dir: str) -> str:
    """What Ctrl-C left in ``output_dir`` and the exact command that goes on from it. ``command``: the command line
    that ran (its ``--resume_from_checkpoint`` and ``--overwrite_output_dir`` are replaced). ``exc``: RunInterrupted
    from a training step, or a plain KeyboardInterrupt from outside one (the model loading, the final save)."""
    kept = _without(command, ("--resume_from_checkpoint", "--overwrite_output_dir"))
    step = exc.step if isinstance(exc, RunInterrupted) else None
    if step is None:
        done = "interrupted (Ctrl-C) outside a training step"
    else:
        done = f"interrupted (Ctrl-C) during step {step + 1} ({step} completed)"
    last = latest_checkpoint(output_dir)
    if last is None:
        again = kept + (["--overwrite_output_dir", "true"] if previous_run(output_dir) else [])
        every = f" (save_steps: {exc.save_steps})" if step is not None else ""
        return f"{done}, before the first checkpoint{every}: nothing to resume from. Start over with:\n  {shlex.join(again)}"
    saved = int(CHECKPOINT.match(last.name).group(1))
    redo = ""
    if step is not None and step > saved:
        redo = (
            f"; step {step} is trained again" if step == saved + 1 else f"; steps {saved + 1}-{step} are trained again"
        )
    return (
        f"{done}. The last saved checkpoint is {last} (step {saved}): it and the rollout logs up to it are complete"
        f"{redo}. Resume with:\n  {shlex.join([*kept, '--resume_from_checkpoint', str(last)])}"
    )


def _without(command: list[str], options: tuple[str, ...]) -> list[str]:
    """``command`` without ``options`` and their values (``--key value`` or ``--key=value``)."""
    out, skip = [], False
    for arg in command:
        if skip:
            skip = False
        elif arg in options:
            skip = True
        elif not arg.startswith(tuple(f"{o}=" for o in options)):
            out.append(arg)
    return out
