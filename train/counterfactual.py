"""What would step N have done with the reward functions as they are now? Re-score the step's completions, recompute
the advantages exactly as TRL did, and hand back the batch with them (``train/replay.py`` recomputes the loss).

The completions are the step's recorded token ids (``<run>/replay/step-N.pt``), put back in generation order by
each row's ``replay_row`` (its index in the batch TRL scored, which is also its rollout-log sample: group x
num_generations + epoch - 1). What the run paid and the references come from the rollout log
(``<run>/rollouts/*.eval``); each row's full dataset row (every column TRL hands a reward function) from the
trainer's dataset, by the logged prompt id.

Scoring runs TRL's own ``GRPOTrainer._generate_and_score_completions`` with only its sampler replaced by the
recorded ids: TRL tokenizes the prompts, decodes the completions, calls the reward functions and normalizes the
rewards (``scale_rewards``, ``num_generations``, ``multi_objective_aggregation``, reward weights) as it did while
training; nothing of that is rewritten here. It is run twice:

* with the rewards the rollout log says were paid: its advantages must equal the recorded ones bit for bit, the
  re-tokenized prompts the recorded prompts and the decoded completions the logged texts, else ``ReplayError``
  (which proves each row is matched to its own log sample and reward);
* with the trainer's reward functions (the run's ``reward_funcs`` and ``reward_weights`` as ``rewards`` and
  ``problems/domains.py`` define them today): the counterfactual rewards and advantages.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from records.rollout_format import STEP_KEY, train_score_name
from rewards.common import completion_text
from train.artifacts.replay_batches import REPLAY_ROW


class ReplayError(ValueError):
    """A step that cannot be replayed; the message says what is missing and what to do."""


@dataclass(frozen=True)
class LoggedRollout:
    """One rollout-log sample: what the run paid a completion, and for which reference."""

    index: int  # position in the step's generation batch (group * num_generations + epoch - 1)
    sample: str  # the log's sample id, ``<prompt id>@<step>``
    epoch: int
    prompt_id: str
    target: str
    completion: str
    rewards: dict[str, float | None]  # reward name (as the config names it) -> paid value (None: did not apply)
    advantage: float


@dataclass(frozen=True)
class Scored:
    """One pass of TRL's scoring over the step's batch, in generation order."""

    rewards: dict[str, list[float | None]]  # reward name -> value per row (None: the function returned None)
    advantages: list[float]
    completions: list[str]  # as TRL decoded them


def _paid(value) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _covers(path: Path, step: int) -> bool:
    """Whether a rollout-log file's name (``rollouts-step000001-000010[-2].eval``) covers ``step``."""
    match = re.fullmatch(r"rollouts-step(\d+)-(\d+)(?:-\d+)?\.eval", path.name)
    return match is None or int(match[1]) <= step <= int(match[2])


