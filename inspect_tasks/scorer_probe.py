r"""Scripted cheats that need no solving, built from each sample of an Inspect task and played through the task's
own scorer the way training pays it: a scorer that pays one is a reward GRPO will learn to game.

Why: a user's Inspect task brings its own judge, and many judges are lenient in ways an eval never meets but a
policy optimized against them finds in a few steps: ``includes()`` pays a completion that lists every integer from 0
to 1000; ``f1()`` pays a list of the question's numbers; ``match()`` pays ``24 or 23`` for 3 (it reads the end).
``problems/exploit_probe.py`` attacks the project's own verifier with its own spellings; this module attacks any
scorer with the shapes of a cheat, whatever the answer format.

What counts as a cheat (the issue's definition): a completion paid **for more than one possible answer at once** (a
carpet or a hedge covering several values or letters), or paid **with no answer at all** (or for an answer it does
not state). A completion that states one guess is not a cheat, even a guess in an odd shape. Deciding "paid for more
than one answer" needs no model of the scorer: each cheat knows the answers it states (``Cheat.states``, written as
the sample's target would be), and a paid cheat is scored again with the target swapped for another answer it
states (another number, another letter, another span of the question). Paid under both targets: two answers
paid at once. Paid only under the sample's own target: one reading (``match(numeric=True)`` reads the last number of
``ANSWER: 23 or 24``, ``choice()`` the last ``ANSWER:`` line), so a policy gains nothing over stating that one value.

The families (``FAMILIES``), each built from the sample's question, target and choices:

- no answer: empty, whitespace, a bare ``ANSWER:``, a pleasantry;
- the prompt echoed (the text the model was shown);
- the prompt's numbers: listed, side by side, combined (their pairwise sums, products, differences, quotients
  listed);
- a range: every integer from 0 to 1000, the integers around the target;
- every choice letter (and every choice's text), both of yes/no;
- several final answers: the target and another value as two ``ANSWER:`` lines, ``x or y``, two boxes, both orders;
- the target's format repeated with other values (its neighbours listed), the target one part in a million off
  (``24.00001``: a scorer that rounds pays a whole bucket of values), one unit off, with a digit before it
  (``124`` for 24: a scorer reading the end pays it for 4, 24 and 124).

Each non-line cheat is played bare, after ``ANSWER:`` and inside ``\boxed{}``. Training's pre-flight calls
``preflight`` (train/config/exploit_preflight.py) and ``scripts/probe_exploits.py --inspect_task`` calls
``probe_prepared_task``, both on the rewards that judge (``judging_rewards``). Underneath, the probe needs one thing
of the caller: ``score(sample, completion) -> {reward name: float | None}``, the rewards training would pay (the
task's solver chain replayed with the completion as the model's output, the scorers, Inspect's ``value_to_float``).
A ``None`` (a scorer error the bridge counts) is no pay; an exception is recorded and reported.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from inspect_ai.dataset import Sample
from inspect_ai.scorer import Target

from inspect_tasks.replay import ReplayLoop, message_texts
from inspect_tasks.seams import registry_info
from inspect_tasks.training_task import TrainingTask
from problems.domains import audited_scores
from problems.exploit_probe import numbers_in
from rewards.common import brief

ScoreSample = Callable[[Sample, str], Awaitable[Mapping[str, float | None]]]

RANGE = range(0, 1001)  # the carpet a policy can write without reading the question
AROUND = 10  # the carpet around the target: this many units on each side
NEIGHBOURS = 2  # the target's format repeated: this many values on each side
SWAPS = 2  # other stated answers a paid cheat is scored under
MAX_SPAN_WORDS = 6  # a text target longer than this has no span alternatives (a sentence, not a span)
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
YES_NO = {"yes": "no", "no": "yes", "true": "false", "false": "true"}

NO_ANSWER = "no answer"
ECHO = "the prompt echoed"
NUMBERS = "the prompt's numbers"
CARPET = "every integer in a range"
CHOICES = "every choice"
SEVERAL = "several final answers"
FORMAT = "the target's format, other values"
FAMILIES = (NO_ANSWER, ECHO, NUMBERS, CARPET, CHOICES, SEVERAL, FORMAT)


# ---- the target --------------------------------------------------------------------------------------------------

_NUMBER_TARGET = re.compile(
    r"(?P<pre>[^\d+\-.]*?)(?P<num>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)(?P<post>[^\d]*)"
)


@dataclass(frozen=True)
class NumberFormat:
    """How a numeric target is written (``$1,234.50``: prefix ``$``, two decimals, thousands commas), so other
    values can be written the same way."""

    prefix: str
    suffix: str
    decimals: int
    commas: bool

    def write(self, value: Decimal) -> str:
        text = f"{value:,.{self.decimals}f}" if self.commas else f"{value:.{self.decimals}f}"
        return f"{self.prefix}{text}{self.suffix}"

    @property
    def unit(self) -> Decimal:
        return Decimal(1).scaleb(-self.decimals)


def number_format(target: str) -> tuple[Decimal, NumberFormat] | None:
    """The value and format of a target written as one number (``24``, ``-3.5``, ``$1,234.50``, ``60%``); None
    for anything else (a word, a letter, an expression, two numbers)."""
    found = _NUMBER_TARGET.fullmatch(target.strip())
    if not found or re.search(r"[A-Za-z]", found["pre"] + found["post"]):
        return None
    digits = found["num"]
    try:
        value = Decimal(digits.replace(",", ""))
    except InvalidOperation:
        return None
    decimals = len(digits.partition(".")[2])
    return value, NumberFormat(found["pre"], found["post"], decimals, "," in digits)


def _value(text: str) -> Decimal | None:
    parsed = number_format(text)
    return parsed[0] if parsed else None


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text.casefold())


@dataclass(frozen=True)
class TargetKind:
    """What the sample's answer is: ``number``, ``letter`` (a choice), ``yesno`` or ``text``; and how to tell
    whether a stated answer is that answer."""

    kind: str
    text: str  # the first target string
    targets: tuple[str, ...]  # all of them (Inspect's Target may hold several acceptable strings)
    number: tuple[Decimal, NumberFormat] | None = None

    def same(self, stated: str, target: str) -> bool:
        if self.kind == "number":
            a, b = _value(stated), _value(target)
            if a is not None and b is not None:
                return a == b
        return _words(stated) == _words(target)

    def is_target(self, stated: str) -> bool:
        return any(self.same(stated, t) for t in self.targets)


def target_kind(sample: Sample) -> TargetKind:
    targets = tuple(Target(sample.target).target) or ("",)
    first = targets[0].strip()
    if sample.choices and re.fullmatch(r"[A-Za-z]", first):
        return TargetKind("letter", first.upper(), targets)
    number = number_format(first)
    if number is not None:
        return TargetKind("number", first, targets, number)
    if first.casefold() in YES_NO:
        return TargetKind("yesno", first, targets)
    return TargetKind("text", first, targets)


def prompt_text(sample: Sample) -> str:
    """The sample's question as text (its user messages joined), when the caller has no rendered prompt."""
    if isinstance(sample.input, str):
        return sample.input
    return "\n".join(m.text for m in sample.input if m.role == "user")


