"""The tasks behind the scorer table of docs/inspect-tasks.md: Inspect's built-in scorers and inspect_evals' tasks, each
as an Inspect task the exploit probe attacks (``python scripts/probe_scorers.py``; one row at a time:
``python scripts/probe_exploits.py --inspect_task scripts/scorer_table/tasks.py@builtin_includes``).

The built-in rows put one scorer behind the solver chain it is meant for (a prompt asking for ``ANSWER: $ANSWER`` then
``generate()``; ``multiple_choice()`` for ``choice()``), on a few hand-written samples of its kind: numeric word
problems (one with a six-digit answer, where rounding shows), multiple-choice questions, questions answered by a span
of a passage. The inspect_evals rows are those packages' own tasks (their solver chains, templates, scorers and
``record_to_sample``) with the dataset given locally: their ``hf_dataset`` call answered from a few records written
here in the Hub dataset's own format (no Hub here), and few-shot off.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from unittest import mock

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import answer, choice, exact, f1, includes, match, math, pattern
from inspect_ai.solver import generate, multiple_choice, prompt_template

from verigrpo import math_verifier

ANSWER_TEMPLATE = (
    "Solve the following problem. The last line of your response should be of the form "
    '"ANSWER: $ANSWER" (without quotes) where $ANSWER is the answer.\n\n{prompt}'
)

NUMERIC = [
    Sample(id="apples", input="Tom has 3 bags with 8 apples in each bag. How many apples does Tom have?", target="24"),
    Sample(
        id="library",
        input="A library had 125,000 books and bought 3,470 more. How many books does it have now?",
        target="128470",
    ),
    Sample(id="pages", input="Sara reads 15 pages a day for 4 days. How many pages does she read?", target="60"),
]
CHOICES = [
    Sample(
        id="planet",
        input="Which planet is known as the Red Planet?",
        choices=["Venus", "Mars", "Jupiter", "Saturn"],
        target="B",
    ),
    Sample(
        id="gas",
        input="Which gas do plants take from the air to make sugar?",
        choices=["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"],
        target="C",
    ),
]
SPANS = [
    Sample(
        id="tower",
        input="Context: The Eiffel Tower was completed in 1889 in Paris for the World's Fair.\n"
        "Question: In which city was the Eiffel Tower built?",
        target="Paris",
    ),
    Sample(
        id="curie",
        input="Context: Marie Curie won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in "
        "1911.\nQuestion: Who won the Nobel Prize in Chemistry in 1911?",
        target="Marie Curie",
    ),
]


def _numeric(scorer) -> Task:
    return Task(dataset=MemoryDataset(NUMERIC), solver=[prompt_template(ANSWER_TEMPLATE), generate()], scorer=scorer)


def _spans(scorer) -> Task:
    return Task(dataset=MemoryDataset(SPANS), solver=[generate()], scorer=scorer)


@task
def builtin_includes() -> Task:
    return _numeric(includes())


@task
def builtin_match() -> Task:
    return _numeric(match())


@task
def builtin_match_numeric() -> Task:
    return _numeric(match(numeric=True))


@task
def builtin_match_any_numeric() -> Task:
    return _numeric(match(location="any", numeric=True))


@task
def builtin_exact() -> Task:
    return _numeric(exact())


@task
def builtin_pattern() -> Task:
    return _numeric(pattern(r"ANSWER:\s*(\S+)\s*\Z"))


@task
def builtin_answer_line() -> Task:
    return _numeric(answer("line"))


@task
def builtin_answer_word() -> Task:
    return _numeric(answer("word"))


@task
def builtin_math() -> Task:
    return _numeric(math())


@task
def verigrpo_math_verifier() -> Task:
    return _numeric(math_verifier())


@task
def builtin_choice() -> Task:
    return Task(dataset=MemoryDataset(CHOICES), solver=multiple_choice(), scorer=choice())


@task
def builtin_choice_multiple_correct() -> Task:
    return Task(dataset=MemoryDataset(CHOICES), solver=multiple_choice(multiple_correct=True), scorer=choice())


@task
def builtin_answer_letter() -> Task:
    return Task(dataset=MemoryDataset(CHOICES), solver=multiple_choice(), scorer=answer("letter"))


@task
def builtin_f1() -> Task:
    return _spans(f1())


@task
def builtin_exact_spans() -> Task:
    return _spans(exact())


@task
def builtin_includes_spans() -> Task:
    return _spans(includes())


# ---- inspect_evals' own tasks, their datasets given locally ------------------------------------------------------

# records in each Hub dataset's own format, read by the eval's own record_to_sample
RECORDS = {
    "gsm8k": [
        {
            "question": "Tom has 3 bags with 8 apples in each bag. How many apples does Tom have?",
            "answer": "3 bags with 8 apples is 3 * 8 = <<3*8=24>>24 apples.\n#### 24",
        },
        {
            "question": "A library had 125,000 books and bought 3,470 more. How many books does it have now?",
            "answer": "125000 + 3470 = <<125000+3470=128470>>128470.\n#### 128470",
        },
    ],
    "aime2024": [
        {
            "ID": "2024-I-1",
            "Problem": "Find the number of positive integers n less than 1000 such that n is divisible by 7 and 11.",
            "Solution": "n must be a multiple of 77: 77, 154, ..., 924, that is 12 numbers.",
            "Answer": 12,
        },
        {
            "ID": "2024-I-2",
            "Problem": "What is the remainder when 2^10 is divided by 1000?",
            "Solution": "2^10 = 1024.",
            "Answer": 24,
        },
    ],
    "math": [
        {
            "problem": "What is $\\frac{1}{2} + \\frac{1}{3}$?",
            "solution": "The sum is $\\boxed{\\frac{5}{6}}$.",
            "level": "Level 1",
            "type": "Prealgebra",
        },
        {
            "problem": "Compute $17 \\cdot 3$.",
            "solution": "$17 \\cdot 3 = \\boxed{51}$.",
            "level": "Level 1",
            "type": "Prealgebra",
        },
    ],
    "arc": [
        {
            "id": "Mercury_1",
            "question": "Which planet is known as the Red Planet?",
            "choices": {"label": ["A", "B", "C", "D"], "text": ["Venus", "Mars", "Jupiter", "Saturn"]},
            "answerKey": "B",
        },
        {
            "id": "Mercury_2",
            "question": "Which gas do plants take from the air to make sugar?",
            "choices": {"label": ["A", "B", "C", "D"], "text": ["Oxygen", "Nitrogen", "Carbon dioxide", "Helium"]},
            "answerKey": "C",
        },
    ],
    "boolq": [
        {
            "question": "is paris the capital of france",
            "passage": "Paris is the capital and most populous city of France.",
            "answer": True,
        },
        {
            "question": "is the moon larger than the earth",
            "passage": "The Moon is Earth's only natural satellite; its diameter is about a quarter of Earth's.",
            "answer": False,
        },
    ],
    "squad": [
        {
            "id": "tower",
            "context": "The Eiffel Tower was completed in 1889 in Paris for the World's Fair.",
            "question": "In which city was the Eiffel Tower built?",
            "answers": {"text": ["Paris"], "answer_start": [45]},
        },
        {
            "id": "curie",
            "context": "Marie Curie won the Nobel Prize in Physics in 1903 and the Nobel Prize in Chemistry in 1911.",
            "question": "Who won the Nobel Prize in Chemistry in 1911?",
            "answers": {"text": ["Marie Curie"], "answer_start": [0]},
        },
    ],
    "drop": [
        {
            "query_id": "q1",
            "passage": "The Bears scored 14 points in the first half and 10 points in the second half.",
            "question": "How many points did the Bears score in all?",
            "answer": {"number": "24", "date": {"day": "", "month": "", "year": ""}, "spans": []},
            "validated_answers": {"number": ["24"], "date": [{"day": "", "month": "", "year": ""}], "spans": [[]]},
        },
        {
            "query_id": "q2",
            "passage": "Smith kicked a 45-yard field goal, then Jones caught a 12-yard pass from Brown.",
            "question": "Who threw the pass to Jones?",
            "answer": {"number": "", "date": {"day": "", "month": "", "year": ""}, "spans": ["Brown"]},
            "validated_answers": {"number": [""], "date": [{"day": "", "month": "", "year": ""}], "spans": [["Brown"]]},
        },
    ],
}


@contextmanager
def local_dataset(module_name: str, records: list[dict]):
    """The eval module's ``hf_dataset`` answering from ``records`` (through the eval's own ``sample_fields``)."""
    module = importlib.import_module(module_name)

    def hf_dataset(*args, sample_fields=None, limit=None, **kwargs):
        samples = [sample_fields(record) for record in records]
        return MemoryDataset(samples[:limit] if limit else samples)

    with mock.patch.object(module, "hf_dataset", hf_dataset):
        yield module


@task
def inspect_evals_gsm8k() -> Task:
    with local_dataset("inspect_evals.gsm8k.gsm8k", RECORDS["gsm8k"]) as module:
        return module.gsm8k(fewshot=0)


@task
def inspect_evals_aime2024() -> Task:
    with local_dataset("inspect_evals.aime2024.aime2024", RECORDS["aime2024"]) as module:
        return module.aime2024()


@task
def inspect_evals_math() -> Task:
    """MATH's two rule-based scorers (its third, ``expression_equivalance``, asks a grader model)."""
    from inspect_ai import task_with

    with local_dataset("inspect_evals.math.math", RECORDS["math"]) as module:
        full = module.math(fewshot=0)
    return task_with(full, scorer=[module.expression_exact_match(), module.expression_exact_match_sympy()])


@task
def inspect_evals_arc_easy() -> Task:
    with local_dataset("inspect_evals.arc.arc", RECORDS["arc"]) as module:
        return module.arc_easy()


@task
def inspect_evals_boolq() -> Task:
    with local_dataset("inspect_evals.boolq.boolq", RECORDS["boolq"]) as module:
        return module.boolq(shuffle=False)


@task
def inspect_evals_squad() -> Task:
    with local_dataset("inspect_evals.squad.squad", RECORDS["squad"]) as module:
        return module.squad(shuffle=False)


@task
def inspect_evals_drop() -> Task:
    with local_dataset("inspect_evals.drop.drop", RECORDS["drop"]) as module:
        return module.drop(fewshot=0)
