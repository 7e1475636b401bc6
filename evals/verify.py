"""The scorers by file path: ``--scorer evals/verify.py@<name>``, and the task files' import of them.

    from evals.verify import is_correct      # *is* rewards.is_correct, re-exported, not wrapped
    inspect score LOG --scorer evals/verify.py@math_verifier --action append --model none/none
    inspect score LOG --scorer evals/verify.py@unit_test_scorer --action append --model none/none

Each scorer is registered once, as ``verigrpo/<name>`` (``evals/inspect_plugin/``: the name that works from any
directory once installed). Inspect resolves ``FILE@name`` by reading FILE for functions decorated ``@scorer`` and then
looking the bare ``name`` up in its registry, so each declaration below is decorated with this module's ``scorer``:
it returns the registered ``verigrpo/<name>`` scorer itself (the declaration's parameters must be its parameters) and
makes the bare name a second key for that one object. Whichever name a user gives, the log records
``verigrpo/<name>``.
"""

import inspect

import verigrpo
from records.inspect_seams import registry_alias
from rewards import grade, grade_code, is_correct

__all__ = ["grade", "grade_code", "is_correct", "math_verifier", "unit_test_scorer"]


def scorer(declared):
    """The registered ``verigrpo/<name>`` scorer that ``declared`` names, also found under the bare name.

    Named ``scorer`` because Inspect's ``FILE@name`` reader looks for that decorator. Raises ``TypeError`` when the
    declaration's parameters differ from the registered scorer's (this file would document the wrong ones)."""
    registered = getattr(verigrpo, declared.__name__)
    mine, theirs = (
        [(p.name, p.default) for p in inspect.signature(f).parameters.values()] for f in (declared, registered)
    )
    if mine != theirs:
        raise TypeError(
            f"evals/verify.py declares {declared.__name__}{inspect.signature(declared)} but verigrpo/"
            f"{declared.__name__} takes {inspect.signature(registered)} (evals/inspect_plugin/__init__.py)"
        )
    registry_alias("scorer", declared.__name__, registered)
    return registered


@scorer
def math_verifier(think: str = "none", answer_format: str | None = None):
    """Correct when the completion's final answer equals the target under ``rewards.grade``.

    ``think``: ``"none"`` grades the whole completion; ``"after_last_close"`` only what follows the
    last ``</think>`` (no tag, no answer). Use the setting the model was trained with
    (``inspect score ... -S think=after_last_close``). ``answer_format``: the final-answer line read
    (``answer_line``, ``minerva``, ``gsm8k``); unset, each sample's recorded one, else ``answer_line``."""


@scorer
def unit_test_scorer():
    """Fraction of the target's unit tests the completion's last ```python block passes, in sandboxes
    (``rewards.grade_code``: the coroutine the ``code_tests`` reward runs)."""
