"""Math problems, defined once for training and evaluation.

Every source yields ``MathProblem`` records; ``train/`` turns them into TRL rows and
``evals/math_task.py`` into Inspect samples, both with ``rewards.build_messages``, so the
policy is trained and scored on the same prompt. This module imports neither torch nor
Inspect; ``datasets`` is imported only when a Hub dataset is asked for.

Sources (``load_problems(source, ...)``):

==============  ==========================================================================
``arithmetic``  seeded procedural word problems, offline (the default everywhere)
``jsonl``       a local ``.jsonl`` file: one ``{"question", "answer", "id"?, "metadata"?}`` a line
``json``        a local ``.json`` file holding a list of such objects
``gsm8k``       ``openai/gsm8k`` (config ``main``); the answer is the text after ``####``
``math500``     ``HuggingFaceH4/MATH-500`` (split ``test``)
==============  ==========================================================================

``gsm8k`` and ``math500`` also read local files in the Hub's own schema (``path=``).

Splits: ``arithmetic`` has ``train`` and ``test`` (disjoint by content), the Hub datasets their Hub splits. A file
(``jsonl``, ``json``) is one set of problems with no split it could hold out: ``all`` (or ``train``, what training
asks for) is the whole file, and ``test`` is refused rather than answered with problems training may have used
(hold problems out in a file of their own). ``split=None`` is the source's default: ``test`` where the source has one,
``all`` for a file (``FILE_SPLIT``).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rewards import InvalidReference, check_reference

SOURCES = ("arithmetic", "jsonl", "json", "gsm8k", "math500")
FILE_SOURCES = ("jsonl", "json")
FILE_SPLIT = "all"  # a file's one split: every problem in it
FILE_SPLITS = (FILE_SPLIT, "train")  # "train": training reads the whole file
DEFAULT_ARITHMETIC_PROBLEMS = 200  # generated when no limit is given (training's dataset_size unset)
GSM8K_HUB_ID = "openai/gsm8k"
MATH500_HUB_ID = "HuggingFaceH4/MATH-500"


class DatasetError(ValueError):
    """A dataset problem a user must fix: names the file, line and field."""


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


# ---- local files ----------------------------------------------------------------------------


def _problem_from_record(record: object, where: str, index: int, prefix: str) -> MathProblem:
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected a JSON object with 'question' and 'answer', got {type(record).__name__}")
    missing = [key for key in ("question", "answer") if key not in record]
    if missing:
        raise DatasetError(f"{where}: missing field(s) {missing}; every record needs 'question' and 'answer'")
    question, answer = record["question"], record["answer"]
    if not isinstance(question, str) or not question.strip():
        raise DatasetError(f"{where}: 'question' must be a non-empty string")
    if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
        raise DatasetError(f"{where}: 'answer' must be a string or a number, got {type(answer).__name__}")
    answer = str(answer).strip()
    if not answer:
        raise DatasetError(f"{where}: 'answer' is empty")
    try:
        check_reference(answer)
    except InvalidReference as exc:
        raise DatasetError(f"{where}: the verifier cannot read this answer ({exc}); fix the record") from None
    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DatasetError(f"{where}: 'metadata' must be an object")
    return MathProblem(str(record.get("id", f"{prefix}-{index}")), question, answer, metadata)


def _error_position(exc: json.JSONDecodeError) -> tuple[int, int]:
    """(line, column) of a JSON error, both from 1, in the decoded text.

    When the input ends too early (a missing ``}``), ``json`` reports the end of the input, which is past
    the trailing newline: line 2, column 1 for a one-line record. The mistake is at the end of the last
    non-blank text, so that is where we point.
    """
    doc, pos = exc.doc, exc.pos
    if not doc[pos:].strip():
        pos = len(doc[:pos].rstrip())
    return doc.count("\n", 0, pos) + 1, pos - doc.rfind("\n", 0, pos)


def json_lines(path: Path) -> Iterator[tuple[int, object]]:
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                _, column = _error_position(exc)
                raise DatasetError(f"{path}:{lineno}: malformed JSON ({exc.msg} at column {column})") from None


def json_array(path: Path) -> Iterator[tuple[int, object]]:
    """Elements of a top-level JSON array with the line each starts on (json.load gives no positions)."""
    text = path.read_text(encoding="utf-8")
    decoder = json.JSONDecoder()
    try:
        position = text.index("[")
    except ValueError:
        raise DatasetError(f"{path}: expected a JSON array of problems") from None
    position += 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position >= len(text):
            raise DatasetError(f"{path}: the JSON array is not closed")
        if text[position] == "]":
            return
        lineno = text.count("\n", 0, position) + 1
        try:
            item, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            line, column = _error_position(exc)
            raise DatasetError(f"{path}:{line}: malformed JSON ({exc.msg} at column {column})") from None
        yield lineno, item


def json_records(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, record) from a ``.json`` array or a ``.jsonl`` file (any other suffix reads as jsonl)."""
    return json_array(path) if path.suffix == ".json" else json_lines(path)


