"""verigrpo's verifier: answer extraction, math equivalence, and the reward functions built on them.

Imports only the standard library, sympy and latex2sympy2_extended (in the worker process), so
the trainer, the evals and a notebook all load the same objects in milliseconds.
"""

from rewards.answer_format import ANSWER_INSTRUCTION, WORKED_EXAMPLES, build_messages, extract_answer, find_final_answer
from rewards.math_verifier import InvalidReference, grade, is_correct
from rewards.verdict import Reason, Verdict

__all__ = [
    "ANSWER_INSTRUCTION",
    "WORKED_EXAMPLES",
    "InvalidReference",
    "Reason",
    "Verdict",
    "build_messages",
    "extract_answer",
    "find_final_answer",
    "grade",
    "is_correct",
]