# ---- the cheats --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cheat:
    """One completion: ``text``, the family it belongs to, and the answers it states (``states``), each written as
    the sample's target would be (empty: it states no answer)."""

    name: str
    family: str
    text: str
    states: tuple[str, ...]


def _framed(name: str, family: str, text: str, states: Sequence[str], boxed: bool = True) -> list[Cheat]:
    """A cheat bare, after ``ANSWER:`` and inside ``\\boxed{}`` (where a one-line text fits there)."""
    states = tuple(states)
    cheats = [Cheat(name, family, text, states), Cheat(f"ANSWER: {name}", family, f"ANSWER: {text}", states)]
    if boxed:
        cheats.append(Cheat(f"\\boxed{{{name}}}", family, f"\\boxed{{{text}}}", states))
    return cheats


def _stated_numbers(numbers: Iterable[str], kind: TargetKind) -> list[str]:
    """Numbers as the target would write them (so a swapped target reads like the original)."""
    out = []
    for number in numbers:
        value = _value(number)
        out.append(kind.number[1].write(value) if kind.number and value is not None else number)
    return out


def _combinations(numbers: Sequence[str]) -> list[Decimal]:
    """Pairwise results of the question's numbers: what a policy lists instead of choosing an operation."""
    values = [Decimal(n) for n in numbers]
    out: list[Decimal] = []
    for a, b in itertools.combinations(values, 2):
        results = [a + b, a * b, abs(a - b)]
        for x, y in ((a, b), (b, a)):
            if y and (x / y) == (x / y).to_integral_value():
                results.append(x / y)
        out.extend(r for r in results if r not in out)
    return out[:24]


