"""The private parts of latex2sympy2_extended and ANTLR that the symbolic parser relies on: the one seam.

``latex2sympy2_extended`` has no public way to choose ANTLR's prediction mode, so the fast parser
subclasses its private ``_Latex2Sympy`` and sets the ANTLR parser's ``_interp.predictionMode`` and
``_errHandler`` (the standard two-stage ANTLR setup: SLL prediction is 10-50x faster in the Python
runtime; when it cannot decide it bails with ``ParseCancellationException`` and the full LL parse runs).

Written against latex2sympy2_extended 1.11.0 (pinned in pyproject.toml) and antlr4-python3-runtime
4.13.2 (its runtime). Checked by tests/rewards/math/test_symbolic_parser.py: the two-stage parse gives exactly what
the library's own parse gives on every leaf of the verifier's test tables, and SLL failures fall back.
"""

from __future__ import annotations

import re

import sympy
from antlr4.atn.PredictionMode import PredictionMode
from antlr4.error.Errors import ParseCancellationException
from antlr4.error.ErrorStrategy import BailErrorStrategy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy as LibraryLatex2Sympy


class Latex2Sympy(LibraryLatex2Sympy):
    """The library's conversion with its ``interpret_as_mixed_fractions`` flag obeyed.

    1.11.0's ``convert_postfix_list`` ignores the flag and adds any integer to a positive rational beside it
    (``2(3)`` is 5, ``3(1/2)`` is 7/2); with the flag off this copy multiplies, as ``mul_flat`` does.
    """

    def convert_postfix_list(self, arr, i=0):
        if self.config.interpret_as_mixed_fractions:
            return super().convert_postfix_list(arr, i)
        res = self.convert_postfix(arr[i])
        if isinstance(res, (sympy.Expr, sympy.MatrixBase)):
            if i == len(arr) - 1:
                return res
            rh = self.convert_postfix_list(arr, i + 1)
            if getattr(res, "is_Matrix", False) or getattr(rh, "is_Matrix", False):
                return self.mat_mul_flat(res, rh)
            return self.mul_flat(res, rh)
        if isinstance(res, list) and len(res) == 1:  # a derivative's d/dx, as the library reads it
            return super().convert_postfix_list(arr, i)
        return res


class FastLatex2Sympy(Latex2Sympy):
    """The same grammar and conversion, parsed in ANTLR's SLL mode with a bail-out error strategy."""

    def create_parser(self, latex_str):
        parser = super().create_parser(latex_str)
        parser._interp.predictionMode = PredictionMode.SLL
        parser.removeErrorListeners()
        parser._errHandler = BailErrorStrategy()
        return parser


# a letter raised to a power (``x^{2}``, ``2y^3``): SLL bails on every one of them and the LL parse that follows
# costs 15-30 ms each time (full-context predictions are not cached); ``{x}^{2}`` is the same tree and SLL takes
# it. Not after a macro (``\\sin x^{2}``, ``\\sqrt x^2``), a letter, digit-free subscript or prime; not ``e`` (``e^{x}``
# is exp); not before a bracket or subscript (``f^{-1}(x)``, ``x^{2}_1``). Checked against the library's own parse
# on every leaf of the verifier's tables (tests/rewards/math/test_symbolic_parser.py).
_POWERED_LETTER = re.compile(r"(?<![A-Za-z_^'\\])([A-Za-df-z])(?=\^(?:\{[^{}]*\}|\\?[A-Za-z0-9])(?!\s*[(\[_]))")
_AFTER_MACRO = re.compile(r"\\[A-Za-z]+\s*$")


def brace_powered_letters(latex: str) -> str:
    """``x^{2}-y^{2}`` -> ``{x}^{2}-{y}^{2}``: the same expression, in a form ANTLR's SLL mode parses."""
    return _POWERED_LETTER.sub(
        lambda m: m.group() if _AFTER_MACRO.search(latex, 0, m.start()) else "{" + m.group(1) + "}", latex
    )


def parse_latex(latex: str, config: ConversionConfig):
    """sympy from normalized LaTeX: SLL first (powered letters braced), the library's full LL parse when SLL bails."""
    braced = brace_powered_letters(latex)
    if braced != latex:
        try:
            return FastLatex2Sympy(config=config).parse(braced)
        except Exception:  # noqa: BLE001 - bailed or refused: the text as written decides, below
            pass
    try:
        return FastLatex2Sympy(config=config).parse(latex)
    except ParseCancellationException:
        return Latex2Sympy(config=config).parse(latex)
