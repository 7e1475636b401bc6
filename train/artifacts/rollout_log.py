"""Every training rollout as an Inspect log: browse it, re-score it, catch reward hacking.

While training, each completion the policy was paid for is written to
``<output_dir>/rollouts/rollouts-step<first>-<last>.eval`` with its prompt, target, every reward
function's value (scores ``train_<name>``) and metadata (step, group, advantage, length,
truncation). One GRPO group maps to one Inspect sample: sample id ``<prompt id>@<step>``, epoch =
position in the group, so Inspect's reducers give the group mean and pass@G. The logged model is
``none/none`` so re-scoring never loads anything:

    inspect view --log-dir runs/x/rollouts
    inspect score runs/x/rollouts/rollouts-step000001-000010.eval --scorer verigrpo/math_verifier \\
        --action append --output-file rescored.eval --model none/none
    python scripts/audit_rollouts.py runs/x

Files are written every ``rollout_log_steps`` steps, at every checkpoint save and at the end, so a
crash loses at most the current interval; a resumed run writes new files and never overwrites.
Each file is written under a hidden temporary name and renamed into place (``write_atomically``),
so a crash mid-write leaves no torn ``.eval`` behind, only a ``.*.partial`` that nothing reads.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, recompute_metrics, write_eval_log
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score

from evals.chat import chat_messages
from evals.inspect_seams import EvalMetricDefinition, EvalScorer  # Inspect's private names, in one module
from evals.rollout_format import ROLLOUT_MODEL, STEP_KEY, train_score_name
from rewards.common import completion_text

logger = logging.getLogger(__name__)

ROLLOUT_TASK = "grpo_rollouts"


@dataclass
class Rollout:
    prompt_id: str
    step: int  # the optimizer step this rollout is trained in (1-based, as in TRL's logs)
    group: int  # index of the prompt group within the generation batch
    position: int  # 0-based position within the group
    prompt: list[dict] | str
    completion: str
    target: str
    rewards: dict[str, float | None]
    advantage: float
    completion_length: int | None
    truncated: bool | None
    extra: dict = field(default_factory=dict)


def _messages(prompt: list[dict] | str):
    if isinstance(prompt, str):
        return prompt
    return chat_messages(prompt)


def _score(value: float | None) -> Score:
    # None (a reward that did not apply, e.g. a broken reference) is recorded as unscored
    return Score(value=float("nan") if value is None else float(value))


def build_log(rollouts: list[Rollout], num_generations: int, metadata: dict) -> EvalLog:
    """An EvalLog of rollouts: one sample per completion, scores declared so metrics can be computed."""
    names = sorted({name for r in rollouts for name in r.rewards})
    samples = [
        EvalSample(
            id=f"{r.prompt_id}@{r.step}",
            epoch=r.position + 1,
            input=_messages(r.prompt),
            target=r.target,
            output=ModelOutput.from_content(ROLLOUT_MODEL, r.completion),
            scores={train_score_name(name): _score(r.rewards.get(name)) for name in names},
            metadata={
                STEP_KEY: r.step,
                "group": r.group,
                "advantage": r.advantage,
                "completion_length": r.completion_length,
                "truncated": r.truncated,
                **r.extra,
            },
        )
        for r in rollouts
    ]
    steps = [r.step for r in rollouts]
    spec = EvalSpec(
        created=datetime.now(timezone.utc).isoformat(),
        task=ROLLOUT_TASK,
        dataset=EvalDataset(name="grpo_rollouts", samples=len(samples)),
        model=ROLLOUT_MODEL,
        config=EvalConfig(epochs=num_generations, epochs_reducer=["mean", f"pass_at_{num_generations}"]),
        scorers=[
            EvalScorer(name=train_score_name(name), metrics=[EvalMetricDefinition(name="mean")]) for name in names
        ],
        metadata={**metadata, "first_step": min(steps), "last_step": max(steps)},
    )
    log = EvalLog(status="success", eval=spec, samples=samples)
    recompute_metrics(log)
    return log


def write_atomically(log: EvalLog, path: Path) -> Path:
    """Write ``log`` to ``path`` so that ``path`` is either absent or complete, never torn.

    A SIGKILL during Inspect's zip write used to leave a truncated ``.eval`` ("EOCD not found")
    that broke every later reader. Here the bytes go to ``.<name>.partial`` (not ``*.eval``, so
    ``inspect view`` and the audit never see it), are fsynced, then renamed: a rename within a
    directory is atomic on POSIX. The directory is fsynced too, so the rename survives a power loss.
    """
    partial = path.with_name(f".{path.name}.partial")
    write_eval_log(log, str(partial), format="eval")
    with open(partial, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
    return path


class RolloutRecorder:
    """Buffers rollouts and writes them as one .eval file per interval."""

    def __init__(self, directory: str | Path, every_steps: int, num_generations: int, metadata: dict) -> None:
        if every_steps < 1:
            raise ValueError(f"rollout_log_steps must be >= 1, got {every_steps}")
        self.directory = Path(directory)
        self.every_steps = every_steps
        self.num_generations = num_generations
        self.metadata = metadata
        self.buffer: list[Rollout] = []
        self.written: list[Path] = []

    def add(self, rollouts: list[Rollout]) -> None:
        self.buffer.extend(rollouts)
        steps = {r.step for r in self.buffer}
        if len(steps) > self.every_steps:  # a new step began after a full interval: write the full interval
            last_complete = max(steps) - 1
            self.flush(up_to_step=last_complete)

    def flush(self, up_to_step: int | None = None) -> Path | None:
        chunk = [r for r in self.buffer if up_to_step is None or r.step <= up_to_step]
        if not chunk:
            return None
        first, last = min(r.step for r in chunk), max(r.step for r in chunk)
        path = self.directory / f"rollouts-step{first:06d}-{last:06d}.eval"
        suffix = 2
        while path.exists():  # a resumed run re-doing steps: keep both
            path = self.directory / f"rollouts-step{first:06d}-{last:06d}-{suffix}.eval"
            suffix += 1
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(build_log(chunk, self.num_generations, self.metadata), path)
        # dropped only once written: a failed write keeps them for the next flush
        self.buffer = [r for r in self.buffer if not (up_to_step is None or r.step <= up_to_step)]
        self.written.append(path)
        logger.info("wrote %d rollouts (steps %d-%d) to %s", len(chunk), first, last, path)
        return path


def _finite_or_none(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)  # TRL stores a None reward as NaN


def rollouts_from_batch(
    *,
    ids: list[str],
    answers: list[str],
    prompts: list,
    completions: list,
    rewards: dict[str, list[float | None]],
    advantages: list[float],
    lengths: list[int] | None,
    max_completion_length: int,
    terminated: list[bool] | None,
    num_generations: int,
    step: int,
    extra: dict | None = None,
) -> list[Rollout]:
    """Rollouts of one generation batch (already gathered across processes), in group order.

    ``extra``: sample metadata every rollout of the batch shares (the adapter version that generated it).
    """
    rollouts = []
    for index, (prompt_id, answer, prompt, completion) in enumerate(zip(ids, answers, prompts, completions)):
        length = lengths[index] if lengths is not None else None
        rollouts.append(
            Rollout(
                prompt_id=str(prompt_id),
                step=step,
                group=index // num_generations,
                position=index % num_generations,
                prompt=prompt,
                completion=completion_text(completion),
                target=str(answer),
                rewards={name: _finite_or_none(values[index]) for name, values in rewards.items()},
                advantage=float(advantages[index]),
                completion_length=length,
                truncated=None if terminated is None else not terminated[index],
                extra={"max_completion_length": max_completion_length, **(extra or {})},
            )
        )
    return rollouts