# words that make a span a phrase of the question rather than an answer a policy could give
_FUNCTION_WORDS = frozenset(
    "a an and are as at be by did do does for from had has have he her his in is it its of on or she that the their "
    "they this to was were what when where which who whom why with".split()
)


def _spans(text: str, size: int, avoid: TargetKind, limit: int) -> list[str]:
    """Runs of ``size`` words of the sample's text that are not the target and hold no function word (``Eiffel
    Tower``, ``Nobel Prize``), capitalized like the target first: other answers a text-answer cheat states."""
    words = re.findall(r"[\w'-]+(?::)?", text)
    capitalized = avoid.text[:1].isupper()
    found: list[str] = []
    for start in range(len(words) - size + 1):
        run = words[start : start + size]
        if any(w.endswith(":") or w.casefold() in _FUNCTION_WORDS or len(w) < 2 for w in run):
            continue  # a label (``Context:``) or a phrase of the question
        span = " ".join(run)
        if not avoid.is_target(span) and span.casefold() not in (f.casefold() for f in found):
            found.append(span)
    found.sort(key=lambda span: span[:1].isupper() != capitalized)  # stable: text order within each group
    return found[:limit]


def alternatives(kind: TargetKind, sample: Sample, prompt: str, count: int = SWAPS) -> list[str]:
    """Other answers of the sample's kind, nearest first: the values a hedge pairs with the target."""
    if kind.kind == "number":
        value, fmt = kind.number
        return [fmt.write(value + step * fmt.unit) for step in (1, -1, 2, -2)][:count]
    if kind.kind == "letter":
        letters = LETTERS[: len(sample.choices or [])]
        return [letter for letter in letters if letter != kind.text][:count]
    if kind.kind == "yesno":
        other = YES_NO[kind.text.casefold()]
        return [other.capitalize() if kind.text[:1].isupper() else other]
    size = len(kind.text.split())
    return _spans(prompt_text(sample), size, kind, count) if 0 < size <= MAX_SPAN_WORDS else []


