"""How close the references and candidates we know of come to the verifier's structural limits.

    python scripts/verifier_limits_report.py [answers.jsonl ...]

``rewards.math.complexity`` decides what is too complex from the expression alone; its limits must let
every reference a real dataset uses through. This reads the answers of the shipped GSM8K and MATH-500
fixtures, the scorecard example and the verifier tables (plus any JSONL files given, with an ``answer``
or ``reference`` field), parses every symbolic leaf the way the workers do, and prints, per limit, the
largest value seen and how many references and candidates that limit would refuse. Each file given is reported on its
own first (its references, then its candidates), apart from the project's answers; a file that is missing or is not
JSON lines is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from rewards.math import complexity, structure  # noqa: E402
from rewards.math.answer_tree import Chain, Collection, Leaf, Matrix, TooComplex, Unparseable  # noqa: E402
from rewards.math.exact_numbers import parse_number  # noqa: E402
from rewards.math.symbolic import parse_leaf  # noqa: E402
from tests.rewards.math import test_sets_tuples_and_lists as sets  # noqa: E402
from tests.rewards.math import test_verifier_limits as limits  # noqa: E402
from tests.rewards.math import test_verifier_table as table  # noqa: E402

FILES = [
    REPO / "tests/fixtures/gsm8k_sample.jsonl",
    REPO / "tests/fixtures/math500_sample.jsonl",
    REPO / "evals/data/verifier_scorecard_example.jsonl",
]


def table_pairs() -> list[tuple[str, str]]:
    """(candidate, reference) rows of the verifier tables."""
    rows = table.POSITIVES + table.NEGATIVES + limits.DECIDED_WITHOUT_A_CLOCK
    for name in ("INTERVAL_SETS", "PLUS_MINUS_EQUATIONS", "SOLUTION_TUPLES", "DOUBLED_BACKSLASHES", "LISTS_OF_BOXES"):
        rows += getattr(sets, name)
    return [tuple(getattr(row, "values", row)[:2]) for row in rows]


class BadFile(Exception):
    """A file given on the command line that cannot be read as answers: the one line to print."""


def file_answers(path: Path) -> tuple[list[str], list[str]]:
    references, candidates = [], []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadFile(
            f"{path}: cannot be read ({error.__class__.__name__}: {getattr(error, 'strerror', error)})"
        ) from None
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise BadFile(f"{path}:{number}: not a JSON object ({error.msg})") from None
            if not isinstance(row, dict):
                raise BadFile(f"{path}:{number}: not a JSON object")
            answer = str(row.get("answer", row.get("reference", "")))
            references.append(answer.rpartition("####")[2].strip())  # GSM8K: the solution, then "#### <answer>"
            if "candidate" in row:
                candidates.append(str(row["candidate"]))
    return references, candidates


def leaves(tree):
    if isinstance(tree, Leaf):
        yield tree.text
    elif isinstance(tree, Chain):
        for part in tree.parts:
            yield from leaves(part)
    elif isinstance(tree, Collection):
        for item in tree.items:
            yield from leaves(item)
    elif isinstance(tree, Matrix):
        for row in tree.rows:
            for cell in row:
                yield from leaves(cell)


def symbolic_leaves(answer: str) -> list:
    """The sympy trees of an answer's symbolic leaves (numbers and words never reach sympy)."""
    try:
        tree = structure.parse_structure(structure.normalize(answer), equations=structure.REFERENCE)
    except (Unparseable, TooComplex):
        return []
    exprs = []
    for text in leaves(tree):
        core = structure.split_quantity(text).core
        if structure.text_answer(text) is not None:
            continue
        try:
            if parse_number(core) is not None:
                continue
        except Exception:  # noqa: BLE001 - a number too large for the exact path goes to sympy
            pass
        try:
            exprs.append(parse_leaf.__wrapped__(core))
        except (Unparseable, TooComplex):
            continue
    return exprs


def measures(expr) -> dict[str, float]:
    import sympy

    if not isinstance(expr, sympy.Basic) or isinstance(expr, sympy.MatrixBase):
        return {}
    return {
        "nodes": sum(1 for _ in sympy.preorder_traversal(expr)),
        "degree": complexity.degree_bound(expr),
        "free symbols": len(expr.free_symbols),
        "nesting": complexity.nesting(expr),
        "expanded terms": complexity.expanded_terms(expr),
    }


LIMITS = {
    "nodes": complexity.MAX_NODES,
    "degree": complexity.MAX_DEGREE,
    "free symbols": complexity.MAX_FREE_SYMBOLS,
    "nesting": complexity.MAX_NESTING,
    "expanded terms": complexity.MAX_EXPANDED_TERMS,
}


def report(kind: str, answers: list[str]) -> None:
    exprs = [(answer, expr) for answer in dict.fromkeys(answers) for expr in symbolic_leaves(answer)]
    print(f"\n== {kind}: {len(set(answers))} distinct answers, {len(exprs)} symbolic leaves ==")
    print(f"{'measure':16s} {'limit':>8s} {'largest':>8s} {'over':>5s}  largest at")
    for name, limit in LIMITS.items():
        values = [(measures(expr).get(name, 0), answer) for answer, expr in exprs]
        largest, where = max(values, default=(0, ""))
        over = sum(value > limit for value, _ in values)
        print(f"{name:16s} {limit:8d} {largest:8d} {over:5d}  {where[:60]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="more JSONL files with answer/reference fields")
    args = parser.parse_args()
    try:
        theirs = {path: file_answers(path) for path in args.files}
    except BadFile as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path, (refs, cands) in theirs.items():
        report(f"{path}: references", refs)
        if cands:
            report(f"{path}: candidates", cands)
    references, candidates = [], []
    for path in FILES:
        refs, cands = file_answers(path)
        references += refs
        candidates += cands
    from bench_verifier import SYMBOLIC  # the benchmark's MATH-style pairs

    report(
        "dataset references (fixtures, scorecard example, the benchmark's symbolic mix)",
        references + [r for _, r in SYMBOLIC],
    )
    pairs = table_pairs()
    report("verifier-table references", [reference for _, reference in pairs])
    report("candidates (tables, scorecard example, benchmark)", candidates + [c for c, _ in pairs + SYMBOLIC])
    print("\n('expanded terms' is not a limit on a leaf: it only chooses between exact methods and expansion)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
