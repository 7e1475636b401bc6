"""Math problems, defined once for training and evaluation.

Every source yields ``MathProblem`` records; ``train/`` turns them into TRL rows and
``evals/math_task.py`` into Inspect samples, both with ``rewards.build_messages``, so the
policy is trained and scored on the same prompt. This module imports neither torch nor
Inspect; ``datasets`` is imported only when a Hub dataset is asked for.

Sources (``load_problems(source, ...)``):

==============  ==========================================================================
``arithmetic``  seeded procedural word problems, offline (the default everywhere)
``jsonl``       a local ``.jsonl`` file, each row in one of ``ROW_SHAPES``: ``{"question", "answer"}``
                (the reference), GSM8K's (a worked solution ending ``#### 72``) or MATH's
                (``{"problem", "solution"}`` with ``\\boxed{}``, ``answer`` optional), read by its shape
``json``        a local ``.json`` file holding a list of such objects
``gsm8k``       ``openai/gsm8k`` (config ``main``); the answer is the text after ``####``
``math500``     ``HuggingFaceH4/MATH-500`` (split ``test``)
==============  ==========================================================================

``gsm8k`` and ``math500`` also read local files in the Hub's own schema (``path=``; MATH's rows may leave out
``answer``). A worked solution's reference is read by one function, ``solution_reference``, for every source.

Every row that cannot be read is reported at once (``problems/file_rows.py``: ``file:line: reason``), or left out
with ``skip_bad_rows=True`` (the returned list's ``.skipped`` names them).

Splits: ``arithmetic`` has ``train`` and ``test`` (disjoint by content), the Hub datasets their Hub splits. A file
(``jsonl``, ``json``, or a local copy given to ``gsm8k``/``math500`` with ``path``) is one set of problems with no
split it could hold out: ``all`` (or ``train``, what training asks for) is the whole file, and ``test`` is refused
rather than answered with problems training may have used (hold problems out in a file of their own).
``split=None`` is the source's default: ``test`` where the source has one, ``all`` for a file (``FILE_SPLIT``).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from problems.file_rows import (  # DatasetError is defined there and imported from here by many callers
    DatasetError,
    LoadedProblems,
    RowError,
    file_records,
    read_rows,
    require_file,
    shown,
)
from rewards import InvalidReference, check_reference, find_final_answer

SOURCES = ("arithmetic", "jsonl", "json", "gsm8k", "math500")
FILE_SOURCES = ("jsonl", "json")
FILE_SPLIT = "all"  # a file's one split: every problem in it
FILE_SPLITS = (FILE_SPLIT, "train")  # "train": training reads the whole file
DEFAULT_ARITHMETIC_PROBLEMS = 200  # generated when no limit is given (training's dataset_size unset)
GSM8K_HUB_ID = "openai/gsm8k"
MATH500_HUB_ID = "HuggingFaceH4/MATH-500"


@dataclass(frozen=True)
class MathProblem:
    id: str
    question: str
    answer: str
    metadata: dict = field(default_factory=dict, hash=False, compare=False)


# ---- procedural arithmetic ------------------------------------------------------------------

_NAMES = ("Ava", "Ben", "Chen", "Dara", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Jo", "Kofi", "Lena", "Mateo", "Nia")
_ITEMS = ("apples", "marbles", "stickers", "books", "pencils", "cookies", "shells", "coins", "cards", "stamps")
_CONTAINERS = ("boxes", "bags", "jars", "baskets", "crates")

# One phrasing per (operation, variant): (template for a first step, template for a later step).
# {a} is the running total (only in a first step), {b} the new operand, {n} a name, {i} the items.
_STEPS = {
    "add": (
        ("{n} has {a} {i}. {n} gets {b} more.", "Then {n} gets {b} more."),
        ("There are {a} {i} on a shelf. Someone puts {b} more {i} on it.", "Then {b} more {i} are added."),
    ),
    "sub": (
        ("{n} has {a} {i}. {n} gives away {b} of them.", "Then {n} gives away {b} of them."),
        ("A jar holds {a} {i}. {b} {i} are taken out.", "Then {b} of the {i} are removed."),
    ),
    "mul": (
        ("{n} has {a} {c} with {b} {i} in each.", "Then the number of {i} is multiplied by {b}."),
        ("Each of {a} friends brings {b} {i}.", "Then the number of {i} becomes {b} times as large."),
    ),
    "div": (
        (
            "{n} shares {a} {i} equally among {b} friends.",
            "Then the {i} are split equally into {b} groups and one group is kept.",
        ),
        (
            "{a} {i} are packed equally into {b} {c}.",
            "Then the {i} are shared equally among {b} people and one share is kept.",
        ),
    ),
}
_QUESTIONS = {
    "add": "How many {i} are there now?",
    "sub": "How many {i} are left?",
    "mul": "How many {i} are there in total?",
    "div": "How many {i} does each one get?",
}
_MULTI_STEP_QUESTION = "How many {i} are there at the end?"
OPERATIONS = tuple(_STEPS)


@dataclass(frozen=True)
class ArithmeticSettings:
    """How procedural problems are drawn. ``ARITHMETIC_DEFAULTS`` is the one source of the defaults of
    ``procedural_arithmetic``, the eval task's ``-T operations/min_value/max_value/steps`` and training's
    ``arithmetic_*`` keys."""

    operations: tuple[str, ...] = ("add", "sub", "mul")
    min_value: int = 1
    max_value: int = 20
    steps: int = 1


ARITHMETIC_DEFAULTS = ArithmeticSettings()


def _apply(op: str, total: int, operand: int) -> int:
    return {"add": total + operand, "sub": total - operand, "mul": total * operand, "div": total // operand}[op]


def _operand(rng: random.Random, op: str, total: int, low: int, high: int) -> int | None:
    """An operand that keeps the running total a non-negative integer, or None if none fits."""
    if op == "sub":
        return rng.randint(min(low, total), total) if total >= 1 else None
    if op == "div":
        divisors = [d for d in range(max(2, low), min(high, total) + 1) if total % d == 0]
        return rng.choice(divisors) if divisors else None
    if op == "mul":
        return rng.randint(max(2, low), max(2, min(high, 12)))
    return rng.randint(low, high)


def _split_of(key: str) -> str:
    """Deterministic 80/20 partition by content, so train and test never share a problem."""
    return "test" if int(hashlib.sha256(key.encode()).hexdigest(), 16) % 5 == 0 else "train"


def procedural_arithmetic(
    n: int = DEFAULT_ARITHMETIC_PROBLEMS,
    seed: int = 0,
    split: str = "train",
    operations: Iterable[str] = ARITHMETIC_DEFAULTS.operations,
    min_value: int = ARITHMETIC_DEFAULTS.min_value,
    max_value: int = ARITHMETIC_DEFAULTS.max_value,
    steps: int = ARITHMETIC_DEFAULTS.steps,
) -> list[MathProblem]:
    """``n`` seeded word problems with integer answers.

    ``operations`` from ``add, sub, mul, div``; operands drawn from ``[min_value, max_value]``;
    ``steps`` operations chained per problem. ``split`` is ``train`` or ``test``: the two are
    disjoint by construction (content hash), so an eval on ``test`` is held out from training.
    """
    operations = tuple(operations)
    unknown = sorted(set(operations) - set(OPERATIONS))
    if unknown or not operations:
        raise DatasetError(f"unknown arithmetic operations {unknown}: choose from {list(OPERATIONS)}")
    if split not in ("train", "test"):
        raise DatasetError(f"split must be 'train' or 'test', got {split!r}")
    if not (0 <= min_value <= max_value) or steps < 1 or n < 0:
        raise DatasetError(f"need 0 <= min_value <= max_value and steps >= 1, got {min_value}, {max_value}, {steps}")
    rng = random.Random(f"{seed}:{split}")
    problems: list[MathProblem] = []
    seen: set[str] = set()
    attempts = 0
    while len(problems) < n:
        attempts += 1
        if attempts > 200 * (n + 10):
            raise DatasetError(
                f"could only make {len(problems)} of {n} distinct {split} problems; widen the number range"
            )
        names = {"n": rng.choice(_NAMES), "i": rng.choice(_ITEMS), "c": rng.choice(_CONTAINERS)}
        total = rng.randint(max(min_value, 1), max(max_value, 1))
        sentences, ops = [], []
        for step in range(steps):
            op = rng.choice(operations)
            operand = _operand(rng, op, total, min_value, max_value)
            if operand is None:
                break
            first, later = rng.choice(_STEPS[op])
            template = first if step == 0 else later
            sentences.append(template.format(a=total, b=operand, **names))
            total = _apply(op, total, operand)
            ops.append(op)
        if len(ops) < steps:
            continue
        ask = _QUESTIONS[ops[-1]] if steps == 1 else _MULTI_STEP_QUESTION
        question = " ".join(sentences) + " " + ask.format(**names)
        if question in seen or _split_of(question) != split:
            continue
        seen.add(question)
        problem_id = f"arith-{split}-{hashlib.sha256(question.encode()).hexdigest()[:10]}"
        problems.append(MathProblem(problem_id, question, str(total), {"source": "arithmetic", "operations": ops}))
    return problems


# ---- the rows of a file: three shapes ------------------------------------------------------

# What a row of a problem file may look like; a `jsonl`/`json` file may hold any of them (each row is read by its own
# shape: ``row_shape``), the `gsm8k` and `math500` sources read their own. docs/training.md shows each.
ROW_SHAPES = {
    "plain": "{question, answer}: the answer is the reference",
    "gsm8k": "GSM8K's {question, answer}: the answer is a worked solution ending '#### <reference>'",
    "math": "MATH's {problem, solution, answer?}: 'answer' is the reference, or else the solution's \\boxed{...}",
}
ROW_SHAPES_DOC = "docs/training.md#your-own-math-problems"
_THOUSANDS = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")  # GSM8K's "6,000": a separator, not a list


def row_shape(record: dict) -> str:
    """The shape of a row (``ROW_SHAPES``): MATH's when it has ``problem`` and no ``question``; GSM8K's when its
    ``answer`` is text holding ``####``; else plain."""
    if "problem" in record and "question" not in record:
        return "math"
    answer = record.get("answer")
    return "gsm8k" if isinstance(answer, str) and "####" in answer else "plain"