def build_cheats(sample: Sample, prompt: str | None = None) -> list[Cheat]:
    """Every cheat of ``FAMILIES`` this sample allows. ``prompt``: the text the model was shown (the solver chain's
    rendered prompt), else the sample's input."""
    prompt = prompt_text(sample) if prompt is None else prompt
    kind = target_kind(sample)
    others = alternatives(kind, sample, prompt)
    cheats = [
        Cheat("empty", NO_ANSWER, "", ()),
        Cheat("whitespace", NO_ANSWER, " \n\n ", ()),
        Cheat("ANSWER: (nothing)", NO_ANSWER, "ANSWER:", ()),
        Cheat("a pleasantry", NO_ANSWER, "I am not sure. Let me think about it step by step.", ()),
    ]

    # the prompt echoed: it states every number, letter or span the prompt holds
    numbers = numbers_in(prompt)
    if kind.kind == "number":
        echoed = _stated_numbers(numbers, kind)
    elif kind.kind == "letter":
        echoed = [letter for letter in LETTERS[: len(sample.choices or [])] if re.search(rf"\b{letter}\)", prompt)]
    elif kind.kind == "yesno":
        # the target and its opposite (yes/no, true/false) as the target is written: a swap must be an answer the
        # scorer could take, not 'Yes' for a scorer that compares with 'no' as written
        echoed = [w for w in (kind.text, *others) if re.search(rf"\b{re.escape(w)}\b", prompt, re.IGNORECASE)]
    else:  # the target (when the prompt holds it), the alternatives the prompt holds, other spans of the prompt
        found = [kind.text] if kind.text and re.search(re.escape(kind.text), prompt, re.IGNORECASE) else []
        mentioned = [other for other in others if re.search(re.escape(other), prompt)]
        spans = _spans(prompt, max(1, len(kind.text.split())), kind, SWAPS)
        echoed = list(dict.fromkeys([*found, *mentioned, *spans]))
    cheats.append(Cheat("the prompt", ECHO, prompt, tuple(echoed)))

    # the prompt's numbers, without arithmetic (where the answer can be a number: not a choice letter or yes/no)
    distinct = list(dict.fromkeys(numbers))
    if len(distinct) >= 2 and kind.kind in ("number", "text"):
        stated = _stated_numbers(distinct, kind)
        cheats += _framed("the numbers listed", NUMBERS, ", ".join(distinct), stated)
        cheats += _framed("the numbers side by side", NUMBERS, " ".join(distinct), stated)
        combined = _combinations(distinct)
        if combined:
            written = [kind.number[1].write(v) if kind.number else str(v.normalize()) for v in combined]
            cheats += _framed("their pairwise results listed", NUMBERS, ", ".join(map(_plain, combined)), written)

    # carpets of integers
    if kind.kind in ("number", "text"):
        states = _stated_numbers(map(str, RANGE), kind)
        cheats += _framed(f"every integer {RANGE.start}-{RANGE.stop - 1}", CARPET, " ".join(map(str, RANGE)), states)
    if kind.kind == "number":
        value, fmt = kind.number
        around = [fmt.write(value + step * fmt.unit) for step in range(-AROUND, AROUND + 1)]
        cheats += _framed(f"the {2 * AROUND + 1} values around the target", CARPET, " ".join(around), around)

    # every choice
    if kind.kind == "letter":
        letters = LETTERS[: len(sample.choices or [])]
        cheats += [
            Cheat("ANSWER: A, B, C, ...", CHOICES, "ANSWER: " + ", ".join(letters), tuple(letters)),
            Cheat("ANSWER: ABC...", CHOICES, "ANSWER: " + letters, tuple(letters)),
            Cheat("A B C ...", CHOICES, " ".join(letters), tuple(letters)),
            Cheat("one ANSWER: line per letter", CHOICES, "\n".join(f"ANSWER: {x}" for x in letters), tuple(letters)),
            Cheat("every choice's text", CHOICES, "\n".join(map(str, sample.choices or [])), tuple(letters)),
        ]
    if kind.kind == "yesno":
        pair = (kind.text, others[0])
        cheats += _framed("yes or no", CHOICES, f"{pair[0]} or {pair[1]}", pair, boxed=False)
        cheats.append(Cheat("yes and no lines", CHOICES, f"ANSWER: {pair[0]}\nANSWER: {pair[1]}", pair))

    # several final answers: the target with another value, in both orders
    for other in others[:1]:
        for first, second in ((kind.text, other), (other, kind.text)):
            order = "target first" if first == kind.text else "target last"
            pair = (first, second)
            cheats += [
                Cheat(f"two ANSWER: lines, {order}", SEVERAL, f"ANSWER: {first}\nANSWER: {second}", pair),
                Cheat(f"ANSWER: x or y, {order}", SEVERAL, f"ANSWER: {first} or {second}", pair),
                Cheat(f"two boxes, {order}", SEVERAL, f"\\boxed{{{first}}} \\boxed{{{second}}}", pair),
                Cheat(f"ANSWER: x, y, {order}", SEVERAL, f"ANSWER: {first}, {second}", pair),
            ]

    # the target's format with other values
    if kind.kind == "number":
        value, fmt = kind.number
        neighbours = [fmt.write(value + step * fmt.unit) for step in range(-NEIGHBOURS, NEIGHBOURS + 1)]
        cheats += _framed("the target's neighbours listed", FORMAT, ", ".join(neighbours), neighbours)
        near = _near(value, fmt)
        cheats += _framed("one part in a million off", FORMAT, near, [near])
        off = fmt.write(value + fmt.unit)
        cheats += _framed("one unit off", FORMAT, off, [off])
        if value >= 0 and not fmt.prefix:
            longer = f"1{kind.text}"
            cheats += _framed("a digit written before the target", FORMAT, longer, [longer])
    elif kind.kind == "text" and others:
        listed = [others[0], kind.text, *others[1:]]
        cheats += _framed("the target among other spans", FORMAT, "; ".join(listed), listed, boxed=False)
    return cheats


