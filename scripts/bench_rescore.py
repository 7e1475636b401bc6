"""Re-scoring speed: a synthetic 1,000-sample log scored by our verifier and by Inspect's match().

    python scripts/bench_rescore.py [--samples 1000]

Target (issue #3): re-scoring 1,000 samples in <= 10 s on 2 cores. match() is the floor: it
does a string comparison and nothing else.
"""

from __future__ import annotations

import argparse
import logging
import random
import time
from datetime import datetime, timezone

from inspect_ai import score
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import match

from evals.verify import math_verifier
from problems.math_data import procedural_arithmetic
from rewards.math.worker_pool import warm_up

SYMBOLIC = [  # a MATH-like share of the log: (target, a right answer, a wrong one)
    (r"\frac{1}{2}", r"\frac{2}{4}", r"\frac{1}{3}"),
    (r"2\sqrt{3}", r"\sqrt{12}", r"3\sqrt{2}"),
    ("(1, 2)", "(1,2)", "(2,1)"),
    ("x^2+2x+1", "(x+1)^2", "(x-1)^2"),
    (r"\frac{\pi}{4}", r"\pi/4", r"\pi/2"),
]


def synthetic_log(n: int, seed: int = 0) -> EvalLog:
    """n samples: 80% GSM8K-style numbers, 20% symbolic; answers right, wrong, missing or boxed."""
    rng = random.Random(seed)
    problems = procedural_arithmetic(n, seed=seed, max_value=50)
    samples = []
    for index, problem in enumerate(problems):
        if rng.random() < 0.2:
            target, right, wrong = rng.choice(SYMBOLIC)
        else:
            target, right, wrong = problem.answer, problem.answer, str(int(problem.answer) + rng.choice([-1, 1, 10]))
        kind = rng.random()
        text = (
            f"Some reasoning.\nANSWER: {right}"
            if kind < 0.5
            else f"Thus \\boxed{{{right}}}."
            if kind < 0.6
            else f"Some reasoning.\nANSWER: {wrong}"
            if kind < 0.9
            else "I am not sure."
        )
        samples.append(
            EvalSample(
                id=index,
                epoch=1,
                input=problem.question,
                target=target,
                output=ModelOutput.from_content("synthetic/model", text),
            )
        )
    spec = EvalSpec(
        created=datetime.now(timezone.utc).isoformat(),
        task="synthetic",
        dataset=EvalDataset(name="synthetic", samples=n),
        model="synthetic/model",
        config=EvalConfig(),
    )
    return EvalLog(status="success", eval=spec, samples=samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    logging.getLogger("inspect_ai").setLevel(logging.WARNING)

    log = synthetic_log(args.samples)
    warm_up()
    results = {}
    for name, make in (("match()", match), ("verigrpo math_verifier", math_verifier)):
        start = time.perf_counter()
        scored = score(log, scorers=[make()], action="overwrite", model="none/none", display="none")
        seconds = time.perf_counter() - start
        assert scored.samples and all(s.scores for s in scored.samples)
        results[name] = seconds
        print(f"{name:24s} {seconds:6.2f} s   {args.samples / seconds:8.0f} samples/s")
    ratio = results["verigrpo math_verifier"] / results["match()"]
    print(f"verifier / match() time: {ratio:.2f}x; target <= 10 s for 1,000 samples")


if __name__ == "__main__":
    main()
