"""Math tasks scored by the training verifier, on the training prompt.

    inspect eval evals/math_task.py@math_verified --model hf/models/smollm2-135m-instruct -M do_sample=false
    inspect eval evals/math_task.py@math_verified -T dataset=jsonl -T path=problems.jsonl --model ...
    inspect eval evals/math_task.py@gsm8k_verified --model vllm/Qwen/Qwen2.5-1.5B-Instruct
    inspect eval evals/math_task.py@math500_verified --model ...
    inspect eval evals/math_task.py@math_verified -T tools=true --model ...   # the training python tool, in bwrap
    inspect eval evals/math_task.py@gsm8k_verified -T answer_format=gsm8k --model ...  # prompt and read "#### <answer>"

Decoding is greedy (temperature 0) so a checkpoint's score is reproducible; the ``hf/`` provider
also needs ``-M do_sample=false``. pass@k: ``--epochs 4 --epochs-reducer mean,pass_at_4`` with
``--temperature 0.7`` (and without ``do_sample=false``).
"""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import generate, use_tools

from evals.math_scoring import ANSWER_FORMAT_KEY, HEADLINE
from evals.task_errors import task_errors
from evals.verify import math_verifier
from problems.file_rows import skipped_rows
from problems.math_data import ARITHMETIC_DEFAULTS, DatasetError, MathProblem, default_split, is_file, load_problems
from python_tool.inspect_tool import python_tool
from python_tool.session import ToolLimits
from records.chat import chat_messages
from rewards import DEFAULT_ANSWER_FORMAT, build_messages, verifier_id

DEFAULT_DATASET = "arithmetic"
DEFAULT_SHOTS = 1  # one worked example: the small CPU model needs it to follow the ANSWER: format
DEFAULT_MAX_TOKENS = 256
EVAL_ARITHMETIC_PROBLEMS = 50  # an eval of the generated problems: 50 unless -T limit= says otherwise
EVAL_SPLIT = None  # the source's held-out split ('test': procedural test problems never appear in training's
# 'train' split); a file (-T path=, any dataset) has none: it is evaluated whole, and its log header says the problems
# are not held out


TOOL_DEFAULTS = ToolLimits()