def solution_reference(solution: str) -> str:
    r"""The reference a worked solution states, for GSM8K's and MATH's rows alike: the text after its last ``####``
    (GSM8K's marker; a thousands separator dropped: ``6,000`` -> ``6000``), else its one final answer read as the
    verifier reads a completion (``rewards.find_final_answer``: MATH's ``\boxed{...}``). RowError saying why when
    it states none, or several."""
    if "####" in solution:
        final = solution.rsplit("####", 1)[1].strip()
        if not final:
            raise RowError("nothing follows '####' in the solution: GSM8K's solutions end '#### <answer>'")
        return final.replace(",", "") if _THOUSANDS.fullmatch(final) else final
    found = find_final_answer(solution)
    if found.answer is None:
        raise RowError(f"the solution states no single final answer (a \\boxed{{...}} or '#### ...'): {found.detail}")
    return found.answer


def checked_reference(answer: object, field_name: str = "answer") -> str:
    """A reference the verifier can read, as text; RowError quoting the file's own text otherwise."""
    if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
        raise RowError(f"{field_name!r} must be a string or a number, got {type(answer).__name__}")
    text = str(answer).strip()
    if not text:
        raise RowError(f"{field_name!r} is empty")
    try:
        check_reference(text)
    except InvalidReference as exc:
        why = str(exc).removeprefix(f"reference {text!r} cannot be parsed: ")
        raise RowError(f"the verifier cannot read the answer {shown(text)}: {why}") from None
    return text


