r"""Measure the math verifier on your own labeled pairs before you train against it.

``python scripts/verifier_scorecard.py LABELED.jsonl`` (or ``python -m rewards.scorecard``) reads one JSON
object per line::

    {"candidate": "x \\in [-2, 7]", "reference": "-2 \\le x \\le 7", "expected": true, "tags": ["interval"]}

and prints precision, recall, the false-accept rate (labeled-different pairs it called equal: what a
policy would be paid for), errors, latency (p50/p99/max) overall and per tag, then every disagreement
with the verdict's explanation. ``--compare math-verify`` runs Math-Verify on the same pairs when it is
installed. ``--completions`` grades each candidate as a whole completion (``rewards.grade``: extraction,
then equivalence) instead of an extracted answer (``rewards.is_correct``).

Standard library and ``rewards`` only (no torch, no Inspect), so it runs wherever the verifier does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rewards.math.math_verifier import InvalidReference, check, grade
from rewards.math.worker_pool import VerifierError, warm_up

# Verdicts do not depend on the wall-clock deadline (the candidate's budget is CPU time), so the
# scorecard waits for every verdict instead of counting a busy machine's misses as errors.
DEFAULT_DEADLINE_S = 60.0
SLOW_CALL_S = 1.0
_FIELDS = ("candidate", "reference", "expected", "tags")


class ScorecardInputError(ValueError):
    """A labeled file the scorecard cannot read: the message names the file, the line and the fix."""


@dataclass(frozen=True)
class LabeledPair:
    candidate: str | None
    reference: str
    expected: bool
    tags: tuple[str, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Judgement:
    """One pair as a judge saw it: its verdict (None on an error), why, and how long it took."""

    pair: LabeledPair
    got: bool | None
    reason: str
    explanation: str
    seconds: float


@dataclass(frozen=True)
class Stats:
    judged: int
    true_accepts: int
    false_accepts: int
    true_rejects: int
    false_rejects: int
    errors: int
    latencies: tuple[float, ...] = field(repr=False)

    @property
    def precision(self) -> float | None:
        return _ratio(self.true_accepts, self.true_accepts + self.false_accepts)

    @property
    def recall(self) -> float | None:
        return _ratio(self.true_accepts, self.true_accepts + self.false_rejects)

    @property
    def false_accept_rate(self) -> float | None:
        return _ratio(self.false_accepts, self.false_accepts + self.true_rejects)

    def latency(self, quantile: float) -> float | None:
        if not self.latencies:
            return None
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, math.ceil(quantile * len(ordered)) - 1)]


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _fail(path: Path, line: int, problem: str, fix: str) -> ScorecardInputError:
    return ScorecardInputError(f"{path}:{line}: {problem}. {fix}")


_EXAMPLE = '{"candidate": "1/2", "reference": "0.5", "expected": true, "tags": ["fractions"]}'


def _decode(path: Path, number: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = raw[exc.start : exc.start + 1]
        raise _fail(
            path,
            number,
            f"byte {byte!r} at column {exc.start + 1} is not UTF-8",
            "Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), or write the character as a JSON \\u escape",
        ) from None


def _load_json(path: Path, number: int, text: str) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(path, number, f"not JSON ({exc.msg})", f"Write one JSON object per line, e.g. {_EXAMPLE}") from None
    except RecursionError:
        raise _fail(
            path, number, "JSON nested too deeply to read", f"Write one flat JSON object per line, e.g. {_EXAMPLE}"
        ) from None
    except ValueError as exc:  # an integer literal longer than Python's int-str limit (4,300 digits)
        raise _fail(
            path,
            number,
            f"a number Python will not read ({str(exc).split(':')[0]})",
            'Quote long numbers as strings: "candidate": "123...", and write expected as true or false',
        ) from None


def _parse_line(path: Path, number: int, text: str) -> LabeledPair:
    example = _EXAMPLE
    row = _load_json(path, number, text)
    if not isinstance(row, dict):
        raise _fail(path, number, f"a JSON {_json_type(row)}, not an object", f"Write e.g. {example}")
    missing = [name for name in ("candidate", "reference", "expected") if name not in row]
    if missing:
        raise _fail(path, number, f"missing {', '.join(missing)}", f"Every line needs {_FIELDS[:3]}, e.g. {example}")
    candidate, reference, expected, tags = row["candidate"], row["reference"], row["expected"], row.get("tags", [])
    if candidate is not None and not isinstance(candidate, str):
        raise _fail(
            path,
            number,
            f"candidate is a JSON {_json_type(candidate)}, not a string",
            'Quote it (a number 0.5 becomes "0.5"); null means no answer',
        )
    if not isinstance(reference, str):
        raise _fail(
            path, number, f"reference is a JSON {_json_type(reference)}, not a string", 'Quote it: "reference": "0.5"'
        )
    if isinstance(expected, int) and not isinstance(expected, bool) and expected in (0, 1):
        expected = bool(expected)
    if not isinstance(expected, bool):
        raise _fail(
            path, number, f"expected is {_short(expected, 40)}", "Use true (the two are equal) or false (they are not)"
        )
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise _fail(path, number, "tags is not a list of strings", 'Write e.g. "tags": ["intervals", "hard"]')
    return LabeledPair(candidate, reference, expected, tuple(tags), number)


def _json_type(value: object) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def read_labeled(path: str | Path) -> list[LabeledPair]:
    """The labeled pairs of a JSONL file (blank lines skipped); ``ScorecardInputError`` on the first bad line."""
    path = Path(path)
    if not path.is_file():
        what = "a folder, not a file" if path.is_dir() else "no such file"
        raise ScorecardInputError(f"{path}: {what}. Pass a JSONL file with one labeled pair per line.")
    pairs = []
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                text = _decode(path, number, raw)
                if number == 1:
                    text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
                if text.strip():
                    pairs.append(_parse_line(path, number, text))
    except OSError as exc:
        raise ScorecardInputError(f"{path}: cannot read ({exc.strerror}). Check the file's permissions.") from None
    if not pairs:
        raise ScorecardInputError(f"{path}: no labeled pairs. Write one JSON object per line.")
    return pairs


def check_output_path(path: str | Path) -> Path:
    """Where ``--json`` will write, checked before any pair is judged so a finished run is never lost."""
    path = Path(path)
    parent = path.parent
    if path.is_dir():
        raise ScorecardInputError(f"--json {path}: a folder. Name a file to write, e.g. {path / 'verdicts.json'}")
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise ScorecardInputError(f"--json {path}: the folder {parent} {what}. Create it first: mkdir -p {parent}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ScorecardInputError(
            f"--json {path}: the file is not writable. Choose another path or fix its permissions"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ScorecardInputError(f"--json {path}: the folder {parent} is not writable. Choose a folder you can write")
    return path


Judge = Callable[[LabeledPair], tuple[bool | None, str, str]]


def verigrpo_judge(completions: bool = False, deadline_s: float = DEFAULT_DEADLINE_S) -> Judge:
    """``rewards.is_correct`` (or ``rewards.grade`` on whole completions) as a judge: (verdict, reason, explanation)."""

    def judge(pair: LabeledPair) -> tuple[bool | None, str, str]:
        try:
            if completions:
                verdict = grade(pair.candidate or "", pair.reference, deadline_s=deadline_s)
                return verdict.correct, verdict.reason.value, verdict.explanation
            outcome = check(pair.candidate, pair.reference, deadline_s)
        except InvalidReference as exc:
            return None, "invalid_reference", str(exc)
        except VerifierError as exc:
            return None, type(exc).__name__, str(exc)
        return outcome.equal, outcome.reason.value, outcome.detail

    return judge


def math_verify_judge() -> Judge:
    """Math-Verify 0.9 as a judge (its own extraction on both sides; ``$...$`` added to bare answers)."""
    import logging

    try:
        from math_verify import parse, verify
    except ImportError:
        raise ScorecardInputError(
            "--compare math-verify needs Math-Verify: pip install math-verify==0.9.0 (a dev extra of this project)."
        ) from None
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)  # it logs whole inputs on every timeout

    def delimited(text: str) -> str:
        return text if any(mark in text for mark in ("$", "\\boxed", "\\(", "\\[")) else f"${text}$"

    def judge(pair: LabeledPair) -> tuple[bool | None, str, str]:
        if pair.candidate is None:
            return False, "no_answer", "no answer"
        try:
            equal = bool(verify(parse(delimited(pair.reference)), parse(delimited(pair.candidate))))
        except Exception as exc:  # a baseline's crash is reported as that row's error, never as a verdict
            return None, "error", f"{type(exc).__name__}: {exc}"
        return equal, "equal" if equal else "different", ""

    return judge


def judge_all(
    pairs: Iterable[LabeledPair], judge: Judge, progress: Callable[[int], None] | None = None
) -> list[Judgement]:
    results = []
    for index, pair in enumerate(pairs, start=1):
        start = time.perf_counter()
        got, reason, explanation = judge(pair)
        results.append(Judgement(pair, got, reason, explanation, time.perf_counter() - start))
        if progress is not None:
            progress(index)
    return results


def stats(results: Iterable[Judgement]) -> Stats:
    counts = {"ta": 0, "fa": 0, "tr": 0, "fr": 0, "err": 0}
    latencies = []
    for result in results:
        latencies.append(result.seconds)
        if result.got is None:
            counts["err"] += 1
        elif result.got:
            counts["ta" if result.pair.expected else "fa"] += 1
        else:
            counts["fr" if result.pair.expected else "tr"] += 1
    judged = counts["ta"] + counts["fa"] + counts["tr"] + counts["fr"]
    return Stats(judged, counts["ta"], counts["fa"], counts["tr"], counts["fr"], counts["err"], tuple(latencies))


def by_tag(results: list[Judgement]) -> dict[str, Stats]:
    tags = sorted({tag for result in results for tag in result.pair.tags})
    return {tag: stats(r for r in results if tag in r.pair.tags) for tag in tags}


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{1000 * value:.1f}"


HEADER = (
    f"{'':28s} {'pairs':>5s} {'TA':>4s} {'FA':>4s} {'TR':>4s} {'FR':>4s} {'err':>4s} {'precision':>9s} "
    f"{'recall':>6s} {'false-acc':>9s} {'p50 ms':>7s} {'p99 ms':>7s} {'max ms':>7s}"
)


def stats_line(name: str, s: Stats) -> str:
    return (
        f"{name[:28]:28s} {s.judged + s.errors:5d} {s.true_accepts:4d} {s.false_accepts:4d} {s.true_rejects:4d} "
        f"{s.false_rejects:4d} {s.errors:4d} {_fmt(s.precision):>9s} {_fmt(s.recall):>6s} "
        f"{_fmt(s.false_accept_rate):>9s} {_ms(s.latency(0.5)):>7s} {_ms(s.latency(0.99)):>7s} {_ms(s.latency(1.0)):>7s}"
    )


def _short(text: str | None, limit: int = 160) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def disagreement_lines(results: list[Judgement]) -> list[str]:
    lines = []
    for r in results:
        if r.got is not None and r.got == r.pair.expected:
            continue
        label = "equal" if r.pair.expected else "different"
        verdict = "an error" if r.got is None else ("equal" if r.got else "different")
        tags = f" [{', '.join(r.pair.tags)}]" if r.pair.tags else ""
        lines.append(f"line {r.pair.line}{tags}: labeled {label}, judged {verdict} ({r.reason})")
        lines.append(f"    candidate {_short(r.pair.candidate)}")
        lines.append(f"    reference {_short(r.pair.reference)}")
        if r.explanation:
            lines.append(f"    why: {_short(r.explanation, 300)}")
    return lines


def report(source: str, runs: dict[str, list[Judgement]], warm_up_s: float | None = None) -> str:
    """The scorecard as text: a table per judge, per-tag tables, and the first judge's disagreements."""
    first = next(iter(runs.values()))
    positives = sum(r.pair.expected for r in first)
    out = [
        f"verifier scorecard: {source}: {len(first)} pairs ({positives} labeled equal, {len(first) - positives} different)"
    ]
    if warm_up_s is not None:
        out.append(f"warm-up before the first pair (rewards.warm_up()): {warm_up_s:.2f} s")
    out += [
        "",
        "TA/FA: labeled equal/different, judged equal; TR/FR: judged different. false-acc = FA / (FA + TR)",
        HEADER,
    ]
    for name, results in runs.items():
        out.append(stats_line(name, stats(results)))
    for name, results in runs.items():
        slow = sum(r.seconds > SLOW_CALL_S for r in results)
        out.append(f"{name}: {slow} calls over {SLOW_CALL_S:g} s")
    for name, results in runs.items():
        tags = by_tag(results)
        if tags:
            out += ["", f"per tag ({name})", HEADER]
            out += [stats_line(tag, s) for tag, s in tags.items()]
    if len(runs) > 1:
        names = list(runs)
        differ = sum(a.got != b.got for a, b in zip(runs[names[0]], runs[names[1]]))
        out += ["", f"{names[0]} and {names[1]} give different verdicts on {differ} pairs"]
    wrong = sum(r.got is None or r.got != r.pair.expected for r in first)
    out += ["", f"disagreements with the labels ({next(iter(runs))}): {wrong}"]
    out += disagreement_lines(first)
    return "\n".join(out)