def require_file(path: str | Path | None, source: str) -> Path:
    if path is None:
        raise DatasetError(f"dataset {source!r} needs a path (e.g. -T path=data/problems.jsonl)")
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist (resolved to {path.resolve()})")
    return path


def load_file(path: str | Path | None, source: str = "jsonl") -> list[MathProblem]:
    """Problems from a local ``.jsonl`` or ``.json`` file; any bad record is an error naming file:line."""
    path = require_file(path, source)
    rows = json_records(path)
    problems = [
        _problem_from_record(record, f"{path}:{lineno}", n, path.stem) for n, (lineno, record) in enumerate(rows)
    ]
    if not problems:
        raise DatasetError(f"{path}: no problems in file")
    duplicates = {problem_id for problem_id, count in Counter(p.id for p in problems).items() if count > 1}
    if duplicates:
        raise DatasetError(f"{path}: duplicate ids {sorted(duplicates)[:5]}")
    return problems


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


def gsm8k_problem(record: dict, index: int, where: str = GSM8K_HUB_ID) -> MathProblem:
    """One GSM8K row (``question``, ``answer`` ending in ``#### 42``) as a MathProblem."""
    solution = record.get("answer")
    if not isinstance(solution, str) or "####" not in solution:
        raise DatasetError(f"{where}: GSM8K answer must contain '#### <number>', got {str(solution)[:60]!r}")
    final = solution.rsplit("####", 1)[1].strip().replace(",", "")
    problem = _problem_from_record({"question": record.get("question"), "answer": final}, where, index, "gsm8k")
    return MathProblem(f"gsm8k-{index}", problem.question, problem.answer, {"source": "gsm8k", "solution": solution})


def math500_problem(record: dict, index: int, where: str = MATH500_HUB_ID) -> MathProblem:
    """One MATH-500 row (``problem``, ``answer``, ``unique_id``, ``subject``, ``level``) as a MathProblem."""
    base = _problem_from_record(
        {"question": record.get("problem"), "answer": record.get("answer")}, where, index, "math500"
    )
    metadata = {"source": "math500", **{k: record[k] for k in ("subject", "level") if k in record}}
    return MathProblem(str(record.get("unique_id", f"math500-{index}")), base.question, base.answer, metadata)


def load_gsm8k(split: str = "test", path: str | Path | None = None) -> list[MathProblem]:
    if path is not None:
        file = require_file(path, "gsm8k")
        return [gsm8k_problem(record, n, f"{file}:{lineno}") for n, (lineno, record) in enumerate(json_lines(file))]
    return [gsm8k_problem(dict(record), n) for n, record in enumerate(_load_hub(GSM8K_HUB_ID, "main", split))]


def load_math500(split: str = "test", path: str | Path | None = None) -> list[MathProblem]:
    if path is not None:
        file = require_file(path, "math500")
        return [math500_problem(record, n, f"{file}:{lineno}") for n, (lineno, record) in enumerate(json_lines(file))]
    return [math500_problem(dict(record), n) for n, record in enumerate(_load_hub(MATH500_HUB_ID, None, split))]


# ---- one entry point ------------------------------------------------------------------------


def default_split(source: str) -> str:
    """The split ``split=None`` means: ``test`` where the source holds problems out, ``all`` for a file."""
    return FILE_SPLIT if source in FILE_SOURCES else "test"


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
    **arithmetic: object,
) -> list[MathProblem]:
    """Problems from any source; ``limit`` takes the first N after an optional seeded shuffle.

    Extra keyword arguments go to ``procedural_arithmetic`` (``operations``, ``min_value``,
    ``max_value``, ``steps``); with ``arithmetic``, ``limit`` is the number generated (default ``DEFAULT_ARITHMETIC_PROBLEMS``, 200: training's default).
    ``split``: None is the source's default (``default_split``); a file refuses any split but ``all``/``train``.
    """
    if source not in SOURCES:
        raise DatasetError(f"unknown dataset {source!r}: choose from {list(SOURCES)}")
    split = default_split(source) if split is None else split
    if arithmetic and source != "arithmetic":
        raise DatasetError(f"options {sorted(arithmetic)} only apply to dataset 'arithmetic'")
    if source == "arithmetic":
        problems = procedural_arithmetic(
            n=DEFAULT_ARITHMETIC_PROBLEMS if limit is None else limit, seed=seed, split=split, **arithmetic
        )
    elif source in FILE_SOURCES:
        check_file_split(source, path, split)
        problems = load_file(path, source)
    elif source == "gsm8k":
        problems = load_gsm8k(split, path)
    else:
        problems = load_math500(split, path)
    if shuffle:
        problems = list(problems)
        random.Random(seed).shuffle(problems)
    return problems[:limit] if limit is not None else problems
