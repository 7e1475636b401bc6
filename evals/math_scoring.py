"""The Inspect side of the verifier: one Score built from ``rewards.grade``, used by every scorer we register.

Scorers wrap this pure check and never mutate state. ``grade`` is the same object the training
reward (``rewards.correctness``) calls, so eval accuracy is the quantity training optimized.
"""

from __future__ import annotations

import logging
import warnings
from functools import lru_cache
from pathlib import Path

import anyio
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, mean, stderr
from inspect_ai.solver import TaskState

from records.rollout_format import ANSWER_FORMAT_KEY  # the sample's recorded answer format (rollout logs, tasks)
from records.run_manifest import read_run_manifest
from rewards import InvalidReference, Verdict, grade, verifier_id, warm_up
from rewards.common import completion_text, question_text
from rewards.math.answer_format import DEFAULT_ANSWER_FORMAT, THINK_NONE, answer_format_named

logger = logging.getLogger(__name__)

# "correct" is the headline (C/I -> accuracy); "format" is the share of outputs with one extractable answer.
MATH_METRICS = {"correct": [accuracy(), stderr()], "format": [mean()]}
HEADLINE = "math_verifier.correct"  # "<scorer>.<score>": the correct key of the math_verifier scorer
# Scoring is not latency-bound: a long wall deadline means a busy eval box waits for a verdict
# instead of erroring. The verdict itself is the same at any deadline (the budget is CPU time).
SCORING_DEADLINE_S = 120.0


def verdict_score(verdict: Verdict, think: str = THINK_NONE, answer_format: str = DEFAULT_ANSWER_FORMAT) -> Score:
    """A Verdict as an Inspect Score: value, extracted answer, explanation and why."""
    return Score(
        value={"correct": CORRECT if verdict.correct else INCORRECT, "format": 0.0 if verdict.answer is None else 1.0},
        answer=verdict.answer,
        explanation=verdict.explanation,
        metadata={"reason": verdict.reason.value, **verifier_id(think, answer_format)},
    )


async def score_completion(
    completion: str,
    reference: str,
    think: str = THINK_NONE,
    *,
    question: str | None = None,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> Score:
    """Grade one completion off the event loop (the verifier may wait on its worker process).

    ``think`` is the answer-extraction setting (``rewards.math.answer_format.THINK_MODES``) and ``answer_format`` the
    final-answer line (``ANSWER_FORMATS``); they must be the ones the checkpoint was trained with. ``question``: the
    problem's text, for the question-restatement rule (``rewards.grade(question=...)``).
    """
    settings = verifier_id(think, answer_format)
    try:
        verdict = await anyio.to_thread.run_sync(
            lambda: grade(
                completion,
                reference,
                think=think,
                deadline_s=SCORING_DEADLINE_S,
                question=question,
                answer_format=answer_format,
            )
        )
    except InvalidReference as exc:
        # a dataset bug: recorded, excluded from the metric, never counted as the model's error
        return Score.unscored(reason="invalid_reference", explanation=str(exc), metadata=settings)
    return verdict_score(verdict, think, answer_format)


def _checkpoint_dirs(model_name: str) -> list[Path]:
    """Local directories named by an Inspect model string: hf/<dir>, vllm/<base>:<adapter dir>."""
    _, _, rest = model_name.partition("/")
    return [Path(part) for part in rest.split(":") if part and Path(part).is_dir()]


@lru_cache(maxsize=64)
def checkpoint_verifier_mismatch(
    model_name: str, think: str = THINK_NONE, answer_format: str = DEFAULT_ANSWER_FORMAT
) -> str | None:
    """A warning when the checkpoint's run.json names a different verifier (or think setting, or answer format) than
    the one scoring it now."""
    current = verifier_id(think, answer_format)
    for directory in _checkpoint_dirs(model_name):
        trained = read_run_manifest(directory)
        if trained is None:
            continue
        if trained.get("verifier_fingerprint") != current["verifier_fingerprint"]:
            message = (
                f"{directory} was trained with verifier {trained.get('verifier_fingerprint')} "
                f"(verigrpo {trained.get('verigrpo_version')}) but is being scored with "
                f"{current['verifier_fingerprint']} (verigrpo {current['verigrpo_version']}): the eval does not "
                "measure exactly what training rewarded."
            )
            logger.warning(message)
            warnings.warn(message, stacklevel=2)
            return message
    return None


def policy_text(state: TaskState) -> str:
    """What the policy wrote for this sample: with tool calls, its own turns after the last user message joined
    by ``rewards.common.completion_text`` (the training reward's reading; tool results never count), else the
    completion."""
    messages = state.messages
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    turns = [{"role": m.role, "content": m.text} for m in messages[last_user + 1 :]]
    if not any(turn["role"] == "tool" for turn in turns):
        return state.output.completion
    return completion_text(turns)


def sample_answer_format(state: TaskState, answer_format: str | None) -> str:
    """The format to read: the scorer's own when given, else the one the sample records (``ANSWER_FORMAT_KEY``), else
    the default; an unknown name is a ValueError naming the valid ones."""
    chosen = answer_format or (state.metadata or {}).get(ANSWER_FORMAT_KEY) or DEFAULT_ANSWER_FORMAT
    answer_format_named(chosen)
    return chosen


def math_scorer(think: str = THINK_NONE, answer_format: str | None = None) -> Scorer:
    """A fresh scorer function (Inspect tags the returned object, so each registration needs its own).

    ``answer_format`` None: each sample's recorded format (its metadata ``answer_format``, which the math tasks and
    rollout logs write), else the default. The question is ``state.input``'s, read by ``rewards.common.question_text``
    as the training reward reads TRL's prompt."""
    verifier_id(think, answer_format or DEFAULT_ANSWER_FORMAT)  # an unknown setting fails here, before any sample
    warm_up(wait=False)  # the verifier's workers start while the model generates, not in the first score

    async def score(state: TaskState, target: Target) -> Score:
        chosen = sample_answer_format(state, answer_format)
        checkpoint_verifier_mismatch(str(state.model), think, chosen)
        return await score_completion(
            policy_text(state), target.text, think, question=question_text(state.input), answer_format=chosen
        )

    return score