def logged_rollouts(run_dir: Path, step: int, num_generations: int, reward_names: list[str]) -> list[LoggedRollout]:
    """The step's rollouts from ``<run>/rollouts/*.eval``, in generation order. A resumed run that re-did the step
    wrote a later file (``-2``...); its samples replace the earlier ones, as its replay batch replaced theirs."""
    from inspect_ai.log import read_eval_log

    directory = Path(run_dir) / "rollouts"
    files = sorted(directory.glob("*.eval"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    by_index: dict[int, LoggedRollout] = {}
    for path in (p for p in files if _covers(p, step)):
        samples = [s for s in read_eval_log(str(path)).samples or [] if (s.metadata or {}).get(STEP_KEY) == step]
        if samples:
            by_index = {}  # the latest file holding the step holds all of it
        for sample in samples:
            meta = sample.metadata or {}
            index = int(meta["group"]) * num_generations + sample.epoch - 1
            rewards = {}
            for name in reward_names:
                score = (sample.scores or {}).get(train_score_name(name))
                if score is None:
                    raise ReplayError(
                        f"{path}: sample {sample.id} epoch {sample.epoch} has no {train_score_name(name)}"
                    )
                rewards[name] = _paid(score.value)
            by_index[index] = LoggedRollout(
                index=index,
                sample=str(sample.id),
                epoch=sample.epoch,
                prompt_id=str(sample.id).rsplit("@", 1)[0],
                target=str(sample.target),
                completion=sample.output.completion,
                rewards=rewards,
                advantage=float(meta["advantage"]),
            )
    if not by_index:
        raise ReplayError(
            f"{directory}: no rollout log holds step {step} (train with log_rollouts: true; the log of the last "
            "steps is written at each save)"
        )
    if sorted(by_index) != list(range(len(by_index))):
        raise ReplayError(f"{directory}: step {step}'s rollouts are not one whole generation batch")
    return [by_index[i] for i in range(len(by_index))]


def generation_order(entries: list[dict]) -> dict:
    """The recorded micro-batches of one step put back in the order TRL scored them (by ``replay_row``):
    ``prompt_ids`` and ``completion_ids`` (lists of token ids, unpadded) and ``advantages``."""
    import torch

    if any(REPLAY_ROW not in entry["inputs"] for entry in entries):
        raise ReplayError(
            "this replay batch has no row ids (recorded before the counterfactual existed): train again with "
            "log_replay_batches: true"
        )
    prompts, completions, advantages, rows = [], [], [], []
    for entry in entries:
        batch = entry["inputs"]
        for i, row in enumerate(batch[REPLAY_ROW].tolist()):
            prompts.append(batch["prompt_ids"][i][batch["prompt_mask"][i].bool()].tolist())
            length = int(batch["completion_mask"][i].sum())  # 0: a truncated row mask_truncated_completions hid
            completions.append(batch["completion_ids"][i][: length or None].tolist())
            advantages.append(batch["advantages"][i])
            rows.append(row)
    if sorted(rows) != list(range(len(rows))):
        raise ReplayError(f"the replay batch's rows {sorted(rows)} are not one whole generation batch")
    order = sorted(range(len(rows)), key=rows.__getitem__)
    return {
        "prompt_ids": [prompts[i] for i in order],
        "completion_ids": [completions[i] for i in order],
        "advantages": torch.stack([advantages[i] for i in order]),
    }


def with_advantages(entries: list[dict], advantages) -> list[dict]:
    """The recorded micro-batches with each row's advantage replaced by ``advantages[replay_row]``."""
    return [
        {**entry, "inputs": {**entry["inputs"], "advantages": advantages[entry["inputs"][REPLAY_ROW]]}}
        for entry in entries
    ]


def score(trainer, rows: list[dict], batch: dict, reward_funcs: list, names: list[str]) -> Scored:
    """TRL's scoring of the recorded completions (``_generate_and_score_completions`` with the sampler replaced by
    the recorded ids) with ``reward_funcs`` (named ``names``) in place of the trainer's. Raises ReplayError when TRL's prompt
    tokens differ from the recorded ones."""
    # lazy: trl_seams imports TRL + torch (~10 s); `python -m train.replay --help` prints without them
    from train.trl_seams import generate_and_score

    prompt_ids = batch["prompt_ids"]
    captured: dict = {}

    def recorded_generation(tokenized, images, multimodal_fields, num_generations, has_tool_images=False):
        for index, (ours, theirs) in enumerate(zip(tokenized, prompt_ids, strict=True)):
            if list(ours) != theirs:
                raise ReplayError(f"row {index}: the prompt tokenizes differently now than the recorded prompt ids")
        return [list(ids) for ids in batch["completion_ids"]], None

    calculate = trainer._calculate_rewards

    def calculate_and_keep(inputs, prompts, completions, completion_ids_list):
        captured["completions"] = [completion_text(c) for c in completions]
        captured["rewards"] = calculate(inputs, prompts, completions, completion_ids_list)
        return captured["rewards"]

    trainer.model.train()  # TRL scores with the training settings (num_generations, not the eval ones)
    with mock.patch.multiple(
        trainer,
        _generate_single_turn=recorded_generation,
        _calculate_rewards=calculate_and_keep,
        reward_funcs=list(reward_funcs),
        use_vllm=False,  # no engine: TRL's importance-sampling recomputation stays out; the recorded ratios are kept
    ):
        output = generate_and_score(trainer, rows)
    values = captured["rewards"].cpu()
    return Scored(
        rewards={name: [_paid(v) for v in values[:, i].tolist()] for i, name in enumerate(names)},
        advantages=output["advantages"].cpu(),
        completions=captured["completions"],
    )


def paid_rewards(logged: list[LoggedRollout], names: list[str]) -> list:
    """Reward functions that return what the rollout log says each row was paid (TRL calls them in row order)."""

    def paid(name):
        def reward(completions, **kwargs):
            if len(completions) != len(logged):
                raise ReplayError(f"TRL scored {len(completions)} completions; the log holds {len(logged)}")
            return [row.rewards[name] for row in logged]

        reward.__name__ = f"paid_{name}"
        return reward

    return [paid(name) for name in names]


def dataset_rows(trainer, logged: list[LoggedRollout]) -> list[dict]:
    """Each logged rollout's dataset row (every column TRL hands a reward function), found by the logged prompt id;
    its reference must be the logged target."""
    dataset = trainer.train_dataset
    if "id" not in dataset.column_names:
        raise ReplayError("the training dataset has no id column: rollout-log samples cannot be matched to rows")
    by_id: dict[str, int] = {}
    for index, row_id in enumerate(dataset["id"]):
        if str(row_id) in by_id:
            raise ReplayError(f"the training dataset holds id {row_id!r} twice: rows cannot be matched by id")
        by_id[str(row_id)] = index
    rows = []
    for rollout in logged:
        if rollout.prompt_id not in by_id:
            raise ReplayError(f"{rollout.sample}: prompt id {rollout.prompt_id!r} is not in the run's dataset")
        row = dataset[by_id[rollout.prompt_id]]
        reference = str(row.get("answer", row.get("tests", "")))
        if reference != rollout.target:
            raise ReplayError(
                f"{rollout.sample}: the dataset's reference {reference!r} is not the logged {rollout.target!r}"
            )
        rows.append(row)
    return rows


def check_match(logged: list[LoggedRollout], batch: dict, paid: Scored) -> None:
    """The rollout log is this batch: TRL's advantages from the paid rewards equal the recorded ones exactly, and
    the decoded completions are the logged texts."""
    import torch

    for rollout, text in zip(logged, paid.completions, strict=True):
        if text != rollout.completion:
            raise ReplayError(
                f"{rollout.sample} epoch {rollout.epoch}: the recorded completion decodes to {text[:80]!r}, the "
                f"rollout log holds {rollout.completion[:80]!r}"
            )
    recorded = batch["advantages"]
    differ = (paid.advantages.to(recorded.dtype) != recorded).nonzero().flatten().tolist()
    if differ:
        row = logged[differ[0]]
        raise ReplayError(
            f"the rewards the rollout log says were paid do not give the recorded advantages ({len(differ)} rows; "
            f"first {row.sample} epoch {row.epoch}: {float(paid.advantages[differ[0]])!r} from the log, "
            f"{float(recorded[differ[0]])!r} recorded): the log and the replay batch are not the same step"
        )
    if not torch.equal(torch.tensor([r.advantage for r in logged], dtype=recorded.dtype), recorded):
        raise ReplayError("the rollout log's advantages are not the recorded ones: not the same step")


@dataclass(frozen=True)
class Change:
    sample: str
    epoch: int
    what: str  # a reward name, or "advantage"
    old: float | None
    new: float | None
    completion: str = ""  # the completion's text (as logged)


def changes(logged: list[LoggedRollout], paid: Scored, now: Scored) -> tuple[list[Change], list[Change]]:
    """(changed rewards, changed advantages), row by row in generation order."""

    def same(a, b) -> bool:
        return (a is None and b is None) or (a is not None and b is not None and a == b)

    rewards = [
        Change(row.sample, row.epoch, name, paid.rewards[name][i], now.rewards[name][i], row.completion)
        for i, row in enumerate(logged)
        for name in paid.rewards
        if not same(paid.rewards[name][i], now.rewards[name][i])
    ]
    advantages = [
        Change(row.sample, row.epoch, "advantage", float(paid.advantages[i]), float(now.advantages[i]))
        for i, row in enumerate(logged)
        if float(paid.advantages[i]) != float(now.advantages[i])
    ]
    return rewards, advantages