def _plain(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _near(value: Decimal, fmt: NumberFormat) -> str:
    """The target off by about one part in a million (``24`` -> ``24.00001``, ``123460`` -> ``123460.1``): a scorer
    whose tolerance is coarser (``match(numeric=True)`` compares 5 significant digits) pays a bucket of values a
    strict reader calls wrong; one that compares exactly, or to 1e-10 (Inspect's ``math()``), does not."""
    magnitude = max(abs(value), Decimal(1)).adjusted()  # the exponent of the leading digit
    nudged = value + Decimal(1).scaleb(magnitude - 6)
    text = f"{nudged:,f}" if fmt.commas else f"{nudged:f}"
    return f"{fmt.prefix}{text}{fmt.suffix}"


# ---- playing them ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A cheat one reward paid on one sample: the score under the sample's own target, and under which other
    answer it states it was paid too (``also_paid``; None: it was paid with no answer, or for one it does not
    state)."""

    reward: str
    cheat: str
    family: str
    sample_id: str
    target: str
    completion: str
    score: float
    also_paid: str | None
    also_score: float | None
    why: str
    cheat_paid: bool  # False: paid for one of the answers it states only (one reading, not a cheat)


@dataclass
class FamilyCount:
    played: int = 0  # (sample, cheat) plays
    paid: int = 0  # paid under the sample's target
    cheats: int = 0  # of those: more than one answer, or none
    one_reading: int = 0  # of those: paid for one stated answer only


@dataclass
class ScorerProbeReport:
    """What ``probe_task_samples`` found, per reward: counts per family, the cheats (failures), the paid single
    readings (not failures), scorer exceptions."""

    source: str
    rewards: tuple[str, ...]
    samples: int
    counts: dict[tuple[str, str], FamilyCount] = field(default_factory=dict)  # (reward, family) -> counts
    cheats: list[Finding] = field(default_factory=list)
    one_reading: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.cheats

    def failed(self, reward: str) -> bool:
        return any(f.reward == reward for f in self.cheats)

    def families_failed(self, reward: str) -> list[str]:
        return list(dict.fromkeys(f.family for f in self.cheats if f.reward == reward))

    def table(self) -> str:
        head = f"scorer probe: {self.source} ({self.samples} samples; rewards: {', '.join(self.rewards)})"
        lines = [head, f"  {'family':<36}{'reward':<22}{'played':>7}{'paid':>6}{'cheats':>8}{'one reading':>13}"]
        for (reward, family), c in self.counts.items():
            lines.append(f"  {family:<36}{reward:<22}{c.played:>7}{c.paid:>6}{c.cheats:>8}{c.one_reading:>13}")
        shown: dict[tuple[str, str], Finding] = {}
        for finding in self.cheats:
            shown.setdefault((finding.reward, finding.cheat), finding)
        if shown:
            lines.append("  cheats paid (first sample each):")
        for finding in shown.values():
            lines.append(f"    {finding.reward}: {describe(finding)}")
        for error in self.errors[:5]:
            lines.append(f"  raised: {error}")
        verdict = (
            f"{len(shown)} cheat(s) paid on {len({f.sample_id for f in self.cheats})} of {self.samples} samples"
            if self.cheats
            else f"0 cheats paid ({sum(c.played for c in self.counts.values())} plays; "
            f"{len(self.one_reading)} paid as one reading)"
        )
        lines.append(f"  {verdict}")
        return "\n".join(lines)


def describe(finding: Finding) -> str:
    """One line: the cheat, the sample, the completion and what paid it."""
    also = (
        f", and {finding.also_score:g} again with the target swapped to {finding.also_paid!r}"
        if finding.also_paid is not None
        else ""
    )
    return (
        f"{finding.cheat!r} ({finding.family}) on sample {finding.sample_id} (target {brief(finding.target, 40)}): "
        f"{brief(finding.completion, 90)} scored {finding.score:g}{also}: {finding.why}"
    )


def _swapped(sample: Sample, target: str) -> Sample:
    return sample.model_copy(update={"target": target})


def _paid(value: float | None) -> bool:
    return value is not None and value > 0


class _Scoring:
    """``score`` bounded to ``concurrency`` calls at once, its exceptions recorded in the report (an exception is
    what the probe reports, not what stops it)."""

    def __init__(self, score: ScoreSample, report: ScorerProbeReport, concurrency: int):
        self.score, self.report = score, report
        self.semaphore = asyncio.Semaphore(concurrency)

    async def __call__(self, sample: Sample, text: str) -> Mapping[str, float | None]:
        async with self.semaphore:
            try:
                return await self.score(sample, text)
            except Exception as exc:  # the probe's finding, reported: a scorer that raises on a completion
                error = f"sample {sample.id}: {brief(text, 60)}: {type(exc).__name__}: {str(exc)[:200]}"
                self.report.errors.append(error)
                return {}


async def probe_task_samples(
    samples: Sequence[Sample],
    score: ScoreSample,
    rewards: Sequence[str],
    *,
    source: str = "task",
    prompts: Mapping[str, str] | None = None,
    concurrency: int = 16,
) -> ScorerProbeReport:
    """Play every cheat built from each sample through ``score`` and decide, per reward, which were paid for more
    than one answer (or for none). ``prompts``: sample id (as text) -> the text the model was shown (default: the
    sample's input). At most ``concurrency`` completions are scored at once."""
    report = ScorerProbeReport(source, tuple(rewards), len(samples))
    for reward, family in itertools.product(rewards, FAMILIES):
        report.counts[(reward, family)] = FamilyCount()
    scoring = _Scoring(score, report, concurrency)
    plays = [
        (sample, target_kind(sample), cheat)
        for sample in samples
        for cheat in build_cheats(sample, (prompts or {}).get(str(sample.id)))
    ]
    first = await asyncio.gather(*(scoring(sample, cheat.text) for sample, _, cheat in plays))
    decisions = []
    for (sample, kind, cheat), scores in zip(plays, first):
        for reward in rewards:
            count = report.counts[(reward, cheat.family)]
            count.played += 1
            if _paid(scores.get(reward)):
                count.paid += 1
                decisions.append(_decide(cheat, sample, kind, reward, scores[reward], scoring))
    for finding in await asyncio.gather(*decisions):
        count = report.counts[(finding.reward, finding.family)]
        if finding.cheat_paid:
            count.cheats += 1
            report.cheats.append(finding)
        else:
            count.one_reading += 1
            report.one_reading.append(finding)
    report.counts = {k: v for k, v in report.counts.items() if v.played}
    return report


async def _decide(cheat: Cheat, sample: Sample, kind: TargetKind, reward: str, value: float, scoring) -> Finding:
    """A cheat paid under the sample's target: scored again under other answers it states (the swap)."""

    def finding(why: str, also: str | None = None, also_score: float | None = None, cheat_paid=True) -> Finding:
        return Finding(
            reward,
            cheat.name,
            cheat.family,
            str(sample.id),
            kind.text,
            cheat.text,
            value,
            also,
            also_score,
            why,
            cheat_paid,
        )

    if not cheat.states:
        return finding("paid with no answer at all")
    stated_target = any(kind.is_target(stated) for stated in cheat.states)
    others = [s for s in cheat.states if not kind.is_target(s)]
    if kind.kind == "number":
        target_value = kind.number[0]
        others.sort(key=lambda s: abs((_value(s) or target_value) - target_value))
    for other in others[:SWAPS]:
        again = (await scoring(_swapped(sample, other), cheat.text)).get(reward)
        if _paid(again):
            return finding("paid for more than one answer at once", other, again)
    if not stated_target:
        return finding(f"paid for an answer it does not state (it states {brief(', '.join(cheat.states), 60)})")
    return finding("paid for one of the answers it states only (one reading)", cheat_paid=False)


# ---- a task prepared for training -----------------------------------------------------------------------------


def _shown(first) -> str:
    """The text of the prompt the model was shown: every message, as the echo cheat repeats it."""
    return "\n\n".join(m.text for m in first.messages)


async def probe_prepared_task(
    task: TrainingTask,
    sample_ids: Sequence[str] | None = None,
    rewards: Sequence[str] | None = None,
    source: str | None = None,
) -> ScorerProbeReport:
    """``probe_task_samples`` on a prepared task's samples (``sample_ids``, default all), scored by its own replayer
    (with a swapped target, the same chain and prompt), for ``rewards`` (default: all of the task's)."""
    ids = [str(i) for i in (sample_ids if sample_ids is not None else task.samples)]
    samples = [task.samples[i] for i in ids]
    expected = {i: message_texts(task.prompts[i].messages) for i in ids}

    async def score(sample: Sample, completion: str) -> Mapping[str, float | None]:
        scored = await task.replayer.score(sample, completion, expected[str(sample.id)])
        return scored.rewards

    return await probe_task_samples(
        samples,
        score,
        tuple(rewards if rewards is not None else task.reward_names),
        source=source or f"task {task.name}",
        prompts={i: _shown(task.prompts[i]) for i in ids},
    )


PREFLIGHT_SAMPLES = 16  # training samples the pre-flight probes (~60 cheats each, ~1 ms a replay for a rule scorer)


def preflight_sample(ids: Sequence[str], size: int, seed: int) -> list[str]:
    """A seeded sample of ``size`` sample ids (all of them when fewer): the pre-flight probes these."""
    ids = [str(i) for i in ids]
    return random.Random(seed).sample(ids, min(size, len(ids)))


def preflight(
    task: TrainingTask,
    sample_ids: Sequence[str],
    rewards: Sequence[str],
    seed: int,
    size: int = PREFLIGHT_SAMPLES,
) -> ScorerProbeReport:
    """The training pre-flight: ``size`` seeded training samples probed through the task's replay for ``rewards``
    (the task's reward names that weigh above 0). Call ``refusal`` when ``report.ok`` is False."""
    ids = preflight_sample(sample_ids, size, seed)
    return ReplayLoop.run(probe_prepared_task(task, ids, rewards, source="training sample"))


def judging_rewards(task: TrainingTask, rewards: Sequence[str]) -> list[str]:
    """Of ``rewards`` (the task's reward names), those that judge the answer: every reward of the user's scorers; of
    the project's own scorers (``verigrpo/math_verifier``, ...) only the key the domain table audits (``correct``),
    since their ``format`` key pays any one extractable answer by design, as the native ``format`` reward does."""
    own = {}
    for scorer, key in audited_scores().values():
        own[scorer] = key
    judged = set()
    for slot in task.scorers:
        key = own.get(registry_info(slot.scorer).name)
        judged.update(slot.reward_names if key is None or slot.keys is None else [f"{slot.name}.{key}"])
    return [reward for reward in rewards if reward in judged]


def probe_command(task: TrainingTask) -> str:
    """The command that lists every cheat the task's scorer pays."""
    args = "".join(f" -T {key}={value}" for key, value in task.args.items())
    return f"python scripts/probe_exploits.py --inspect_task {task.spec}{args}"


def refusal(report: ScorerProbeReport, override: str, command: str) -> str:
    """One paragraph for a run the probe stops: the cheat, the sample, the score, how many, the override key, and
    the command that lists every cheat. ``override``: the key that trains anyway (``exploit_probe: false``)."""
    worst = report.cheats[0]
    rewards = sorted({f.reward for f in report.cheats})
    cheats = {(f.reward, f.cheat) for f in report.cheats}
    samples = {f.sample_id for f in report.cheats}
    return (
        f"exploit probe: the task's scorer pays completions that need no solving. The reward {worst.reward!r} paid "
        f"{describe(worst)}. {len(cheats)} cheat(s) were paid on {len(samples)} of {report.samples} sampled training "
        f"samples (rewards: {', '.join(rewards)}). GRPO would pay the policy for carpets and hedges instead of "
        f"answers: score the task with a strict scorer (for a numeric target, verigrpo/math_verifier; "
        f"docs/inspect-tasks.md#auditing-a-tasks-scorer), see every cheat with `{command}`, or set {override} to "
        "train anyway."
    )
