"""verigrpo's verifiers: answer extraction, math equivalence, sandboxed unit tests for code, and the rewards.

Imports only the standard library, sympy, latex2sympy2_extended (in the worker process) and pyseccomp
(when a sandbox first starts), so the trainer, the evals and a notebook all load the same objects fast.

Layout: ``rewards/math/`` (the math verifier and its rewards), ``rewards/code/`` (the code judge and its
reward), ``rewards/sandbox/`` (bubblewrap isolation, also used by the Inspect ``bwrap`` provider), and the
shared pieces here:

- ``__init__``: the public names (``is_correct``, ``grade``, ``extract_answer``, ``grade_code``, ...), re-exported
- ``verdict``: ``Verdict`` (correct, answer, reason, explanation) and the ``Reason`` enum
- ``fingerprint``: the verigrpo version and a hash of the ``rewards/`` source, recorded in logs and checkpoints
- ``common``: helpers both wings use: ``completion_text``, ``question_text`` (the problem a prompt asks, for
  ``grade(question=...)`` on both sides), ``run_blocking``, ``brief``/``clip`` (bounded messages)
- ``reward_log``: why each reward paid (answer, reason, explanation), handed to TRL's ``log_extra``
- ``scorecard``: precision/recall/latency of ``is_correct`` on a labeled JSONL (``python -m rewards.scorecard``)

The reward functions here are plain functions; the names a config's ``reward_funcs`` gives them belong to the domain
rows that bring them (``problems/math_domain.py``, ``problems/code_domain.py``; the table is ``problems.domains``).

Symbolic comparisons run in worker processes that start once per process (1-2 s of CPU). Importing
``rewards`` starts nothing; ``warm_up()`` starts them where that cost is expected (the trainer calls it while
the model loads, the Inspect math scorer in the background when a task is built). Without it, the first
symbolic comparison in a process waits for the first worker.
"""

from rewards.code.code_format import CODE_INSTRUCTION, build_code_messages, extract_code, tamper_markers
from rewards.code.code_rewards import code_tests
from rewards.code.code_spec import InvalidTests, TestSpec, parse_test_spec
from rewards.code.code_verifier import grade_code, grade_code_sync
from rewards.common import question_text
from rewards.fingerprint import verifier_fingerprint, verifier_id, verigrpo_version
from rewards.math.answer_format import (
    ANSWER_FORMATS,
    ANSWER_INSTRUCTION,
    DEFAULT_ANSWER_FORMAT,
    THINK_MODES,
    TOOL_INSTRUCTION,
    WORKED_EXAMPLES,
    build_messages,
    extract_answer,
    find_final_answer,
    worked_examples,
)
from rewards.math.math_rewards import bind_think, correctness, format_reward
from rewards.math.math_verifier import InvalidReference, check_reference, grade, is_correct
from rewards.math.worker_pool import (
    VerifierBug,
    VerifierError,
    VerifierOverloaded,
    VerifierTooSlow,
    VerifierUnavailable,
    warm_up,
)
from rewards.sandbox import SandboxError, SandboxLimits, SandboxUnavailable
from rewards.verdict import Reason, TestOutcome, Verdict

__all__ = [
    "CODE_INSTRUCTION",
    "InvalidTests",
    "SandboxError",
    "SandboxLimits",
    "SandboxUnavailable",
    "TestOutcome",
    "TestSpec",
    "build_code_messages",
    "code_tests",
    "extract_code",
    "grade_code",
    "grade_code_sync",
    "parse_test_spec",
    "tamper_markers",
    "bind_think",
    "correctness",
    "THINK_MODES",
    "VerifierBug",
    "VerifierError",
    "VerifierOverloaded",
    "VerifierTooSlow",
    "VerifierUnavailable",
    "format_reward",
    "verifier_fingerprint",
    "verifier_id",
    "verigrpo_version",
    "ANSWER_FORMATS",
    "ANSWER_INSTRUCTION",
    "DEFAULT_ANSWER_FORMAT",
    "TOOL_INSTRUCTION",
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
    "question_text",
    "warm_up",
    "worked_examples",
]
