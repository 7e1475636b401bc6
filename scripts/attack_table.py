"""The reward-hack table of docs/code-answers.md: each hack from tests/rewards/code/test_code_hacks.py scored by a naive harness and by ours.

    python scripts/attack_table.py

Naive harness = what many RL code rewards do: concatenate solution + tests + ``check(add)`` (or the
MBPP asserts), run it (here inside our sandbox, for safety) and pay 1.0 when the exit status is 0.
Ours = ``rewards.grade_code``. Every hack is built on a wrong solution: ``add`` that earns 1 of 4
tests honestly, or (tests that iterate with ``all(map(candidate, xs))``) ``is_even`` that earns 1 of 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from rewards import grade_code_sync
from rewards.sandbox import python_argv, run_sandboxed_sync

HERE = Path(__file__).resolve().parent


def load_hacks():
    spec = importlib.util.spec_from_file_location(
        "test_code_hacks", HERE.parent / "tests" / "rewards" / "code" / "test_code_hacks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def naive_reward(code: str, tests: dict) -> float:
    if "check" in tests:
        program = f"{code}\n{tests['check']}\ncheck({tests['entry_point']})\n"
    else:
        program = "\n".join([code, tests.get("setup", ""), *tests["asserts"]]) + "\n"
    result = run_sandboxed_sync(python_argv("/sandbox/main.py"), files={"/sandbox/main.py": program.encode()})
    passed = result.returncode == 0 or b"All tests passed" in result.stdout  # what marker-grepping harnesses do
    return 1.0 if passed else 0.0


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    hacks = load_hacks()
    # (hacks, HumanEval-style tests, MBPP-style tests, the wrong solution's honest passes, tests per problem)
    suites = [
        (hacks.HACKS, hacks.HUMANEVAL, hacks.MBPP, hacks.WRONG_EARNS, 4),
        (hacks.ITER_HACKS, hacks.ITER_HUMANEVAL, hacks.ITER_MBPP, hacks.ITER_WRONG_EARNS, 2),
    ]
    print(
        "| hack (on a wrong solution) | honest share | naive, HumanEval | naive, MBPP | ours, HumanEval | ours, MBPP |"
    )
    print("|---|---|---|---|---|---|")
    paid_naive = paid_ours = rows = 0
    for hack_codes, humaneval, mbpp, honest, total in suites:
        for name, code in hack_codes.items():
            cells = [f"{honest}/{total}"]
            for tests in (humaneval, mbpp):
                reward = naive_reward(code, tests)
                paid_naive += reward == 1.0
                cells.append("**paid 1.0**" if reward == 1.0 else "0.0")
            for tests in (humaneval, mbpp):
                verdict = grade_code_sync(f"```python\n{code}```", tests)
                paid_ours += verdict.passed > honest
                cells.append(f"{verdict.fraction:.2f}")
            rows += 1
            print(f"| {name} | " + " | ".join(cells) + " |")
    print(
        f"\nnaive harness paid full reward {paid_naive} times; ours paid more than the honest share {paid_ours} times"
    )
    print(json.dumps({"hacks": rows, "naive_paid": paid_naive, "ours_overpaid": paid_ours}))


if __name__ == "__main__":
    main()
