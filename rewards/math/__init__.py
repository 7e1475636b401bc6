"""The math wing: answer extraction (``answer_format``), the equivalence check (``math_verifier`` over
``structure``, ``exact_numbers`` and ``symbolic``), its killable workers (``worker_pool``) and the TRL
rewards (``math_rewards``). Import the submodules; the public names are re-exported by ``rewards``.

- ``answer_format``: the answer-format contract: the named formats (``ANSWER_FORMATS``), instructions, worked examples,
  ``build_messages``, ``extract_answer``
- ``endings``: what the text after a final answer (a take-back, another value) and a negation before it do to it
- ``restatement``: the question-restatement rule (an answer copying an expression of the question is refused)
- ``math_verifier``: ``is_correct`` / ``grade`` / ``check_reference``: structure, exact numbers, symbolic leaves
- ``structure``: normalization and top-level shape (tuples, intervals, sets, equations, units), one reader per shape
- ``answer_tree``: the parsed answer's node types (values, lists, tuples, interval sets, equations)
- ``intervals``: interval sets from intervals, inequalities, set-builder forms, unions and intersections
- ``spellings``: one value's spellings the grammar cannot read (``7^\\text{th}``, ``3\\text{ p.m.}``, ``\\\\[4pt]``,
  ``\\frac{{1}}{{3}}``, a braced array system), rewritten exactly to the form it reads
- ``escapes``: doubled backslashes (JSON escaped once too often): read as LaTeX only when unambiguous
- ``exact_numbers``: plain numbers as exact fractions, with size bounds (the fast path)
- ``written_values``: which exact answers may round to a decimal reference (a written value, never a computation)
- ``symbolic``: LaTeX -> sympy, magnitude bounds, equivalence (runs in the workers)
- ``latex2sympy_seam``: the private latex2sympy2_extended/ANTLR parts the fast parser uses (pinned versions, test named)
- ``worker_pool``: killable worker processes: the wall-clock limit that works in any thread
- ``math_rewards``: the TRL reward functions ``correctness`` and ``format_reward``
"""