def record_to_sample(
    problem: MathProblem,
    num_shots: int = DEFAULT_SHOTS,
    tools: bool = False,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> Sample:
    """A MathProblem as an Inspect Sample, with exactly the chat messages training uses; its metadata records the
    answer format the prompt teaches, which the scorer reads back (so ``inspect score`` re-grades it the same way)."""
    messages = chat_messages(build_messages(problem.question, num_shots, tools=tools, answer_format=answer_format))
    metadata = {**problem.metadata, ANSWER_FORMAT_KEY: answer_format}
    return Sample(input=messages, target=problem.answer, id=problem.id, metadata=metadata)


def _csv(value: str | list | tuple) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else list(value)


@task
def math_verified(
    dataset: str = DEFAULT_DATASET,
    path: str | None = None,
    split: str | None = EVAL_SPLIT,
    limit: int | None = None,
    seed: int = 0,
    shuffle: bool = False,
    num_shots: int = DEFAULT_SHOTS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    operations: str = ",".join(ARITHMETIC_DEFAULTS.operations),
    min_value: int = ARITHMETIC_DEFAULTS.min_value,
    max_value: int = ARITHMETIC_DEFAULTS.max_value,
    steps: int = ARITHMETIC_DEFAULTS.steps,
    think: str = "none",
    tools: bool = False,
    tool_timeout_s: float = TOOL_DEFAULTS.timeout_s,
    tool_memory_mb: int = TOOL_DEFAULTS.memory_mb,
    tool_output_chars: int = TOOL_DEFAULTS.output_chars,
    tool_max_calls: int = TOOL_DEFAULTS.max_calls,
    answer_format: str = DEFAULT_ANSWER_FORMAT,
    skip_bad_rows: bool = False,
) -> Task:
    """Any math dataset (``arithmetic``, ``jsonl``, ``json``, ``gsm8k``, ``math500``), verifier-scored.

    With ``arithmetic`` (offline, the default), ``limit`` is how many problems are generated (default ``EVAL_ARITHMETIC_PROBLEMS``, 50)
    and ``operations``/``min_value``/``max_value``/``steps`` shape them. ``think`` is the answer-extraction
    setting (``-T think=after_last_close`` for reasoning models: only text after the last ``</think>``
    is graded); use the one the checkpoint was trained with (its run.json records it). ``tools=true`` offers
    the training ``python`` tool (``python_tool/session.py``, in the ``bwrap`` sandbox) with the ``tool_*`` limits
    (a tool-trained run's config keys of the same names); only the model's own turns are graded.
    ``answer_format`` names the final-answer line the prompt teaches and the scorer reads (``answer_line``: ``ANSWER:
    <value>``; ``minerva``: ``Final Answer: The final answer is $<value>$. I hope it is correct.``; ``gsm8k``:
    ``#### <value>``); use the one the checkpoint was trained with (run.json records it). A file's rows that cannot be
    read are listed all at once; ``skip_bad_rows=true`` evaluates the others and lists the skipped ones in the log
    header's ``skipped_rows``.
    """
    with task_errors("math_verified"):  # an unknown format, or one with tools: one message now, before any data loads
        try:
            build_messages("", 0, tools=tools, answer_format=answer_format)
        except ValueError as exc:
            raise DatasetError(str(exc)) from exc
    split = default_split(dataset, path) if split is None else split
    knobs = {}
    if dataset == "arithmetic":
        knobs = {"operations": _csv(operations), "min_value": min_value, "max_value": max_value, "steps": steps}
        limit = EVAL_ARITHMETIC_PROBLEMS if limit is None else limit
    with task_errors("math_verified"):  # one message and exit 1 on the command line, not a traceback
        problems = load_problems(
            dataset,
            path=path,
            split=split,
            limit=limit,
            seed=seed,
            shuffle=shuffle,
            skip_bad_rows=skip_bad_rows,
            **knobs,
        )
    samples = [record_to_sample(problem, num_shots, tools, answer_format) for problem in problems]
    solver = [generate()]
    if tools:
        limits = ToolLimits(tool_timeout_s, tool_memory_mb, tool_output_chars, tool_max_calls)
        solver = [use_tools(python_tool(limits)), generate()]
    return Task(
        dataset=MemoryDataset(samples, name=dataset),
        solver=solver,
        sandbox="bwrap" if tools else None,
        scorer=math_verifier(think=think, answer_format=answer_format),
        config=GenerateConfig(temperature=0.0, max_tokens=max_tokens),
        headline_metric=HEADLINE,
        metadata={
            "verifier": verifier_id(think, answer_format),
            "dataset": dataset,
            "num_shots": num_shots,
            "split": split,
            # a user's file (any dataset with a path) is evaluated whole and never known to be held out: training may
            # have read the same file (problems/math_data.py)
            "held_out": not is_file(dataset, path),
            "tools": tools,
            "answer_format": answer_format,
            **({"skipped_rows": [str(row) for row in skipped_rows(problems)]} if skip_bad_rows else {}),
        },
    )


# The Hub-backed tasks are registered with task(...) rather than the @task decorator, so that
# `inspect eval evals/` (which discovers decorated tasks) runs offline; name them explicitly.
def _gsm8k_verified(
    split: str | None = EVAL_SPLIT,
    path: str | None = None,
    limit: int | None = None,
    num_shots: int = DEFAULT_SHOTS,
    think: str = "none",
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> Task:
    """GSM8K (``openai/gsm8k``, answer after ``####``) scored by the training verifier (``-T answer_format=gsm8k``
    asks the model for GSM8K's own ``#### <answer>`` line)."""
    return math_verified(
        dataset="gsm8k",
        path=path,
        split=split,
        limit=limit,
        num_shots=num_shots,
        max_tokens=512,
        think=think,
        answer_format=answer_format,
    )


def _math500_verified(
    split: str | None = EVAL_SPLIT,
    path: str | None = None,
    limit: int | None = None,
    num_shots: int = 0,
    think: str = "none",
    answer_format: str = DEFAULT_ANSWER_FORMAT,
) -> Task:
    """MATH-500 (``HuggingFaceH4/MATH-500``) scored by the training verifier (``-T answer_format=minerva`` asks for
    Minerva's ``Final Answer: The final answer is $<answer>$. I hope it is correct.``)."""
    return math_verified(
        dataset="math500",
        path=path,
        split=split,
        limit=limit,
        num_shots=num_shots,
        max_tokens=1024,
        think=think,
        answer_format=answer_format,
    )


gsm8k_verified = task(name="gsm8k_verified")(_gsm8k_verified)
math500_verified = task(name="math500_verified")(_math500_verified)
