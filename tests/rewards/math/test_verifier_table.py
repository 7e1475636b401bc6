"""(candidate, reference, expected) tables for ``rewards.is_correct``, grouped by case type."""

import pytest

from rewards import InvalidReference, check_reference, is_correct

P = pytest.param

POSITIVES = [
    # --- the seed design's own check ---
    P("0.5", "1/2", id="seed-half"),
    P("16", "16.0", id="seed-trailing-zero"),
    # --- integers ---
    P("42", "42", id="int"),
    P("-7", "-7", id="int-negative"),
    P("+7", "7", id="int-plus-sign"),
    P("007", "7", id="int-leading-zeros"),
    P("0", "-0", id="int-signed-zero"),
    P("123456789012345678901234567890", "123456789012345678901234567890", id="int-big"),
    # --- thousands separators ---
    P("1,234", "1234", id="thousands-1"),
    P("1234", "1,234", id="thousands-ref"),
    P("1,234,567", "1234567", id="thousands-2"),
    P("12,345.5", "12345.5", id="thousands-decimal"),
    P("-1,000", "-1000", id="thousands-negative"),
    P("1 234", "1234", id="thousands-space"),
    P(r"1\,000", "1000", id="thousands-thin-space"),
    P(r"14{,}916", "14916", id="thousands-latex-braced"),
    P(r"16,\!386.20", "16386.2", id="thousands-latex-negspace"),
    P(r"\$1,000.99", "1000.99", id="thousands-currency"),
    # --- decimals and trailing zeros ---
    P("2.50", "2.5", id="dec-trailing"),
    P("2.5", "2.50", id="dec-ref-trailing"),
    P(".5", "0.5", id="dec-leading-point"),
    P("3.0", "3", id="dec-point-zero"),
    P(r"0.\overline{3}", "1/3", id="dec-repeating"),
    P(r"0.1\overline{6}", r"\frac{1}{6}", id="dec-repeating-after-fixed"),
    P(r"1.\overline{142857}", "8/7", id="dec-repeating-long"),
    P("0.125", "1/8", id="dec-vs-frac"),
    # --- rounding: only an exact candidate with no finite decimal meets a decimal reference ---
    P("1/3", "0.33", id="frac-rounds-to-ref"),
    P("2/3", "0.67", id="frac-rounds-half-up"),
    P(r"\frac{1}{7}", "0.143", id="frac-sevenths-rounds"),
    P(r"0.\overline{3}", "0.33", id="repeating-rounds"),
    P(r"\sqrt{2}", "1.41", id="sqrt-rounds-to-ref"),
    P(r"\frac{\sqrt{2}}{2}", "0.71", id="surd-fraction-rounds"),
    P(r"\pi", "3.14", id="pi-rounds-to-ref"),
    P(r"\frac{37}{3}", "12.3", id="frac-rounds-to-three-digit-ref"),
    P(r"\sqrt{2}", "1.4", id="sqrt-rounds-to-two-digit-ref"),
    P("1/30", "0.033", id="frac-rounds-small-two-digit-ref"),
    # --- scientific notation ---
    P("1.5e3", "1500", id="sci-e"),
    P("1500", "1.5e3", id="sci-ref"),
    P(r"1.5 \times 10^{3}", "1500", id="sci-times"),
    P(r"1.5\cdot10^3", "1500", id="sci-cdot"),
    P("2E-3", "0.002", id="sci-negative-exp"),
    P(r"6.02 \times 10^{23}", "602000000000000000000000", id="sci-avogadro"),
    # --- fractions ---
    P("3/4", "0.75", id="frac-slash"),
    P(r"\frac{3}{4}", "3/4", id="frac-tex"),
    P(r"\dfrac{3}{4}", "3/4", id="frac-dfrac"),
    P(r"\tfrac{3}{4}", "0.75", id="frac-tfrac"),
    P(r"\frac34", "3/4", id="frac-short"),
    P(r"-\frac{1}{2}", "-0.5", id="frac-negative"),
    P(r"\frac{-1}{2}", "-1/2", id="frac-negative-num"),
    P(r"\frac{\sqrt{3}}{2}", r"\frac{\sqrt3}{2}", id="frac-sqrt-short"),
    P(r"\frac{2}{\sqrt{2}}", r"\sqrt{2}", id="frac-rationalize"),
    # --- mixed numbers ---
    P(r"2\frac{1}{2}", "5/2", id="mixed-tex"),
    P("2 1/2", "2.5", id="mixed-text"),
    P(r"1\frac{3}{4}", "1.75", id="mixed-tex-2"),
    # --- percent (reference has %) ---
    P(r"50\%", r"50\%", id="pct-same"),
    P("50%", r"50\%", id="pct-plain-sign"),
    P("50", r"50\%", id="pct-omitted"),
    P("12.5%", r"12.5\%", id="pct-decimal"),
    P("50%", "50", id="pct-label-on-bare-ref"),
    # --- sqrt, pi, powers ---
    P(r"\sqrt{8}", r"2\sqrt{2}", id="sqrt-simplify"),
    P("sqrt(2)/2", r"\frac{\sqrt{2}}{2}", id="sqrt-plain"),
    P(r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}", id="sqrt-rationalized"),
    P(r"2\pi", r"\pi \cdot 2", id="pi-times"),
    P("2pi", r"2\pi", id="pi-plain"),
    P(r"\frac{\pi}{2}", r"\pi/2", id="pi-half"),
    P("x^{2}", "x^2", id="pow-braces"),
    P(r"e^{2}", r"e^2", id="pow-e"),
    # --- algebraic equivalence ---
    P("2(x+1)", "2x+2", id="alg-distribute"),
    P("2x+2", "2(x+1)", id="alg-factor"),
    P("(x+1)^2", "x^2+2x+1", id="alg-square"),
    P("x^2-1", "(x-1)(x+1)", id="alg-diff-squares"),
    P(r"\frac{x^2-1}{x-1}", "x+1", id="alg-cancel"),
    P("a+b", "b+a", id="alg-commute"),
    P(r"3\sqrt{2}+\sqrt{2}", r"4\sqrt{2}", id="alg-surds"),
    P(r"\frac{1}{x}+\frac{1}{y}", r"\frac{x+y}{xy}", id="alg-fractions"),
    P(r"\log(8)", r"3\log(2)", id="alg-log"),
    P(r"\varnothing", r"\emptyset", id="empty-set-spellings"),
    # --- x = 3 vs 3 ---
    P("x = 3", "3", id="eq-assign"),
    P("x=3", "3", id="eq-assign-nospace"),
    P("3", "x = 3", id="eq-ref-assign"),
    P(r"k = \frac{1}{2}", "0.5", id="eq-assign-frac"),
    P("2 + 1 = 3", "3", id="eq-chain-consistent"),
    P("y = 2x + 1", "2x+1", id="eq-line"),
    P("y = 2x + 1", "y = 1 + 2x", id="eq-both"),
    P("x^2 + y^2 = 1", "y^2 + x^2 = 1", id="eq-general"),
    P("1 = x^2 + y^2", "x^2 + y^2 = 1", id="eq-general-swapped"),
    # --- inequalities ---
    P("x < 5", "5 > x", id="ineq-flip"),
    P(r"x \le 3", r"x \leq 3", id="ineq-le"),
    # --- tuples / points ---
    P("(1, 2)", "(1,2)", id="tuple"),
    P(r"\left(1, 2\right)", "(1, 2)", id="tuple-left-right"),
    P(r"(\frac{1}{2}, 3)", "(0.5, 3)", id="tuple-frac"),
    P("(1, -2, 3)", "(1,-2,3)", id="tuple-3"),
    # --- sets (order-free) ---
    P(r"\{1, 2\}", r"\{2, 1\}", id="set-order"),
    P("3, -2", "-2, 3", id="list-order"),
    P(r"\{3, -2\}", "-2, 3", id="set-vs-list"),
    P(r"1 \text{ or } 2", "1, 2", id="or-list-vs-list"),
    P(r"\pm 3", "3, -3", id="pm-vs-list"),
    P(r"2 \pm \sqrt{3}", r"2+\sqrt{3}, 2-\sqrt{3}", id="pm-expression"),
    P(r"\{\frac{1}{2}\}", r"\{0.5\}", id="set-singleton"),
    # --- intervals ---
    P("[0, 9)", "[0,9)", id="interval-half-open"),
    P(r"(-\infty, 2)", r"(-\infty,2)", id="interval-infinite"),
    P(r"(-\infty, 2) \cup (3, \infty)", r"(3,\infty)\cup(-\infty,2)", id="interval-union"),
    P(r"x \in [1, 2]", "[1,2]", id="interval-membership"),
    P("[0.5, 1]", r"[\frac{1}{2}, 1]", id="interval-frac"),
    # --- matrices ---
    P(r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", id="matrix"),
    P(r"\begin{bmatrix} 0.5 & 2 \end{bmatrix}", r"\begin{pmatrix}\frac12&2\end{pmatrix}", id="matrix-kinds"),
    # --- \text{} wrappers and units written identically ---
    P(r"5\text{ cm}", r"5\text{ cm}", id="unit-same"),
    P("5 cm", r"5\text{ cm}", id="unit-plain"),
    P("5", r"5\text{ cm}", id="unit-omitted"),
    P(r"10\text{ inches}", "10 inches", id="unit-plural"),
    P("18 dollars", "18", id="unit-currency-word"),
    P(r"\$18", "18", id="currency-sign"),
    P("$18.00", "18", id="currency-dollars-cents"),
    P(r"30^\circ", "30", id="degrees"),
    P(r"30^{\circ}", r"30^\circ", id="degrees-braced"),
    P(r"\text{(C)}", "C", id="mcq-text"),
    P("(C)", r"\text{(C)}", id="mcq-parens"),
    P(r"\text{Monday}", "Monday", id="text-word"),
    P("monday", r"\text{Monday}", id="text-case"),
    P("204_{5}", "204_5", id="base-subscript"),
    P("12:00", "12:00", id="time"),
    # --- \boxed{} and math delimiters ---
    P(r"\boxed{5}", "5", id="boxed"),
    P(r"\boxed{\frac{1}{2}}", "0.5", id="boxed-frac"),
    P("$5$", "5", id="dollar-math"),
    P(r"\(5\)", "5", id="paren-math"),
    P("5.", "5", id="trailing-period"),
    # --- unicode with one meaning ---
    P("\u22127", "-7", id="unicode-minus"),
    P("2\u03c0", r"2\pi", id="unicode-pi"),
    # --- infinity as an answer ---
    P(r"\infty", r"\infty", id="infinity"),
    P("-oo", r"-\infty", id="infinity-negative"),
    # --- a reference that names its answer, and the reverse ---
    P(r"\frac{1}{\sqrt{6}}", r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}", id="named-fraction-ref"),
    P(r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}", r"\frac{1}{\sqrt{6}}", id="named-fraction-cand"),
    P("1", "|AB| = 1", id="named-length-ref"),
    P("|AB| = 1", "1", id="named-length-cand"),
    P("|AB| = 1", "|AB| = 1", id="named-length-both"),
    P("11:21", "V_1:V_2 = 11:21", id="named-ratio-ref"),
    P("V_1:V_2 = 11:21", "11:21", id="named-ratio-cand"),
    P("(3,2)", "(p,q) = (3,2)", id="named-tuple-ref"),
    P("(p, q) = (3, 2)", "(3,2)", id="named-tuple-cand"),
    P("y = 2x + 1", "y = 2x + 1", id="named-line-same-name"),
    P("y = 2x + 1", "f(x) = 2x + 1", id="named-line-y-is-f-of-x"),
    P("g(t) = 3t", "y = 3t", id="named-line-function-is-y"),
    P(r"f^{-1}(x) = \frac{x-1}{2}", r"\frac{x-1}{2}", id="named-inverse-function"),
    P(r"y = \frac{x-1}{2}", r"f^{-1}(x) = \frac{x-1}{2}", id="named-inverse-function-ref"),
    # --- several assignments ---
    P(r"x = -5,\ p = \frac{14}{3}", r"-5, \frac{14}{3}", id="assignments-cand"),
    P(r"-1, \frac{15}{8}", r"p = -1 \text{ and } p = \frac{15}{8}", id="assignments-and-ref"),
    P(r"p = -1 \text{ and } p = \frac{15}{8}", r"-1, \frac{15}{8}", id="assignments-and-cand"),
    P(r"p = -1 \text{ or } p = \frac{15}{8}", r"p = -1 \text{ and } p = \frac{15}{8}", id="assignments-or-vs-and"),
    P("a_{37} = 19, a_3 = 2", "a_3 = 2, a_{37} = 19", id="assignments-any-order"),
    P("a_{3} = 2, a_{37} = 19", "a_3 = 2, a_{37} = 19", id="assignments-braced-subscript"),
    P("(5, 8), (8, 5)", r"(x, y) = (5, 8) \text{ and } (8, 5)", id="solution-pairs-ref"),
    P(r"(x, y) = (5, 8) \text{ and } (8, 5)", "(5, 8), (8, 5)", id="solution-pairs-cand"),
    P("AB = 4, CD = 5", "AB=4,CD=5", id="odd-ref-lengths-named"),
    P("p=5,q=2;p=7,q=2", "p=5,q=2;p=7,q=2", id="odd-ref-solution-groups"),
    # --- inequalities vs intervals ---
    P(r"x \in [-2, 7]", r"-2 \le x \le 7", id="ineq-chain-ref"),
    P(r"-2 \le x \le 7", r"x \in [-2, 7]", id="ineq-chain-cand"),
    P(r"7 \ge x \ge -2", "[-2, 7]", id="ineq-chain-descending"),
    P("(0, 1)", "0 < f(x) < 1", id="ineq-function-ref"),
    P("0 < f(x) < 1", "(0, 1)", id="ineq-function-cand"),
    P(r"x \ge 3", r"[3, \infty)", id="ineq-one-sided"),
    P(r"[3, \infty)", r"x \ge 3", id="ineq-one-sided-ref"),
    P(r"(-\infty, 5)", "5 > x", id="ineq-constant-first"),
    P(r"[-\frac{3}{2}, -1] \cup [1, \frac{3}{2}]", r"1 \le |z| \le \frac{3}{2}", id="abs-ineq-union-ref"),
    P(r"1 \le |z| \le \frac{3}{2}", r"[-\frac{3}{2}, -1] \cup [1, \frac{3}{2}]", id="abs-ineq-union-cand"),
    P("(-2, 2)", "|x| < 2", id="abs-ineq-one-interval"),
    P(r"(-\infty, -2] \cup [2, \infty)", r"|x| \ge 2", id="abs-ineq-outside"),
    # --- LaTeX thousands separators, semicolon lists ---
    P(r"11,\! 111,\! 100", "11111100", id="thousands-negspace-spaced"),
    P("11111100", r"11,\! 111,\! 100", id="thousands-negspace-spaced-ref"),
    P(r"32,\!349", "32349", id="thousands-negspace"),
    P("32349", r"32,\!349", id="thousands-negspace-ref"),
    P("-12, -11, -10", "-12;-11;-10", id="semicolon-list-ref"),
    P("-12;-11;-10", "-12, -11, -10", id="semicolon-list-cand"),
    P("(0,-2,6)", "(0;-2;6)", id="semicolon-tuple-ref"),
    P("(0;-2;6)", "(0,-2,6)", id="semicolon-tuple-cand"),
    P("185", "185\\", id="odd-ref-trailing-backslash"),
    # --- units with exponents, written the same ---
    P("3 cm^2", r"3\text{ cm}^2", id="unit-squared"),
    P(r"12 \text{ cm}^2", "12", id="unit-squared-omitted"),
    P("5 feet", "5 foot", id="unit-synonym"),
    P("60 km/h", r"60\text{ km/h}", id="unit-per"),
    # --- restatements and primes written the same ---
    P("f'(x)", "f'(x)", id="prime-same"),
    P("12_{x}", "12_{x}", id="number-subscript-same"),
    # --- the same spellings against a symbolic reference: computed there, as before (issue #39) ---
    P(r"\sqrt[3]{27}\,x", "3x", id="cube-root-symbolic"),
    P("2^{10} x", "1024x", id="pow-int-symbolic"),
    P("2**10*x", "1024x", id="pow-python-symbolic"),
    P(r"\sqrt{4}\,x", "2x", id="root-symbolic"),
    P(r"\sin^2(x)+\cos^2(x) + y", "1 + y", id="alg-trig-identity-symbolic"),
    P("3\u00d74y", "12y", id="unicode-times-symbolic"),
]

NEGATIVES = [
    # --- issue #39: a computation of numerals does not answer a number (docs/verifier.md, unevaluated answers);
    # these rows were positives before round 5 ---
    P(r"\frac{1}{3}\cdot 1", "0.33", id="symbolic-rational-rounds"),
    P("6/8", "3/4", id="frac-unreduced"),
    P(r"\frac{1}{-2}", "-1/2", id="frac-negative-den"),
    P(r"\sqrt[3]{27}", "3", id="cube-root"),
    P("2^{10}", "1024", id="pow-int"),
    P("2^10", "1024", id="pow-bare"),
    P("2**10", "1024", id="pow-python"),
    P("10^{-2}", "0.01", id="pow-negative"),
    P(r"2^{2^{3}}", "256", id="pow-small-tower"),
    P(r"\sin^2(x)+\cos^2(x)", "1", id="alg-trig-identity"),
    P(r"\log_2 8", "3", id="log-base-subscript"),
    P("3\u00d74", "12", id="unicode-times"),
    # --- near misses ---
    P("15", "16", id="seed-off-by-one"),
    P("17", "16", id="off-by-one-up"),
    P("-16", "16", id="sign-flip"),
    P("16.01", "16", id="decimal-off"),
    P("1.0000001", "1", id="tiny-offset"),
    P("3.1", "3.14", id="rounded-beyond-precision"),
    P("3.15", "3.14", id="wrong-last-digit"),
    P(r"0.\overline{6}", "2/3 + 1/100", id="repeating-near-miss"),
    P("0.3333", "1/3", id="decimal-approx-of-exact"),
    P("1.41421", r"\sqrt{2}", id="decimal-approx-of-surd"),
    P("3.14159", r"\pi", id="decimal-approx-of-pi"),
    P("3/5", "5/3", id="frac-inverted"),
    P(r"\frac{1}{2}", r"\frac{1}{3}", id="frac-wrong"),
    P("2x+1", "2x+2", id="alg-wrong"),
    P("x^2", "x^3", id="alg-power"),
    P(r"\sqrt{3}", r"\sqrt{2}", id="sqrt-wrong"),
    P(r"2\pi", r"\pi", id="pi-wrong"),
    P("100001", "100000", id="close-large"),
    P("4", "400", id="percent-rescale-up"),
    # --- percent rescaling ---
    P("50", "0.5", id="rescale-50-vs-half"),
    P("0.5", "50", id="rescale-half-vs-50"),
    P("0.5", r"50\%", id="rescale-fraction-for-percent"),
    P("5%", "50%", id="percent-wrong"),
    # --- hedges ---
    P("3 or 4", "4", id="hedge-or"),
    P(r"3 \text{ or } 4", "4", id="hedge-text-or"),
    P("3, 4", "4", id="hedge-comma"),
    P("3 and 4", "3", id="hedge-and"),
    P(r"\pm 3", "3", id="hedge-pm"),
    P("x = 3 = 4", "4", id="hedge-chain-last"),
    P("x = 3 = 4", "3", id="hedge-chain-first"),
    P(r"3 \approx 3.0", "3", id="hedge-approx"),
    P(r"\approx 3.14", "3.14", id="hedge-approx-prefix"),
    P("\u2248 3", "3", id="hedge-approx-unicode"),
    P(r"\frac13\text{m} \text{ or } \frac23\text{m}", r"\frac13", id="hedge-math-verify-units"),
    P("1, 2, 3", "1, 2", id="extra-element"),
    P("1, 2", "1, 2, 3", id="missing-element"),
    P("3?", "3", id="hedge-question"),
    P("3...", "3", id="hedge-ellipsis"),
    # --- free symbols vs numbers ---
    P("x", "5", id="symbol-vs-number"),
    P("5x", "5", id="symbol-times"),
    P("n", "3", id="symbol-n"),
    P("x+1", "x", id="symbol-offset"),
    P("a", "b", id="symbol-other"),
    # --- NaN, inf, empty ---
    P("nan", "5", id="nan"),
    P("NaN", "0", id="nan-caps"),
    P(r"\infty", "5", id="inf-for-number"),
    P("oo", "1000000", id="oo"),
    P(r"-\infty", r"\infty", id="inf-sign"),
    P("0/0", "0", id="zero-over-zero"),
    P(r"\frac{0}{0}", "1", id="frac-zero-zero"),
    P("1/0", "0", id="div-zero"),
    P("", "5", id="empty"),
    P("   ", "5", id="whitespace"),
    P("$$", "5", id="empty-math"),
    P(r"\boxed{}", "5", id="empty-box"),
    # --- unicode look-alikes ---
    P("\uff11\uff16", "16", id="fullwidth-digits"),
    P("4\u00b2", "4", id="superscript-two"),
    P("4\u00b2", "16", id="superscript-two-16"),
    P("\u0661\u0666", "16", id="arabic-indic-digits"),
    P("1\u20446", "1/6", id="fraction-slash"),
    P("\u2010" + "5", "-5", id="hyphen-lookalike"),
    P("\u00bd", "0.5", id="vulgar-half"),
    P("\u0445", "x", id="cyrillic-x"),
    # --- comma/space collapse ---
    P("1,2", "12", id="comma-collapse"),
    P("32, 349", "32349", id="comma-space-collapse"),
    P("12,34", "1234", id="bad-thousands"),
    P("12 34", "1234", id="bad-space-thousands"),
    P("1 2", "12", id="space-collapse"),
    P("2 3", "6", id="space-is-not-multiplication"),
    P("2 3", "23", id="space-is-not-concatenation"),
    P("1,234", "1.234", id="comma-vs-decimal"),
    # --- intervals / tuples / sets ---
    P("(0, 9)", "[0, 9)", id="interval-open-vs-closed"),
    P("[0, 9]", "[0, 9)", id="interval-closed-vs-half"),
    P("(2, 1)", "(1, 2)", id="tuple-order"),
    P(r"\{1, 2\}", "(1, 2)", id="set-vs-tuple"),
    P("(1, 2)", "1, 2", id="tuple-vs-list"),
    P(r"(3, \infty)", r"[3, \infty)", id="interval-infinite-endpoint"),
    # --- matrices ---
    P(r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\begin{pmatrix}1&2\\3&5\end{pmatrix}", id="matrix-entry"),
    P(r"\begin{pmatrix}1&2\end{pmatrix}", r"\begin{pmatrix}1\\2\end{pmatrix}", id="matrix-shape"),
    P("(1, 2)", r"\begin{pmatrix}1&2\end{pmatrix}", id="tuple-vs-matrix"),
    P(
        r"\begin{vmatrix}1&2\\3&4\end{vmatrix}",
        r"\begin{pmatrix}1&2\\3&4\end{pmatrix}",
        id="determinant-is-not-a-matrix",
    ),
    # --- units ---
    P("5 m", r"5\text{ cm}", id="unit-different"),
    P(r"5\text{ m}", r"5\text{ cm}", id="unit-different-text"),
    P("6 cm", r"5\text{ cm}", id="unit-same-wrong-number"),
    # --- inequalities ---
    P("x < 5", "x > 5", id="ineq-direction"),
    P(r"x \le 5", "x < 5", id="ineq-strictness"),
    P("x = 5", "x < 5", id="eq-vs-ineq"),
    # --- equations ---
    P("y = 2x", "y = 2x + 1", id="eq-wrong"),
    # --- code injection ---
    P("__import__('os').system('true')", "0", id="inject-import"),
    P("(3)if(0)else(4)", "4", id="inject-ternary"),
    P("len('abcd')", "4", id="inject-len"),
    P("eval('4')", "4", id="inject-eval"),
    P("lambda: 4", "4", id="inject-lambda"),
    P("4 # comment", "4", id="inject-comment"),
    P("[4][0]", "4", id="inject-index"),
    P("().__class__", "0", id="inject-dunder"),
    P("exec('x=4')", "4", id="inject-exec"),
    P(r"\input{/etc/passwd}", "4", id="inject-latex-input"),
    # --- text answers ---
    P(r"\text{(B)}", r"\text{(C)}", id="mcq-wrong"),
    P("Tuesday", "Monday", id="text-wrong"),
    P("204", "204_5", id="base-dropped"),
    P("54", "204_5", id="base-converted-not-accepted"),
    P("12_3", "5", id="base-candidate-for-decimal"),
    P("1:00", "12:00", id="time-wrong"),
    # --- hedges hidden in units, words and punctuation ---
    P(r"5\text{ cm or 6 cm}", r"5\text{ cm}", id="hedge-inside-text"),
    P("5 apples or 6", "5", id="hedge-after-unit"),
    P("5 or more", "5", id="hedge-or-more"),
    P("at least 5", "5", id="hedge-at-least"),
    P("5+", "5", id="trailing-plus"),
    P(">5", "5", id="leading-gt"),
    P("5;6", "5", id="semicolon-list"),
    P(r"\boxed{5}\boxed{6}", "30", id="two-boxes-multiplied"),
    P("3~4", "12", id="tilde-space"),
    # --- rounding against exact references (GSM8K-style decimals are exact) ---
    P("3.142", "3.14", id="decimal-rounds-to-ref-not-paid"),
    P("3.1416", "3.14", id="decimal-rounds-to-ref-not-paid-2"),
    P("0.333", "0.33", id="decimal-more-digits-not-paid"),
    P("7.249", "7.25", id="rounding-7.249"),
    P("4.45", "4.5", id="rounding-4.45"),
    P("89/20", "4.5", id="rounding-exact-terminating-fraction"),
    P(r"\frac{89}{20}", "4.5", id="rounding-exact-terminating-frac-tex"),
    P(r"\frac{89}{20}\cdot 1", "4.5", id="rounding-symbolic-terminating"),
    P("15.95", "16.0", id="rounding-15.95"),
    P("3.135", "3.14", id="rounding-3.135"),
    P("1/3", "0.34", id="rounding-wrong-direction"),
    # a one-significant-digit decimal is exact only: rounding to it is a +-50 % window (1/6 for an exact 1/5)
    P(r"\frac{1}{6}", "0.2", id="rounding-one-digit-ref-sixth"),
    P("1/3", "0.3", id="rounding-one-digit-ref-third"),
    P("2/3", "0.7", id="rounding-one-digit-ref-two-thirds"),
    P(r"\sqrt{2}", "1", id="rounding-integer-ref-surd"),
    P(r"\frac{\sqrt{2}}{20}", "0.07", id="rounding-one-digit-ref-symbolic"),
    P("2/3", "0.66", id="rounding-truncated"),
    P(r"\sqrt{2}", "1.42", id="rounding-surd-wrong"),
    # --- several boxes in a raw candidate ---
    P(r"\boxed{1}\boxed{0}", "0", id="two-boxes-product-zero"),
    P(r"\boxed{0}\boxed{1}", "0", id="two-boxes-other-order"),
    P(r"\boxed{4} (or maybe 5)", "4", id="box-with-hedge-outside"),
    P(r"x = \boxed{4}", "4", id="box-inside-answer"),
    # --- subscripts and primes are not dropped ---
    P("100_2", "100", id="base-subscript-dropped"),
    P("100", "100_2", id="base-subscript-missing"),
    P("12_{x}", "12", id="label-subscript-dropped"),
    P("f'(x)", "f(x)", id="prime-dropped"),
    P("f(x)", "f'(x)", id="prime-missing"),
    P("f''(x)", "f'(x)", id="prime-count"),
    P("12'", "12", id="prime-on-number"),
    # --- words after a number are not units ---
    P(r"12 \text{ is incorrect}", "12", id="words-is-incorrect"),
    P(r"3 \text{ unsure}", "3", id="words-unsure"),
    P("5 apples", "5", id="words-count-noun"),
    P("3 cm^2", "3 cm", id="unit-exponent-added"),
    P("3 cm", "3 cm^2", id="unit-exponent-dropped"),
    P(r"3\text{ cm}^3", r"3\text{ cm}^2", id="unit-exponent-different"),
    # --- a variable name on the left must match ---
    P("x = 2x + 1", "y = 2x + 1", id="name-swapped-for-variable"),
    P("x = 3", "y = 3", id="name-different"),
    P("x = 2x + 1", "f(x) = 2x + 1", id="name-variable-for-function"),
    P(r"f^{-1}(x) = 2x - 1", r"f^{-1}(x) = \frac{x+1}{2}", id="inverse-function-wrong"),
    P("|CD| = 1", "|AB| = 1", id="name-label-different"),
    P("a_3 = 19, a_{37} = 2", "a_3 = 2, a_{37} = 19", id="assignments-swapped-values"),
    # --- named, assignment and interval near misses ---
    P(r"\frac{NO}{BO}=\frac{1}{\sqrt{5}}", r"\frac{1}{\sqrt{6}}", id="named-fraction-wrong"),
    P("2", "|AB| = 1", id="named-length-wrong"),
    P("21:11", "V_1:V_2 = 11:21", id="named-ratio-reversed"),
    P("(2,3)", "(p,q) = (3,2)", id="named-tuple-swapped"),
    P(r"-5, \frac{14}{5}", r"x = -5,\ p = \frac{14}{3}", id="assignments-one-wrong"),
    P("-1", r"p = -1 \text{ and } p = \frac{15}{8}", id="assignments-one-missing"),
    P("(5, 8)", r"(x, y) = (5, 8) \text{ and } (8, 5)", id="solution-pairs-one-missing"),
    # round 4 (issue #29, class 5): unnamed values never pay an answer that names each one, even in its order
    P(r"-5, \frac{14}{3}", r"x = -5,\ p = \frac{14}{3}", id="assignments-ref-unnamed"),
    P("4, 5", "AB=4,CD=5", id="odd-ref-lengths-unnamed"),
    P(r"-2 < x \le 7", r"x \in [-2, 7]", id="ineq-chain-open-end"),
    P(r"-2 \le x \le 8", r"x \in [-2, 7]", id="ineq-chain-wrong-bound"),
    P("[0, 1)", "0 < f(x) < 1", id="ineq-function-closed-end"),
    P(r"x > 3", r"[3, \infty)", id="ineq-strict-vs-closed"),
    P(r"x \le 3", r"[3, \infty)", id="ineq-wrong-direction"),
    P(r"x < 2 \le 3", "(2, 3)", id="ineq-not-a-chain-in-one-variable"),
    P(r"[-\frac{3}{2}, -1) \cup [1, \frac{3}{2}]", r"1 \le |z| \le \frac{3}{2}", id="abs-ineq-open-end"),
    P(r"[-1, 1] \cup [1, \frac{3}{2}]", r"1 \le |z| \le \frac{3}{2}", id="abs-ineq-wrong-half"),
    P(r"(-\infty, -2) \cup (2, \infty)", r"|x| \ge 2", id="abs-ineq-strict"),
    P(r"11,\! 111,\! 10", "11111100", id="thousands-negspace-short-group"),
    P(r"32,\! 34", "3234", id="thousands-negspace-bad-group"),
    P("-12;-11", "-12;-11;-10", id="semicolon-list-missing"),
    P("(0;2;6)", "(0,-2,6)", id="semicolon-tuple-sign"),
    P("(0;6;-2)", "(0,-2,6)", id="semicolon-tuple-order"),
]


pytestmark = pytest.mark.usefixtures("generous_verifier_deadline")


@pytest.mark.parametrize(("candidate", "reference"), POSITIVES)
def test_equivalent_answers_are_correct(candidate, reference):
    assert is_correct(candidate, reference) is True


@pytest.mark.parametrize(("candidate", "reference"), NEGATIVES)
def test_wrong_answers_are_rejected(candidate, reference):
    assert is_correct(candidate, reference) is False


def test_none_candidate_is_false():
    assert is_correct(None, "5") is False


ODD_BUT_VALID_REFERENCES = [
    "185\\",
    "AB=4,CD=5",
    "p=5,q=2;p=7,q=2",
    r"\frac{NO}{BO}=\frac{1}{\sqrt{6}}",
    "|AB| = 1",
    "V_1:V_2 = 11:21",
    "(p,q) = (3,2)",
    r"x = -5,\ p = \frac{14}{3}",
    r"(x, y) = (5, 8) \text{ and } (8, 5)",
    r"11,\! 111,\! 100",
    "(0;-2;6)",
]


@pytest.mark.parametrize("reference", ODD_BUT_VALID_REFERENCES)
def test_odd_but_valid_references_are_not_dataset_errors(reference):
    """An invalid reference drops the sample from training: a reasonable reading must be taken instead."""
    check_reference(reference)
    is_correct("0", reference)


@pytest.mark.parametrize("reference", ["\\frac{", "x = ", "1 = 2 = 3", "\\sqrt{"])
def test_broken_references_are_still_dataset_errors(reference):
    with pytest.raises(InvalidReference):
        is_correct("1", reference)