def results_json(runs: dict[str, list[Judgement]]) -> list[dict]:
    rows = []
    for index, pair in enumerate(next(iter(runs.values()))):
        row = {"line": pair.pair.line, "candidate": pair.pair.candidate, "reference": pair.pair.reference}
        row.update(expected=pair.pair.expected, tags=list(pair.pair.tags))
        for name, results in runs.items():
            r = results[index]
            row[name] = {"got": r.got, "reason": r.reason, "explanation": r.explanation, "seconds": round(r.seconds, 6)}
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="verifier_scorecard.py",
        description="Precision, recall, false accepts and latency of rewards.is_correct on labeled pairs.",
    )
    parser.add_argument("labeled", help='JSONL: {"candidate", "reference", "expected", "tags"?} per line')
    parser.add_argument("--compare", choices=["math-verify"], help="also run this verifier on the same pairs")
    parser.add_argument("--completions", action="store_true", help="candidates are whole completions (rewards.grade)")
    parser.add_argument("--deadline", type=float, default=DEFAULT_DEADLINE_S, help="wall-clock seconds per call")
    parser.add_argument("--json", metavar="OUT", help="also write every pair's verdicts and timings to OUT")
    args = parser.parse_args(argv)
    try:
        out = check_output_path(args.json) if args.json else None
        if not args.deadline > 0 or math.isinf(args.deadline):
            raise ScorecardInputError(f"--deadline {args.deadline}: not a number of seconds. Pass e.g. --deadline 60")
        pairs = read_labeled(args.labeled)
        judges = {
            "rewards.is_correct" if not args.completions else "rewards.grade": verigrpo_judge(
                args.completions, args.deadline
            )
        }
        if args.compare == "math-verify":
            judges["math_verify"] = math_verify_judge()
    except ScorecardInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    warm_up()
    warm_up_s = time.perf_counter() - start
    runs = {}
    for name, judge in judges.items():
        print(f"[scorecard] {name}: {len(pairs)} pairs", file=sys.stderr, flush=True)
        runs[name] = judge_all(pairs, judge, _progress(len(pairs)))
    print(report(args.labeled, runs, warm_up_s))
    if out is not None:
        try:
            out.write_text(json.dumps(results_json(runs), indent=1) + "\n")
        except OSError as exc:  # checked before the run; the folder changed since (the report above still stands)
            print(f"error: --json {out}: cannot write ({exc.strerror}); the report above is complete", file=sys.stderr)
            return 2
    return 0


def _progress(total: int) -> Callable[[int], None] | None:
    if total < 500:
        return None
    step = max(total // 10, 1)
    return lambda done: done % step == 0 and print(f"[scorecard] {done}/{total}", file=sys.stderr, flush=True)


if __name__ == "__main__":  # python -m rewards.scorecard, where scripts/ is not installed
    sys.exit(main())
