"""Re-judge training rollouts with a (newer, stricter, or just different) scorer and count disagreements.

The training reward paid some completions (``train_correctness`` = 1, ``train_code_tests`` > 0, or a ``grade``
domain's ``train_<name>_grade`` > 0). If the re-scorer rejects some of them (grade 0), the policy was paid for answers
that are not right by the re-scorer's standard: a reward hack or a verifier bug. Counted per step window, this is a
reward-hacking detector. Runs are told apart by the training score the logs hold (``judged_scores``: the domain
table's audited scores, and each registered ``grade`` domain's reward, re-judged by default with that domain's own
``grade`` through ``verigrpo/domain_scorer``: the function that paid, so it finds what changed since training, and
``--scorer`` gives an independent judge). Used by ``scripts/audit_rollouts.py``.
"""

from __future__ import annotations

import importlib.util
import logging
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from inspect_ai import score as inspect_score
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.scorer import Scorer
from inspect_ai.util import registry_create  # the registry lookup `inspect score --scorer` uses

import verigrpo  # noqa: F401 - registers the verigrpo/* scorers load_scorer looks up (0.1 s after this module)
from evals.log_stats.grade_changes import grade_of
from problems.domains import DOMAIN_SCORER, DOMAINS, HOW_TO_REGISTER, audited_scores
from records.rollout_format import ROLLOUT_MODEL, STEP_KEY, train_score_name

DEFAULT_SCORER = None  # chosen from the training score the logs hold

# what reading a torn or damaged .eval raises (a SIGKILL mid-write: "EOCD not found" is a ValueError;
# a damaged member: BadZipFile / zlib.error; bad JSON or schema: ValueError subclasses; unreadable: OSError)
UNREADABLE = (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile, zlib.error)


class AuditInputError(ValueError):
    """The audit has nothing it can use (every log unreadable, or a bad window): exit 2, not a verdict."""


@dataclass(frozen=True)
class Judge:
    """How the audit re-judges one training score by default."""

    scorer: str  # a registered scorer
    args: dict  # its arguments (a grade domain's scorer: domain=<name>)
    key: str | None  # the key of its dict value that grades (None: the value is the grade)
    domain: str | None = None  # a grade domain judged by its own grade (the function that paid the reward)


def judged_scores() -> dict[str, Judge]:
    """Training score in a rollout log -> how the audit re-judges it: the domain table's audited scores, then each
    registered ``grade`` domain's reward, judged by the domain's own grade."""
    judges = {score: Judge(spec, {}, key) for score, (spec, key) in audited_scores().items()}
    for domain in DOMAINS.values():
        if domain.grade is not None:
            score = train_score_name(domain.grade_reward)
            judges.setdefault(score, Judge(DOMAIN_SCORER, {"domain": domain.name}, None, domain.name))
    return judges


def training_score(log: EvalLog, name: str | None = None) -> str:
    """Which audited reward a rollout log holds (``name``: the one to audit, e.g. an Inspect task's
    ``train_includes``, when no domain names it); AuditInputError (one line) when it holds none the audit knows."""
    names = {name for sample in log.samples or [] for name in sample.scores or {}}
    if name is not None:
        if name not in names:
            raise AuditInputError(f"rollout log {log.location} holds {sorted(names)}: no {name!r} to audit")
        return name
    judges = judged_scores()
    found = [name for name in judges if name in names]
    if len(found) == 1:
        return found[0]
    if found:
        raise AuditInputError(f"rollout log {log.location} holds {len(found)} audited rewards {found}: audit one run")
    raise AuditInputError(
        f"rollout log {log.location} holds the scores {sorted(names)}, none a reward the audit can re-judge (it knows "
        f"{sorted(judges)}): a run on a domain of your own is audited when that domain is registered here, as it was "
        f"for training ({HOW_TO_REGISTER})"
    )


def load_scorer(spec: str, args: dict | None = None) -> Scorer:
    """``verigrpo/math_verifier`` (a registered name, with ``args``) or ``path/to/file.py@factory``."""
    if "@" in spec:
        path, name = spec.rsplit("@", 1)
        module_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        if module_spec is None or not Path(path).is_file():
            raise FileNotFoundError(f"scorer file {path} not found")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        return getattr(module, name)()
    return registry_create("scorer", spec, **(args or {}))


@dataclass
class Example:
    log: str
    sample_id: str | int
    epoch: int
    step: int
    answer: str | None
    completion: str
    explanation: str | None


@dataclass
class Window:
    first_step: int
    last_step: int
    compared: int = 0
    paid: int = 0
    paid_rejected: int = 0
    unpaid_accepted: int = 0

    @property
    def paid_rejected_rate(self) -> float:
        return self.paid_rejected / self.paid if self.paid else 0.0


@dataclass
class Skipped:
    path: str
    reason: str


@dataclass
class Audit:
    windows: list[Window] = field(default_factory=list)
    paid_rejected: list[Example] = field(default_factory=list)
    unpaid_accepted: list[Example] = field(default_factory=list)
    scorer_name: str = ""
    audited: list[str] = field(default_factory=list)  # the logs re-scored
    self_judged: set[str] = field(default_factory=set)  # grade domains re-judged by their own grade (no --scorer)
    skipped: list[Skipped] = field(default_factory=list)  # unreadable logs (torn by a crash), not audited

    @property
    def total(self) -> Window:
        out = Window(
            self.windows[0].first_step if self.windows else 0, self.windows[-1].last_step if self.windows else 0
        )
        for w in self.windows:
            out.compared += w.compared
            out.paid += w.paid
            out.paid_rejected += w.paid_rejected
            out.unpaid_accepted += w.unpaid_accepted
        return out


