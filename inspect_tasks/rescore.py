"""Re-scoring a logged completion exactly as training rewarded it: the task's chain replayed on the log's completion,
then the task's scorer, for any task (the scorer body ``verigrpo/task_scorer`` registers, evals/inspect_plugin).

    inspect score RUN/rollouts/rollouts-step000001-000001.eval --scorer verigrpo/task_scorer \\
        -S task=my_task.py@marbles --action append --output-file rescored.eval --model none/none

A task's scorer alone re-scores a rollout log exactly when it reads only the completion (``match``, ``includes``, a
scorer of your own on ``state.output``): run.json names it with its arguments. One that reads what a solver left
after ``generate()`` (``choice()`` reads the letters ``multiple_choice`` marked) needs that solver to run again,
which a log cannot replay by itself; this scorer does, so its value is the training reward's own. A rollout sample's
id is ``<sample id>@<step>``; an eval log's is the sample's.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target
from inspect_ai.solver import TaskState

from inspect_tasks.loading import parse_task_args
from inspect_tasks.training_task import prepare_task


def task_sample_id(state: TaskState) -> str:
    """The task's sample id of a logged sample: a rollout log's ``<id>@<step>`` without its step."""
    sample_id = str(state.sample_id)
    step = (state.metadata or {}).get("step")
    if step is not None and sample_id.endswith(f"@{step}"):
        return sample_id[: -len(f"@{step}")]
    return sample_id


def task_score(task: str, scorer: str | None = None, task_args: str | list | dict | None = None, **options) -> Scorer:
    """A scorer that scores a logged completion as training did: ``task``'s chain replayed on it, then its scorer
    ``scorer`` (the first when None; a name as its log names it). ``task_args``: the task's arguments (``k=v`` items,
    comma-separated, or a mapping); ``options``: ``inspect_sandbox`` / ``inspect_grader_model`` as the run had them."""
    if isinstance(task_args, str):
        task_args = [item for item in task_args.split(",") if item]
    prepared = prepare_task(
        task,
        parse_task_args(task_args),
        sandbox=options.get("inspect_sandbox"),
        grader_model=options.get("inspect_grader_model"),
    )
    names = [slot.name for slot in prepared.scorers]
    name = scorer or names[0]
    if name not in names:
        raise ValueError(f"task {prepared.name!r} has no scorer {name!r}: its scorers are {names}")

    async def score(state: TaskState, target: Target) -> Score:
        scored = await prepared.score_async(task_sample_id(state), state.output.completion)
        found = scored.scores.get(name)
        if found is None:
            errors = "; ".join(sorted(set(scored.errors.values())))
            return Score.unscored(reason="error", explanation=errors)
        return found

    return score
