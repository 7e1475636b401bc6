"""The eval task and scorer of every domain that declares its judge as ``grade`` (problems/domains.py): one task for
all of them, so a new domain needs no Inspect code of its own.

    inspect eval evals/domain_task.py@domain_verified -T domain=<name> --model hf/models/smollm2-135m-instruct -M do_sample=false
    inspect score LOG --scorer verigrpo/domain_scorer -S domain=<name> --action append --model none/none

Each sample is the domain's training row (the prompt training samples from, the ``answer`` column as target), and the
scorer calls the row's ``grade``: the function the training reward ``<name>_grade`` calls, so the eval metric is the
quantity training optimized. The scorer is registered once, as ``verigrpo/domain_scorer`` (``evals/inspect_plugin``);
the task resolves it by that name.
"""

import inspect

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target
from inspect_ai.solver import TaskState, generate
from inspect_ai.util import registry_create

from evals.task_errors import task_errors
from problems.domains import DOMAIN_SCORER, DOMAINS, HOW_TO_REGISTER, Domain, awaited
from problems.math_data import DatasetError
from records.chat import chat_messages

DEFAULT_MAX_TOKENS = 256


def graded_domain(name: str) -> Domain:
    """The ``grade`` domain called ``name``; DatasetError naming those there are otherwise."""
    domain = DOMAINS.get(name)
    if domain is None or domain.grade is None:
        graded = [d.name for d in DOMAINS.values() if d.grade is not None]
        what = "declares no grade function" if domain is not None else "is not registered"
        raise DatasetError(f"domain {name!r} {what}: choose from {graded}; {HOW_TO_REGISTER}")
    return domain


async def grade_one(grade, text: str, target: str) -> float:
    """``grade`` of one completion in the eval's event loop: an ``async def`` one is awaited here; a plain one runs in a
    worker thread, where a ``grade`` that runs an event loop of its own (``asyncio.run``) works too, and a slow one does
    not stall the loop (training calls either kind from sync code: ``problems.domains.grade_all``)."""
    if inspect.iscoroutinefunction(grade):
        return float(await grade(text, target))
    return float(await awaited(await anyio.to_thread.run_sync(grade, text, target)))


def domain_score(name: str) -> Scorer:
    """The scorer body ``verigrpo/domain_scorer`` registers: the domain's ``grade`` of the completion and target (an
    ``async def`` grade awaited here, a plain one in a worker thread: ``grade_one``)."""
    grade = graded_domain(name).grade

    async def score(state: TaskState, target: Target) -> Score:
        value = await grade_one(grade, state.output.completion, target.text)
        return Score(value=value, answer=state.output.completion)

    return score


@task
def domain_verified(
    domain: str,
    source: str | None = None,
    path: str | None = None,
    split: str = "test",
    limit: int | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> Task:
    """A ``grade`` domain's problems (its first source unless ``source``), greedy, scored by its ``grade``."""
    with task_errors("domain_verified"):  # one message and exit 1 on the command line, not a traceback
        row_domain = graded_domain(domain)
        problems = row_domain.load(source or row_domain.sources[0], path=path, split=split, limit=limit)
    samples = []
    for problem in problems:
        row = row_domain.training_row(problem, 0)
        samples.append(Sample(input=chat_messages(row["prompt"]), target=str(row["answer"]), id=row["id"]))
    return Task(
        dataset=MemoryDataset(samples, name=domain),
        solver=generate(),
        scorer=registry_create("scorer", DOMAIN_SCORER, domain=domain),
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        metadata={"domain": domain},
    )
