"""The answer contract for code: what the prompt asks for and how the code is taken out of a completion.

Trainer and evals both import these objects, so the prompt and the extractor cannot drift apart.

Extraction policy: the **last** fenced block tagged ``python`` (or ``py``/``python3``), closed by a
fence. Untagged blocks are ignored (they are usually example output), an unclosed block counts as
no answer (a completion cut off mid-code), and there is no fallback to "the whole text".
"""

from __future__ import annotations

import re

CODE_INSTRUCTION = (
    "Solve the programming problem in Python 3 using only the standard library. "
    "Give your final solution as one complete program in a single ```python code block at the end of your reply."
)
FUNCTION_HINT = "Define the function `{entry_point}` with exactly that name; do not read input or print."
IO_HINT = "Read the input from standard input and write the answer to standard output."

MAX_CODE_CHARS = 64_000  # longer "solutions" are not graded (Reason.TOO_COMPLEX)

_OPEN_FENCE = re.compile(r"[ \t]*```[ \t]*(?:python3?|py)[ \t]*", re.IGNORECASE)
_CLOSE_FENCE = re.compile(r"[ \t]*```[ \t]*")


def build_code_prompt(problem: str, entry_point: str | None) -> str:
    """The user message for one problem: statement, the I/O or function contract, then the instruction."""
    hint = FUNCTION_HINT.format(entry_point=entry_point) if entry_point else IO_HINT
    return f"{problem.strip()}\n\n{hint}\n{CODE_INSTRUCTION}"


def build_code_messages(problem: str, entry_point: str | None) -> list[dict[str, str]]:
    """Chat messages for one problem (the form TRL and Inspect both take)."""
    return [{"role": "user", "content": build_code_prompt(problem, entry_point)}]


def extract_code(text: str) -> str | None:
    """The last closed python code block, or None.

    >>> extract_code("Try this:\\n```python\\nprint(1)\\n```\\nBetter:\\n```python\\nprint(2)\\n```")
    'print(2)\\n'
    >>> extract_code("```\\nprint(1)\\n```") is None
    True
    """
    # A line scan, not one regex: linear in the text however many fences a completion opens.
    last, block = None, None
    for line in text.splitlines(keepends=True):
        if block is None:
            if _OPEN_FENCE.fullmatch(line.rstrip("\r\n")):
                block = []
        elif _CLOSE_FENCE.fullmatch(line.rstrip("\r\n")):
            last, block = "".join(block), None
        else:
            block.append(line)
    return last


# Patterns worth a look in logs (they are not penalized: a legitimate solution may use some of them).
TAMPER_MARKERS: dict[str, re.Pattern[str]] = {
    "sys.exit": re.compile(r"\bsys\s*\.\s*exit\b|\bexit\s*\(|\bquit\s*\("),
    "os._exit": re.compile(r"\bos\s*\.\s*_exit\b"),
    "atexit": re.compile(r"\batexit\b"),
    "_getframe": re.compile(r"\b_getframe\b|\bf_back\b|\bf_locals\b|\binspect\s*\.\s*(?:stack|currentframe)"),
    "gc.get_objects": re.compile(r"\bgc\s*\.\s*get_(?:objects|referrers|referents)\b"),
    "__eq__ override": re.compile(r"\bdef\s+__(?:eq|ne|hash|bool)__\b|__eq__\s*="),
    "builtins assignment": re.compile(r"\b(?:__)?builtins(?:__)?\s*(?:\.\s*\w+|\[[^\]]*\])\s*=(?!=)"),
    "/proc read": re.compile(r"/proc/"),
    "unittest/assert patching": re.compile(
        r"\b(?:unittest|TestCase|SkipTest|isclose)\b\s*(?:\.\s*\w+\s*)?=(?!=)|SkipTest"
    ),
}


def tamper_markers(code: str | None) -> list[str]:
    """Names of the tamper patterns present in ``code`` (for monitoring; never a penalty).

    >>> tamper_markers("import os\\nos._exit(0)")
    ['os._exit']
    """
    if not code:
        return []
    return [name for name, pattern in TAMPER_MARKERS.items() if pattern.search(code)]