def rescore(log: EvalLog, scorer: Scorer) -> tuple[EvalLog, str]:
    """The log with the scorer's results appended, and the name they were recorded under."""
    before = {name for sample in log.samples or [] for name in sample.scores or {}}
    logging.getLogger("inspect_ai").setLevel(logging.WARNING)
    scored = inspect_score(log, scorers=[scorer], action="append", model=ROLLOUT_MODEL, display="none")
    added = [name for sample in scored.samples[:1] for name in sample.scores if name not in before]
    if len(added) != 1:
        raise RuntimeError(f"could not tell which score the re-scorer added (new names: {added})")
    return scored, added[0]


def grade_key_of(scorer_spec: str) -> str:
    """The key of a dict-valued re-scorer's value that grades: the domain table's for its own scorers
    (``verigrpo/math_verifier``: ``correct``), else ``correct``."""
    known = {scorer: key for scorer, key in audited_scores().values()}
    return known.get(scorer_spec, "correct")


def audit_logs(
    paths: list[Path],
    scorer_spec: str | None = DEFAULT_SCORER,
    window: int = 10,
    train_score: str | None = None,
) -> Audit:
    """Re-score every rollout log and count, per ``window`` steps, where training and re-scorer disagree.

    ``scorer_spec`` None: the verifier that matches the run (math_verifier or unit_test_scorer).
    ``train_score``: the training score to audit when the domain table does not name it (an Inspect task's reward,
    ``train_<reward>``); ``scorer_spec`` is then required: the independent judge (``verigrpo/math_verifier``).
    A log that cannot be read (torn by a crash during a write) is skipped and listed in
    ``Audit.skipped`` for the caller to report, so one bad file neither hides the others nor passes
    as audited.
    Raises AuditInputError when ``window`` < 1 or no log could be read.
    """
    if window < 1:
        raise AuditInputError(f"window must be >= 1 step, got {window}")
    if train_score is not None and scorer_spec is None:
        raise AuditInputError(f"auditing {train_score!r} needs a scorer to judge it (e.g. verigrpo/math_verifier)")
    audit = Audit()
    windows: dict[int, Window] = {}
    for path in sorted(paths):
        try:
            original = read_eval_log(str(path))
        except UNREADABLE as exc:
            reason = f"{type(exc).__name__}: {exc}"
            audit.skipped.append(Skipped(str(path), reason))
            continue
        audit.audited.append(str(path))
        paid_score = training_score(original, train_score)
        if train_score is None:
            judge = judged_scores()[paid_score]
            grade_key = judge.key
            if scorer_spec:
                scorer = load_scorer(scorer_spec)
            else:
                scorer = load_scorer(judge.scorer, judge.args)
                if judge.domain:
                    audit.self_judged.add(judge.domain)
        else:  # an Inspect task's reward: judged by the scorer named (required above)
            grade_key = grade_key_of(scorer_spec)
            scorer = load_scorer(scorer_spec)
        log, name = rescore(original, scorer)
        audit.scorer_name = name
        for sample in log.samples or []:
            paid = grade_of(sample.scores[paid_score])
            new_score = sample.scores[name]
            accepted = grade_of(new_score, grade_key)
            if paid is None or accepted is None:
                continue  # a reward that did not apply, or a reference the re-scorer cannot read
            step = int(sample.metadata.get(STEP_KEY, 0))
            key = (step - 1) // window
            win = windows.setdefault(key, Window(key * window + 1, (key + 1) * window))
            win.compared += 1
            example = Example(
                str(path),
                sample.id,
                sample.epoch,
                step,
                new_score.answer,
                sample.output.completion,
                new_score.explanation,
            )
            if paid > 0:
                win.paid += 1
                if accepted == 0:
                    win.paid_rejected += 1
                    audit.paid_rejected.append(example)
            elif accepted > 0:
                win.unpaid_accepted += 1
                audit.unpaid_accepted.append(example)
    audit.windows = [windows[k] for k in sorted(windows)]
    if paths and not audit.audited:
        raise AuditInputError(
            f"none of the {len(audit.skipped)} rollout logs could be read: "
            + "; ".join(f"{s.path} ({s.reason})" for s in audit.skipped[:3])
        )
    return audit


def paid_rejected_grows(counts: list[int]) -> bool:
    """The audit alarm (train/guards/reward_hacking.py; scripts/plot_includes_hack.py replays it from the logs): the
    latest audit found paid-but-rejected completions, more than the audit before it."""
    return bool(counts) and counts[-1] > 0 and (len(counts) == 1 or counts[-1] > counts[-2])


def figure(audit: Audit):
    """The audit plot: two rates per step window, both visible when equal (often both 0), integer steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    centers = [(w.first_step + w.last_step) / 2 for w in audit.windows]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(
        centers,
        [w.paid_rejected_rate for w in audit.windows],
        marker="o",
        markersize=9,
        linewidth=2.5,
        label="paid but rejected / paid",
    )
    # drawn on top, dashed with hollow markers, so it shows when the two lines coincide
    ax.plot(
        centers,
        [w.unpaid_accepted / w.compared if w.compared else 0 for w in audit.windows],
        marker="s",
        markersize=5,
        markerfacecolor="none",
        linestyle="--",
        linewidth=1.5,
        label="unpaid but accepted / all",
    )
    window = audit.windows[0].last_step - audit.windows[0].first_step + 1 if audit.windows else 1
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"training step (middle of each {window}-step window)" if window > 1 else "training step")
    ax.set_ylabel("disagreement rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"training reward vs {audit.scorer_name}")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def plot(audit: Audit, out: Path) -> Path:
    import matplotlib.pyplot as plt

    fig = figure(audit)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
