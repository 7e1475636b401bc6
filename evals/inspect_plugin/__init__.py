"""Inspect's entry point for verigrpo; installed as the top-level package ``verigrpo``.

Inspect names a registered object ``<top-level package>/<name>``, but only when it can tell the
package is installed: a scorer in ``evals/`` is ``evals/math_verifier`` after ``pip install .`` and a
bare ``math_verifier`` after ``pip install -e .`` (the distribution is ``verigrpo``, not ``evals``),
and even this package loses its prefix when run from a checkout holding a stale ``verigrpo.egg-info``.
So the names here are made ``verigrpo/<name>`` in every case, and

    inspect score LOG --scorer verigrpo/math_verifier --action append --output-file NEW.eval --model none/none

works from any directory; so do ``verigrpo/unit_test_scorer`` and ``verigrpo/domain_scorer`` (``-S domain=<name>``: a
domain that declares its judge as ``grade``, problems/domains.py). The metrics of a rollout log's training
scores (``verigrpo/group_mean``, ``verigrpo/pass_at_G``: ``evals/log_stats/group_metrics.py``) are registered here, so
``inspect score`` and ``recompute_metrics`` find them by the names the log records. The ``bwrap`` sandbox provider is
registered here too (Inspect matches sandbox names without the prefix: ``sandbox="bwrap"``), and so is
the model provider ``verigrpo`` (``evals/providers/checkpoint_model.py``): ``--model verigrpo/<run dir>`` evaluates
a training checkpoint loaded as its run.json says it was trained (4-bit base included). So is
``verigrpo-policy`` (``evals/providers/policy_model.py``), the policy in memory that a run's held-out evals score.
The hook ``verigrpo/exit_status`` makes ``inspect eval`` of this project's tasks exit 1 when a task ended in error or
completed no sample (Inspect's own ``inspect eval`` exits 0 then; only ``eval-set`` reports it), so a script or CI
that runs a documented command sees the failure.
pyproject.toml maps this folder to the package name and declares the
``inspect_ai`` entry point that imports it.
"""

from pathlib import Path

import click
from inspect_ai.hooks import Hooks, RunEnd, hooks
from inspect_ai.log import EvalLog
from inspect_ai.model import modelapi
from inspect_ai.scorer import Metric, Scorer, mean, metric, scorer, stderr
from inspect_ai.util import sandboxenv

from evals.code_scoring import CODE_METRICS, code_scorer
from evals.log_stats.group_metrics import group_mean_metric, pass_at_group_metric
from evals.math_scoring import MATH_METRICS, math_scorer
from inspect_tasks.rescore import task_score
from python_tool.inspect_sandbox import BwrapSandboxEnvironment
from records.inspect_seams import registry_name

NAMESPACE = "verigrpo"


def _probe() -> None:
    """Only here so we can ask Inspect how it would qualify a name defined in this module."""


def _name(name: str) -> str:
    """The ``name=`` to give a decorator so that Inspect registers ``verigrpo/<name>``."""
    return name if registry_name(_probe, name) == f"{NAMESPACE}/{name}" else f"{NAMESPACE}/{name}"


# Each scorer's one registration. evals/verify.py declares the same names for ``--scorer evals/verify.py@<name>``
# and resolves them to these objects (no second registration).
@scorer(metrics=MATH_METRICS, name=_name("math_verifier"))
def math_verifier(think: str = "none", answer_format: str | None = None) -> Scorer:
    """Correct when the completion's final answer equals the target under ``rewards.grade``.

    ``think``: ``"none"`` grades the whole completion; ``"after_last_close"`` only what follows the last ``</think>``
    (no tag, no answer). Use the setting the model was trained with (``inspect score ... -S think=after_last_close``).
    ``answer_format``: the final-answer line read (``answer_line``, ``minerva``, ``gsm8k``); unset, each sample's
    recorded one (the math tasks and rollout logs record it), else ``answer_line``. The question is the sample's
    input (its last user message), for the rule that an answer copied from the question is not an answer.
    """
    return math_scorer(think, answer_format)


@scorer(metrics=CODE_METRICS, name=_name("unit_test_scorer"))
def unit_test_scorer() -> Scorer:
    """Fraction of the target's unit tests the completion's last ```python block passes, in sandboxes
    (``rewards.grade_code``: the coroutine the ``code_tests`` reward runs)."""
    return code_scorer()


