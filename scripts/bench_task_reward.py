"""What an Inspect task's reward costs per completion: the solver chain replayed + the scorer (the training path) against
the scorer called directly on a finished state, measured in one run (docs/benchmarks.md).

    python scripts/bench_task_reward.py [--completions 256] [--repeats 3]

Each task is prepared as training prepares it (inspect_tasks.training_task.prepare_task). **Bridge**: the reward
function the trainer calls (inspect_tasks/domain.py: one TRL reward per scorer; a batch of completions replayed
through the rest of the chain, the task's sandbox context, the scorers and value_to_float, concurrently), a fresh
batch cache each repeat. **Direct**: the same scorer awaited on a TaskState that already holds the prompt and the
completion (what a hand-written reward would do, skipping the chain; for ``multiple_choice`` + ``choice()`` it
therefore scores unmarked choices: a floor, not a reward), with the same concurrency. Both on the same completions
(right, wrong, hedged, no answer; all distinct), in the same process, alternating which goes first; the first repeat of each is a
warm-up (it fills the verifier's caches, which a GRPO group's repeated answers fill in training too).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import time
from pathlib import Path

from inspect_ai.model import ChatMessageAssistant, ModelName, ModelOutput
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from inspect_tasks.domain import task_domain
from inspect_tasks.replay import ReplayLoop
from inspect_tasks.training_task import CONCURRENT_REPLAYS, prepare_task
from rewards import warm_up

REPO = Path(__file__).resolve().parents[1]
TASKS = {  # what a step scores: a gsm8k-style numeric task, multiple choice, the project's verifier on its prompt
    "gsm8k (prompt_template, match(numeric=True))": ("scripts/scorer_table/tasks.py@inspect_evals_gsm8k", {}),
    "multiple_choice + choice()": ("scripts/scorer_table/tasks.py@builtin_choice", {}),
    "math_verified (verigrpo/math_verifier)": ("evals/math_task.py@math_verified", {"limit": 20}),
}


def completions(task, n: int) -> list[tuple[str, str]]:
    """``n`` distinct (sample id, completion) pairs cycling through the samples: right, wrong, hedged and no
    answer (the reward scores each distinct pair of a batch once: repeats would be free)."""
    ids = list(task.samples)
    pairs = []
    for i in range(n):
        sample_id = ids[i % len(ids)]
        target = task.samples[sample_id].target
        target = target if isinstance(target, str) else target[0]
        other = "B" if target == "A" else "A" if target.isalpha() else str(int(float(target)) + 1)
        kind = i % 4
        text = (
            f"Let me work it out step by step.\nANSWER: {target}"
            if kind == 0
            else f"Some reasoning.\nANSWER: {other}"
            if kind == 1
            else f"ANSWER: {target}\nANSWER: {other}"
            if kind == 2
            else "I am not sure."
        )
        pairs.append((sample_id, f"Attempt {i}. {text}"))  # all distinct: none is cached
    return pairs


def bridge_seconds(task, pairs) -> float:
    """The trainer's reward function on the batch: one call, as TRL makes it per step."""
    domain, names, _ = task_domain(task)
    reward = next(iter(domain.rewards.values()))  # the first reward scores the batch; the others read its cache
    start = time.perf_counter()
    scores = reward(completions=[text for _, text in pairs], id=[i for i, _ in pairs])
    seconds = time.perf_counter() - start
    assert len(scores) == len(pairs)
    return seconds


def _state(task, sample_id: str, text: str) -> TaskState:
    sample = task.samples[sample_id]
    output = ModelOutput.from_content("policy", text)
    messages = [*task.prompts[sample_id].messages, ChatMessageAssistant(content=text)]
    return TaskState(
        ModelName("verigrpo/policy"),
        sample.id,
        1,
        sample.input,
        messages,
        target=Target(sample.target),
        choices=sample.choices,
        output=output,
        metadata=dict(sample.metadata or {}),
    )


def direct_seconds(task, pairs) -> float:
    """Each scorer awaited on a finished state, with the bridge's concurrency."""
    scorers = [slot.scorer for slot in task.scorers]

    async def run() -> float:
        states = [_state(task, sample_id, text) for sample_id, text in pairs]
        semaphore = asyncio.Semaphore(CONCURRENT_REPLAYS)

        async def one(state):
            async with semaphore:
                return [await scorer(state, state.target) for scorer in scorers]

        start = time.perf_counter()
        await asyncio.gather(*(one(state) for state in states))
        return time.perf_counter() - start

    return ReplayLoop.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python scripts/bench_task_reward.py",
        description="Per-completion cost of an Inspect task's reward: chain replay + scorer vs the scorer alone.",
    )
    parser.add_argument("--completions", type=int, default=256, help="completions per batch (default 256)")
    parser.add_argument("--repeats", type=int, default=4, help="timed batches per path and task (after a warm-up)")
    args = parser.parse_args()
    warm_up()
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    flags = open("/proc/cpuinfo").read()
    kind = "AVX512-BF16" if "avx512_bf16" in flags else "AVX2" if "avx2" in flags else "other"
    print(f"{cpu} ({kind}), {os.cpu_count()} cores, Python {platform.python_version()}, load {os.getloadavg()}")
    print(
        f"{args.completions} completions per batch, {args.repeats} timed batches each (median), concurrency "
        f"{CONCURRENT_REPLAYS}"
    )
    print(f"{'task':48s}{'direct ms':>11s}{'bridge ms':>11s}{'ratio':>8s}{'per step of 16':>16s}")
    for name, (spec, task_args) in TASKS.items():
        task = prepare_task(str(REPO / spec.split("@")[0]) + "@" + spec.split("@")[1], task_args)
        pairs = completions(task, args.completions)
        times: dict[str, list[float]] = {"direct": [], "bridge": []}
        paths = [("direct", direct_seconds), ("bridge", bridge_seconds)]
        for repeat in range(args.repeats + 1):
            for path, measure in paths if repeat % 2 else paths[::-1]:  # alternating which goes first
                seconds = measure(task, pairs)
                if repeat:  # the first batch of each is a warm-up
                    times[path].append(seconds)
        direct = statistics.median(times["direct"]) / len(pairs) * 1000
        bridge = statistics.median(times["bridge"]) / len(pairs) * 1000
        print(f"{name:48s}{direct:11.2f}{bridge:11.2f}{bridge / direct:8.1f}{16 * bridge:13.0f} ms")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
