"""verigrpo's verifier: answer extraction, math equivalence, and the reward functions built on them.

Imports only the standard library, sympy and latex2sympy2_extended (in the worker process), so
the trainer, the evals and a notebook all load the same objects in milliseconds.
"""

from rewards.answer_format import ANSWER_INSTRUCTION, WORKED_EXAMPLES, build_messages, extract_answer, find_final_answer
from rewards.fingerprint import verifier_fingerprint, verifier_id, verigrpo_version
from rewards.math_rewards import correctness, format_reward
from rewards.math_verifier import InvalidReference, check_reference, grade, is_correct
from rewards.registry import REWARD_FUNCS, get_reward_funcs
from rewards.verdict import Reason, Verdict

__all__ = [
    "REWARD_FUNCS",
    "correctness",
    "format_reward",
    "get_reward_funcs",
    "verifier_fingerprint",
    "verifier_id",
    "verigrpo_version",
    "ANSWER_INSTRUCTION",
    "WORKED_EXAMPLES",
    "InvalidReference",
    "Reason",
    "Verdict",
    "build_messages",
    "check_reference",
    "extract_answer",
    "find_final_answer",
    "grade",
    "is_correct",
]