@scorer(metrics=[mean(), stderr()], name=_name("domain_scorer"))
def domain_scorer(domain: str) -> Scorer:
    """A domain's own ``grade`` (problems/domains.py) of the completion against the target, in [0, 1]: the scorer of
    every domain that declares its judge as ``grade`` (``evals/domain_task.py``)."""
    # lazy: the task file registers its @task when imported, which every Inspect start would do here
    from evals.domain_task import domain_score

    return domain_score(domain)


@scorer(metrics=[mean(), stderr()], name=_name("task_scorer"))
def task_scorer(task: str, scorer: str | None = None, task_args: str | None = None, **options) -> Scorer:
    """An Inspect task's own scorer on a logged completion after its solver chain ran again on it, as training
    rewarded it (``inspect_tasks/rescore.py``): ``-S task=FILE.py@NAME`` (``-S scorer=NAME`` of several,
    ``-S task_args=k=v,k2=v2``)."""
    return task_score(task, scorer, task_args, **options)


@metric(name=_name("group_mean"), scores="unreduced")
def group_mean() -> Metric:
    """A rollout log's training score: the mean over GRPO groups of each group's mean."""
    return group_mean_metric()


@metric(name=_name("pass_at_G"), scores="unreduced")
def pass_at_G(k: int) -> Metric:  # noqa: N802 - G is the group size, as in pass@G
    """A rollout log's training score: the share of GRPO groups of ``k`` (= G) completions with one full score."""
    return pass_at_group_metric(k)


@sandboxenv(name=_name("bwrap"))
class bwrap(BwrapSandboxEnvironment):  # noqa: N801 - the registered provider's name
    """``python_tool.inspect_sandbox.BwrapSandboxEnvironment``, defined here so Inspect names it ``verigrpo/bwrap``
    (it derives the prefix from the defining module) in editable and regular installs alike."""


@modelapi(name=_name("verigrpo"))
def checkpoint_provider() -> type:
    """``--model verigrpo/<run dir>``: a checkpoint as trained (``evals.providers.checkpoint_model``). Inspect matches
    model providers by their unqualified name, so the model string starts ``verigrpo/``. The heavy imports
    (torch, transformers, trl) happen only when such a model is asked for."""
    from evals.providers.checkpoint_model import checkpoint_api  # lazy: torch, trl (Inspect loads this plugin always)

    return checkpoint_api()


@modelapi(name=_name("verigrpo-policy"))
def policy_provider() -> type:
    """A model object in memory: the policy a training run's held-out evals score (``evals.providers.policy_model``;
    ``train/artifacts/held_out.py`` creates it with the model). Named on the command line it says what to use
    instead."""
    from evals.providers.policy_model import policy_api  # lazy: trl and transformers (the tool turns)

    return policy_api()


EVALS_DIR = Path(__file__).resolve().parent.parent  # the folder of this project's task files (evals/)


def failed_task(log: EvalLog) -> str | None:
    """Why a log of one of this project's tasks is a failure (an error status, or no sample completed); None when it
    completed a sample, or when the task is not one of ours."""
    task_file = log.eval.task_file
    if not task_file or EVALS_DIR not in Path(task_file).resolve().parents:
        return None
    completed = log.results.completed_samples if log.results else 0
    if log.status == "success" and completed > 0:
        return None
    return f"{log.eval.task} ended with status {log.status!r}, {completed} sample(s) completed"


def _exit_one() -> None:
    raise click.exceptions.Exit(1)


@hooks(name=_name("exit_status"), description="inspect eval of a verigrpo task exits 1 when it failed")
class ExitStatus(Hooks):
    """On the ``inspect eval`` command line only (a click command is running), a run with a failed verigrpo task
    makes the command exit 1, with one line on stderr per failed task; ``inspect_ai.eval()`` from Python is
    untouched (callers read ``log.status``)."""

    async def on_run_end(self, data: RunEnd) -> None:
        ctx = click.get_current_context(silent=True)
        failures = [reason for log in data.logs if (reason := failed_task(log))]
        if data.exception is not None or ctx is None or not failures:
            return
        for reason in failures:
            click.echo(f"verigrpo: {reason}: exit status 1", err=True)
        ctx.call_on_close(_exit_one)
