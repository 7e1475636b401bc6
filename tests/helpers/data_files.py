"""Rows as people download them (GSM8K's, MATH's, MATH-500's), for the tests of a user's data files
(tests/problems/test_row_shapes.py, tests/train/test_data_files.py, tests/evals/test_user_files.py)."""

from __future__ import annotations

import json

GSM8K_ROWS = [
    {
        "question": "Weng earns $12 an hour for babysitting. Yesterday, she just did 50 minutes of babysitting. How much "
        "did she earn?",
        "answer": "Weng earns 12/60 = $<<12/60=0.2>>0.2 per minute.\nWorking 50 minutes, she earned 0.2 x 50 = "
        "$<<0.2*50=10>>10.\n#### 10",
    },
    {
        "question": "A farm has 1,200 hens laying 5 eggs a week each. How many eggs a week?",
        "answer": "1,200 x 5 = <<1200*5=6000>>6,000 eggs.\n#### 6,000",
    },
]
MATH_ROWS = [  # MATH's train/test rows: problem, solution (with \boxed{}), level, type; MATH-500 adds answer, unique_id
    {
        "problem": "What is the smallest positive integer $n$ such that $17n \\equiv 1234 \\pmod{7}?$",
        "solution": "$17n \\equiv 1234 \\pmod{7}$ means $3n \\equiv 2 \\pmod{7}$, so $n = \\boxed{3}$.",
        "level": "Level 4",
        "type": "Number Theory",
    },
    {
        "problem": "Simplify $\\frac{84}{144}.$",
        "solution": "Both are divisible by 12: $\\frac{84}{144} = \\boxed{\\frac{7}{12}}$.",
        "level": "Level 1",
        "type": "Prealgebra",
    },
    {
        "problem": "Find all solutions to $x^2 + x - 2 = 0$.",
        "solution": "...",
        "answer": "-2, 1",
        "unique_id": "test/algebra/1.json",
        "subject": "Algebra",
    },
]


def write_jsonl(path, rows):
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path
