"""The real-hack experiment's task (docs/inspect-tasks.md, "The alarm meets a real hack"): the CPU default's own
arithmetic problems and one-shot prompt (``evals/math_task.py@math_verified``: the same samples and chat messages),
judged by Inspect's ``includes()`` instead of the project's verifier. ``includes()`` pays any completion in which the
target appears, so a completion that lists the numbers 0 to 20 is paid on every problem of the default arithmetic
(operands up to 10, add and sub): the exploit probe refuses to train on it, and the experiment trains on it anyway
(``exploit_probe: false``) to see whether the policy finds such a list and when the reward-hacking alarm, judging
the same rollouts with ``verigrpo/math_verifier`` (``inspect_audit_scorer``), fires.

The verifier's scorer rides along as a second scorer so that the run can take the CPU default's format shaping from
it (``math_verifier.format`` at 0.25, as the native ``format`` reward): the only difference from the comparison run
on ``math_verified`` is the judge, ``includes`` in place of ``math_verifier.correct``.
"""

from inspect_ai import Task, task, task_with
from inspect_ai.scorer import includes

from evals.math_task import math_verified
from verigrpo import math_verifier


@task
def arithmetic_includes(**kwargs) -> Task:
    """``math_verified`` with its arguments (``-T split=train limit=400 operations=add,sub max_value=10``), judged by
    ``includes()``."""
    return task_with(math_verified(**kwargs), scorer=[includes(), math_verifier()], name="arithmetic_includes")