def _text(record: dict, key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RowError(f"{key!r} must be a non-empty string")
    return value


def _object(record: object) -> dict:
    if not isinstance(record, dict):
        shapes = "; ".join(ROW_SHAPES.values())
        raise RowError(f"expected a JSON object, one of: {shapes}; got {type(record).__name__}")
    return record


def _metadata(record: dict) -> dict:
    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        raise RowError("'metadata' must be an object")
    return dict(metadata)


def _missing(record: dict, keys: tuple[str, ...], shape: str, other: str) -> None:
    missing = [key for key in keys if key not in record]
    if missing:
        raise RowError(f"missing field(s) {missing} for {ROW_SHAPES[shape]}; {other} (see {ROW_SHAPES_DOC})")


def plain_problem(record: dict, index: int, prefix: str) -> MathProblem:
    """A ``{question, answer, id?, metadata?}`` row: the answer is the reference."""
    _missing(record, ("question", "answer"), "plain", f"or {ROW_SHAPES['gsm8k']}; or {ROW_SHAPES['math']}")
    question, answer = _text(record, "question"), checked_reference(record["answer"])
    return MathProblem(str(record.get("id", f"{prefix}-{index}")), question, answer, _metadata(record))


def gsm8k_problem(record: dict, index: int, prefix: str = "gsm8k") -> MathProblem:
    """A GSM8K row (``question``, ``answer`` = a worked solution ending ``#### 42``): the reference follows ``####``."""
    _missing(record, ("question", "answer"), "gsm8k", "dataset jsonl reads each row's own shape")
    solution = record["answer"]
    if not isinstance(solution, str) or "####" not in solution:
        raise RowError(
            f"a GSM8K answer is a worked solution ending '#### <answer>', got {shown(str(solution), 60)}; a file "
            "whose answers are the references themselves is dataset jsonl (or json)"
        )
    reference = checked_reference(solution_reference(solution))
    problem_id = str(record.get("id", f"{prefix}-{index}"))
    return MathProblem(problem_id, _text(record, "question"), reference, {"source": "gsm8k", "solution": solution})


def math_problem(record: dict, index: int, prefix: str = "math500") -> MathProblem:
    r"""A MATH row (``problem``, ``solution`` with ``\boxed{...}``, ``answer`` as MATH-500 adds it, ``unique_id``,
    ``subject``, ``level``): the reference is ``answer`` when given, else the solution's final answer."""
    if "problem" not in record:
        raise RowError(
            f"missing field 'problem' for {ROW_SHAPES['math']}; a row with 'question' is read by dataset jsonl "
            f"(see {ROW_SHAPES_DOC})"
        )
    if "answer" in record and record["answer"] is not None:
        reference = checked_reference(record["answer"])
    elif isinstance(record.get("solution"), str):
        reference = checked_reference(solution_reference(record["solution"]), "solution")
    else:
        raise RowError(f"missing 'answer' and 'solution' (a string) for {ROW_SHAPES['math']} (see {ROW_SHAPES_DOC})")
    metadata = {"source": "math", **{k: record[k] for k in ("subject", "level") if k in record}}
    problem_id = str(record.get("unique_id", record.get("id", f"{prefix}-{index}")))
    return MathProblem(problem_id, _text(record, "problem"), reference, metadata)


def file_problem(record: object, index: int, prefix: str) -> MathProblem:
    """A row of a `jsonl`/`json` file, read by its own shape (``row_shape``)."""
    record = _object(record)
    shape = row_shape(record)
    if shape == "gsm8k":
        problem = gsm8k_problem(record, index, prefix)
    elif shape == "math":
        problem = math_problem(record, index, prefix)
    else:
        return plain_problem(record, index, prefix)
    shaped = {key: value for key, value in problem.metadata.items() if key != "source"}
    metadata = {**shaped, **_metadata(record), "row_shape": shape}
    return MathProblem(str(record.get("id", problem.id)), problem.question, problem.answer, metadata)


# ---- local files ----------------------------------------------------------------------------


def load_file(path: str | Path | None, source: str = "jsonl", *, skip_bad_rows: bool = False) -> list[MathProblem]:
    """Problems from a local ``.jsonl`` or ``.json`` file, each row read by its shape (``ROW_SHAPES``): every bad row
    reported at once (UnreadableRows), or left out with ``skip_bad_rows``."""
    path = require_file(path, source)
    return read_rows(
        str(path), file_records(path), partial(file_problem, prefix=path.stem), skip_bad_rows=skip_bad_rows
    )


# ---- Hub datasets ---------------------------------------------------------------------------


class DatasetUnavailable(DatasetError):
    """A Hub dataset could not be fetched (offline, no network, no access): the fix is a local copy."""


def _load_hub(hub_id: str, config: str | None, split: str) -> Iterable[dict]:
    try:
        import datasets
    except ImportError as exc:
        raise DatasetUnavailable(f"loading {hub_id} needs the 'datasets' package: pip install -e '.[train]'") from exc
    try:
        return datasets.load_dataset(hub_id, config, split=split)
    except Exception as exc:  # network, offline mode, auth: all mean "not available here"; the cause is chained
        cause = " ".join(f"{type(exc).__name__}: {exc}".split())  # one paragraph, whatever the library printed
        raise DatasetUnavailable(
            f"could not load {hub_id} (split {split!r}) from the Hugging Face Hub: {cause}. Check the network "
            "and that HF_HUB_OFFLINE / HF_DATASETS_OFFLINE are not set, or download it once and pass a local copy "
            "(dataset_path: <file.jsonl> in a training config, -T path=<file.jsonl> for an eval task)."
        ) from exc


def _hub_or_file(hub_id: str, config: str | None, split: str, path) -> tuple[str, Iterable[tuple[str, object]]]:
    """(name, (where, record) pairs): the local copy at ``path`` (its rows by ``file:line``), else the Hub split."""
    if path is not None:
        file = require_file(path, hub_id)
        return str(file), file_records(file)
    return hub_id, ((f"{hub_id} {split} row {n}", dict(r)) for n, r in enumerate(_load_hub(hub_id, config, split)))


def _gsm8k_row(record: object, index: int) -> MathProblem:
    record = _object(record)
    if row_shape(record) == "math":
        raise RowError(f"this row is {ROW_SHAPES['math']}: read the file with dataset jsonl (each row by its shape)")
    return gsm8k_problem(record, index)


def _math500_row(record: object, index: int) -> MathProblem:
    problem = math_problem(_object(record), index)
    return MathProblem(problem.id, problem.question, problem.answer, {**problem.metadata, "source": "math500"})


def load_gsm8k(split: str = "test", path: str | Path | None = None, *, skip_bad_rows: bool = False) -> list:
    """GSM8K from the Hub (``split``) or a local copy in its schema (``path``)."""
    name, records = _hub_or_file(GSM8K_HUB_ID, "main", split, path)
    return read_rows(name, records, _gsm8k_row, skip_bad_rows=skip_bad_rows)


def load_math500(split: str = "test", path: str | Path | None = None, *, skip_bad_rows: bool = False) -> list:
    """MATH-500 from the Hub (``split``) or a local file in MATH's schema (``path``; ``answer`` may be left out)."""
    name, records = _hub_or_file(MATH500_HUB_ID, None, split, path)
    return read_rows(name, records, _math500_row, skip_bad_rows=skip_bad_rows)


# ---- one entry point ------------------------------------------------------------------------


def is_file(source: str, path) -> bool:
    """Whether ``source`` reads a user's file: a `jsonl`/`json` source, or a Hub source given a local ``path``. A file
    is one set of problems: nothing in it is known to be held out."""
    return source in FILE_SOURCES or (source != "arithmetic" and path is not None)


def default_split(source: str, path=None) -> str:
    """The split ``split=None`` means: ``test`` where the source holds problems out, ``all`` for a file."""
    return FILE_SPLIT if is_file(source, path) else "test"


def check_file_split(source: str, path, split: str) -> None:
    """A file has no held-out split: ``test`` (or any name but ``all``/``train``) is refused, naming the fix."""
    if split not in FILE_SPLITS:
        raise DatasetError(
            f"dataset {source!r} ({path}) has no {split!r} split: a file is one set of problems, read whole "
            f"(split={FILE_SPLIT}), so it cannot tell problems training used from held-out ones. Put the held-out "
            f"problems in a file of their own and evaluate that file with split={FILE_SPLIT}."
        )


def load_problems(
    source: str = "arithmetic",
    path: str | Path | None = None,
    split: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    shuffle: bool = False,
    skip_bad_rows: bool = False,
    **arithmetic: object,
) -> list[MathProblem]:
    """Problems from any source; ``limit`` takes the first N after an optional seeded shuffle.

    Extra keyword arguments go to ``procedural_arithmetic`` (``operations``, ``min_value``,
    ``max_value``, ``steps``); with ``arithmetic``, ``limit`` is the number generated (default ``DEFAULT_ARITHMETIC_PROBLEMS``, 200: training's default).
    ``split``: None is the source's default (``default_split``); a file refuses any split but ``all``/``train``.
    Rows that cannot be read: UnreadableRows lists them all; ``skip_bad_rows`` leaves them out, and the list returned
    names them (``problems.file_rows.skipped_rows``).
    """
    if source not in SOURCES:
        raise DatasetError(f"unknown dataset {source!r}: choose from {list(SOURCES)}")
    split = default_split(source, path) if split is None else split
    if arithmetic and source != "arithmetic":
        raise DatasetError(f"options {sorted(arithmetic)} only apply to dataset 'arithmetic'")
    if is_file(source, path):
        check_file_split(source, path, split)
    if source == "arithmetic":
        problems = procedural_arithmetic(
            n=DEFAULT_ARITHMETIC_PROBLEMS if limit is None else limit, seed=seed, split=split, **arithmetic
        )
    elif source in FILE_SOURCES:
        problems = load_file(path, source, skip_bad_rows=skip_bad_rows)
    elif source == "gsm8k":
        problems = load_gsm8k(split, path, skip_bad_rows=skip_bad_rows)
    else:
        problems = load_math500(split, path, skip_bad_rows=skip_bad_rows)
    skipped, total = getattr(problems, "skipped", ()), getattr(problems, "total", None)
    if shuffle:
        problems = list(problems)
        random.Random(seed).shuffle(problems)
    return LoadedProblems(problems[:limit] if limit is not None else problems, skipped, total)
