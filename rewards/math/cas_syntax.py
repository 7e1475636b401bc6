r"""Plain CAS-style math (``sqrt(4+2*sqrt(3))``, ``x^log(2)``, ``e^(2x)``, ``7/2.``) rewritten into the LaTeX
the grammar reads, by hand: the grammar only takes braces after ``\sqrt`` and around a compound exponent, and
a parser that evaluated the text instead is exactly what the verifier must never run.

Every rewrite is bracket-matched (unbalanced text is ``Unparseable``), linear per bracket pair, and changes
spelling only: ``sqrt(a)`` is ``\sqrt{a}``, ``x^log(2)`` is ``x^{\log(2)}``, ``2.`` is ``2``.
"""

from __future__ import annotations

import re

from rewards.math.answer_tree import Unparseable, matching_close, split_top

_PLAIN_FUNCS = re.compile(
    r"(?<![\\A-Za-z])(sqrt|sinh|cosh|tanh|sin|cos|tan|cot|sec|csc|arcsin|arccos|arctan|log|ln|exp|pi|theta|alpha|beta"
    r"|infty)(?![A-Za-z])"
)
_ARC = re.compile(r"(?<![\\A-Za-z])a(sin|cos|tan)(?=\s*\()")  # asin(x) is arcsin(x), never a*s*i*n*x
# calls the grammar has no plain spelling for: abs(x) -> |x|, cbrt(x) -> \sqrt[3]{x}, log(a, b) -> \log_{b}(a)
_CALL = re.compile(r"(?<![\\A-Za-z])(abs|Abs|cbrt|log)\s*\(")
_DECIMAL = re.compile(r"(?<![\d.])(\d+)\.(\d+)(?![\d.])")
_TRAILING_POINT = re.compile(r"(?<![\d.])(\d+)\.(?![\d.A-Za-z\\{(])")  # 7/2. and 4. are 7/2 and 4
# an exponent that is a call or a bracket: x^log(2), e^(2x), 2^\sqrt(3), e^-(x) is not touched
_CALL_EXPONENT = re.compile(r"\^\s*(\\[A-Za-z]+\s*)?\(")


def _parens_to_braces_after_sqrt(text: str) -> str:
    r"""``\sqrt(2x)`` -> ``\sqrt{2x}``, nested ones too (``\sqrt(4+2\sqrt(3))``)."""
    j = text.find("\\sqrt(")
    if j == -1:
        return text
    close = matching_close(text, j + 5, "()")
    if close < 0:
        raise Unparseable("unbalanced parentheses after sqrt")
    inner = _parens_to_braces_after_sqrt(text[j + 6 : close])
    return text[:j] + "\\sqrt{" + inner + "}" + _parens_to_braces_after_sqrt(text[close + 1 :])


def _brace_call_exponents(text: str) -> str:
    r"""``x^\log(2)`` -> ``x^{\log(2)}``, ``e^(2x)`` -> ``e^{(2x)}``: the grammar takes one token after ``^``."""
    out, i = [], 0
    while (m := _CALL_EXPONENT.search(text, i)) is not None:
        open_paren = m.end() - 1
        close = matching_close(text, open_paren, "()")
        if close < 0:
            raise Unparseable("unbalanced parentheses in an exponent")
        out.append(text[i : m.start()] + "^{" + (m.group(1) or "") + "(")
        out.append(_brace_call_exponents(text[open_paren + 1 : close]) + ")}")
        i = close + 1
    out.append(text[i:])
    return "".join(out)


def _rewrite_calls(text: str) -> str:
    r"""``abs(x-1)`` -> ``|x-1|``, ``cbrt(8)`` -> ``\sqrt[3]{8}``, ``log(8, 2)`` -> ``\log_{2}(8)``; nested ones too."""
    out, i = [], 0
    while (m := _CALL.search(text, i)) is not None:
        close = matching_close(text, m.end() - 1, "()")
        if close < 0:
            raise Unparseable(f"unbalanced parentheses after {m.group(1)}")
        inner = _rewrite_calls(text[m.end() : close])
        name = m.group(1)
        out.append(text[i : m.start()])
        if name.lower() == "abs":
            out.append(f"\\left|{inner}\\right|")
        elif name == "cbrt":
            out.append(f"\\sqrt[3]{{{inner}}}")
        else:
            args = split_top(inner, re.compile(","))
            if len(args) == 2:
                out.append(f"\\log_{{{args[1]}}}({args[0]})")
            elif len(args) == 1:
                out.append(f"log({inner})")
            else:
                raise Unparseable("log with more than two arguments")
        i = close + 1
    out.append(text[i:])
    return "".join(out)


_COMMAND_EXPONENT = re.compile(r"\^\s*\\(sqrt|frac)\s*(?=[{\[])")
_NEGATIVE_EXPONENT = re.compile(r"\^\s*-\s*(\d+(?:\.\d+)?|[A-Za-z](?![A-Za-z]))(?!\s*[\^_({\d.])")


def _brace_command_exponents(text: str) -> str:
    r"""``2^\sqrt{3}`` -> ``2^{\sqrt{3}}``, ``e^\frac{1}{2}`` -> ``e^{\frac{1}{2}}``: one group after ``^``."""
    out, i = [], 0
    while (m := _COMMAND_EXPONENT.search(text, i)) is not None:
        end = m.end()
        if m.group(1) == "sqrt" and text[end] == "[":
            end = matching_close(text, end, "[]") + 1
        for _ in range(2 if m.group(1) == "frac" else 1):
            if end <= 0 or end >= len(text) or text[end] != "{":
                raise Unparseable(f"\\{m.group(1)} in an exponent without its braced arguments")
            end = matching_close(text, end) + 1
            if end <= 0:
                raise Unparseable("unbalanced braces in an exponent")
        out.append(text[i : m.start()] + "^{" + text[m.start() + 1 : end].strip() + "}")
        i = end
    out.append(text[i:])
    return "".join(out)


def to_latex(text: str) -> str:
    """Plain-text math (``sqrt(2)/2``, ``x**2``, ``pi``) rewritten into the LaTeX the grammar reads."""
    text = text.replace("**", "^")
    text = _ARC.sub(r"arc\1", text)
    text = _rewrite_calls(text)
    text = _PLAIN_FUNCS.sub(r"\\\1", text)
    text = _parens_to_braces_after_sqrt(text)
    text = _brace_call_exponents(text)
    text = _brace_command_exponents(text)
    text = _NEGATIVE_EXPONENT.sub(r"^{-\1}", text)  # x^-2 is x^{-2} (plain CAS; in TeX it would not parse)
    text = _TRAILING_POINT.sub(r"\1", text)
    # decimals become exact fractions, so sympy never sees a binary float
    return _DECIMAL.sub(lambda m: f"\\frac{{{m[1]}{m[2]}}}{{1{'0' * len(m[2])}}}", text)
