r"""The closed vocabulary of a math answer: every macro, wrapper, gap, separator and unit the verifier reads.

Why one module: the front end (``rewards.math.tokens``, ``rewards.math.structure``) reads answers with these
tables and nothing else, so a spelling is either listed here or refused with its name
(``unsupported notation: \foo``); and an attack renderer imports the same tables, so every spelling added
here is attacked the day it is added. Standard library only. The tables and their element formats:

- ``WRAPPERS``: ``dict[str, tuple[str, str]]``, a wrapper's name to its ``(before, after)`` spelling around a
  value. The wrapper is removed and its content read as it stands (``\text{9}`` is ``9``, ``$9$`` is ``9``);
  it never joins two values (``\text{9}\text{3}`` is two numbers side by side, refused). Names starting with
  a backslash are macros taking one braced group; the others are delimiters.
- ``TEXT_MACROS``: ``tuple[str, ...]``, the wrappers whose content is text (a unit or a word may be written
  in one: ``5\text{ cm}``); a subset of ``WRAPPERS``' names.
- ``SPACING``: ``dict[str, bool]``, a gap's spelling to whether it is *wide* (after a wide gap a new value
  is a second answer: ``3\quad 4``, ``3\n4``). ``\hspace`` takes a braced length (``\hspace{1em}``).
- ``MODIFIERS``: ``tuple[str, ...]``, macros that change only how the next thing looks (``\left``,
  ``\displaystyle``, ``\big``): read as nothing.
- ``SEPARATORS``: ``dict[str, str]``, a spelling that separates values to its kind, ``"list"`` (``,`` ``;``)
  or ``"hedge"`` (``or``, ``\text{ or }``, ``and``): a candidate with one is several values, never one.
- ``UNITS``: ``dict[str, str]``, a unit's spelling (case-sensitive: ``Mg`` is not ``mg``) to its canonical
  symbol (``"meters"`` and ``"m"`` are both ``"m"``). A unit follows a number, plain or in a text macro.
- ``CONSTANTS``: ``dict[str, str]``, a spelling to the constant it names (``"\\pi"`` and ``"pi"`` are
  ``"pi"``, ``"\\infty"`` is ``"oo"``). ``e`` and ``i`` are constants or names by context (the symbolic layer).
- ``FUNCTIONS``: ``dict[str, int]``, a function or radical (macro or plain name) to the number of braced
  arguments it takes before its operand (``\sqrt`` 1: ``\sqrt{2}``; ``\sin`` 0: ``\sin x``). A numeral may
  stand before one as a coefficient (``3\sqrt{2}``, ``2\sin x``).
- ``ARGUMENT_MACROS``: ``dict[str, int]``, macros that build one value from braced arguments, to their number
  (``\frac`` 2, ``\binom`` 2, ``\overline`` 1).
- ``OPERATORS``: ``tuple[str, ...]``, explicit operators (``+``, ``\times``, ``^``, ``\pm`` ...).
- ``RELATIONS``: ``tuple[str, ...]``, relations between two sides (``=``, ``<``, ``\le``, ``\in`` ...).
- ``BRACKETS``: ``dict[str, str]``, an opening bracket to its closing one (``(``, ``[``, ``\{``, ``|`` ...).
- ``SYMBOLS``: ``tuple[str, ...]``, other macros that stand for one thing: Greek letters, set notation,
  ``\circ``, ``\prime``, ``\mathbb``, environments (``\begin``/``\end``), big operators (``\sum``) ...
- ``KNOWN_MACROS``: ``frozenset[str]``, every macro accepted (the union of the macros above and the escaped
  characters ``\{`` ``\%`` ``\$`` ...). Any other ``\name`` in an answer is refused.
"""

from __future__ import annotations

TEXT_MACROS = (r"\text", r"\textbf", r"\textit", r"\textrm", r"\textnormal", r"\textsf", r"\mbox", r"\mathrm")

WRAPPERS: dict[str, tuple[str, str]] = {
    **{name: (name + "{", "}") for name in TEXT_MACROS},
    **{
        name: (name + "{", "}")
        for name in (r"\mathbf", r"\mathit", r"\mathsf", r"\mathtt", r"\boldsymbol", r"\bm", r"\boxed", r"\fbox")
    },
    "{": ("{", "}"),
    "$": ("$", "$"),
    "$$": ("$$", "$$"),
    r"\(": (r"\(", r"\)"),
    r"\[": (r"\[", r"\]"),
}

SPACING: dict[str, bool] = {
    " ": False,
    "\t": False,
    "~": False,
    r"\,": False,
    r"\;": False,
    r"\:": False,
    r"\!": False,
    r"\>": False,
    "\\ ": False,
    r"\thinspace": False,
    r"\medspace": False,
    r"\thickspace": False,
    r"\negthinspace": False,
    r"\negmedspace": False,
    "\n": True,
    "\r": True,
    r"\quad": True,
    r"\qquad": True,
    r"\enspace": True,
    r"\hspace": True,
}

MODIFIERS = (
    r"\left",
    r"\right",
    r"\displaystyle",
    r"\textstyle",
    r"\big",
    r"\Big",
    r"\bigg",
    r"\Bigg",
    r"\bigl",
    r"\bigr",
    r"\Bigl",
    r"\Bigr",
    r"\biggl",
    r"\biggr",
    r"\Biggl",
    r"\Biggr",
    r"\limits",
    r"\nolimits",
)

SEPARATORS: dict[str, str] = {
    ",": "list",
    ";": "list",
    "or": "hedge",
    "and": "hedge",
    r"\text{ or }": "hedge",
    r"\text{ and }": "hedge",
    r"\text{or}": "hedge",
    r"\text{and}": "hedge",
}


def _units() -> dict[str, str]:
    """Each unit's spellings: the symbol (case-sensitive) and the full word, singular and plural, any case first letter."""
    words = {  # canonical symbol: full words (singular); plural 's' added below
        "mm": ("millimeter", "millimetre"),
        "cm": ("centimeter", "centimetre"),
        "m": ("meter", "metre"),
        "km": ("kilometer", "kilometre"),
        "nm": ("nanometer", "nanometre"),
        "in": ("inch",),
        "ft": ("foot",),
        "yd": ("yard",),
        "mi": ("mile",),
        "mg": ("milligram",),
        "g": ("gram",),
        "kg": ("kilogram",),
        "lb": ("pound",),
        "oz": ("ounce",),
        "ton": ("ton",),
        "t": ("tonne",),
        "mL": ("milliliter", "millilitre"),
        "L": ("liter", "litre"),
        "gal": ("gallon",),
        "qt": ("quart",),
        "pt": ("pint",),
        "cup": ("cup",),
        "tbsp": ("tablespoon",),
        "tsp": ("teaspoon",),
        "cc": (),
        "s": ("second", "sec"),
        "ms": ("millisecond",),
        "min": ("minute",),
        "h": ("hour", "hr"),
        "day": ("day",),
        "week": ("week",),
        "month": ("month",),
        "year": ("year", "yr"),
        "decade": ("decade",),
        "century": ("century",),
        "mph": (),
        "kph": (),
        "kmh": (),
        "knot": ("knot",),
        "dollar": ("dollar", "usd", "USD"),
        "cent": ("cent",),
        "euro": ("euro",),
        "yuan": ("yuan",),
        "rupee": ("rupee",),
        "degree": ("degree", "deg"),
        "rad": ("radian",),
        "unit": ("unit",),
        "square": ("square", "sq"),
        "cubic": ("cubic",),
        "V": ("volt",),
        "A": ("amp", "ampere"),
        "W": ("watt",),
        "kW": ("kilowatt",),
        "kWh": ("kilowatt-hour",),
        "J": ("joule",),
        "N": ("newton",),
        "Hz": ("hertz",),
        "Pa": ("pascal",),
        "kPa": ("kilopascal",),
        "cal": ("calorie",),
        "kcal": ("kilocalorie",),
        "Mg": ("megagram",),
        "MW": ("megawatt",),
        "GB": ("gigabyte",),
        "MB": ("megabyte",),
    }
    plural = {"inch": "inches", "foot": "feet", "century": "centuries", "sq": "sq", "usd": "usd", "USD": "USD"}
    table: dict[str, str] = {}
    for symbol, names in words.items():
        table[symbol] = symbol
        for name in names:
            for form in (name, plural.get(name, name + "s")):
                table[form] = symbol
                table[form[:1].upper() + form[1:]] = symbol
    for alias, symbol in (("l", "L"), ("ml", "mL"), ("hrs", "h"), ("mins", "min"), ("secs", "s"), ("lbs", "lb")):
        table[alias] = symbol
    return table


UNITS: dict[str, str] = _units()

CONSTANTS: dict[str, str] = {
    r"\pi": "pi",
    "pi": "pi",
    r"\infty": "oo",
    r"\infin": "oo",
    "infinity": "oo",
    "oo": "oo",
    r"\emptyset": "emptyset",
    r"\varnothing": "emptyset",
    "e": "e",
    "i": "i",
}

_TRIG = ("sin", "cos", "tan", "cot", "sec", "csc")
_NAMED = (
    *_TRIG,
    *("arc" + f for f in _TRIG),
    *(f + "h" for f in _TRIG),
    "log",
    "ln",
    "lg",
    "exp",
    "det",
    "gcd",
    "lcm",
    "max",
    "min",
    "deg",
    "arg",
    "Re",
    "Im",
)
FUNCTIONS: dict[str, int] = {
    r"\sqrt": 1,
    **{"\\" + name: 0 for name in _NAMED},
    **{name: 0 for name in (*_TRIG, "log", "ln", "exp", "sqrt", "cbrt", "abs", "atan", "asin", "acos")},
    r"\operatorname": 1,
}

ARGUMENT_MACROS: dict[str, int] = {
    r"\frac": 2,
    r"\dfrac": 2,
    r"\tfrac": 2,
    r"\cfrac": 2,
    r"\binom": 2,
    r"\dbinom": 2,
    r"\tbinom": 2,
    r"\overline": 1,
    r"\underline": 1,
    r"\overarc": 1,
    r"\arc": 1,
    r"\widehat": 1,
    r"\hat": 1,
    r"\bar": 1,
    r"\vec": 1,
    r"\tilde": 1,
    r"\mathbb": 1,
    r"\mathcal": 1,
    r"\Bbb": 1,
}

OPERATORS = ("+", "-", "*", "/", "^", "_", "!", "'", r"\times", r"\cdot", r"\div", r"\pm", r"\mp", r"\circ")

RELATIONS = (
    "=",
    "<",
    ">",
    "<=",
    ">=",
    "!=",
    r"\le",
    r"\ge",
    r"\leq",
    r"\geq",
    r"\leqq",
    r"\geqq",
    r"\leqslant",
    r"\geqslant",
    r"\lt",
    r"\gt",
    r"\ne",
    r"\neq",
    r"\in",
    r"\notin",
    r"\subset",
    r"\subseteq",
    r"\to",
    r"\rightarrow",
    r"\equiv",
)

BRACKETS: dict[str, str] = {
    "(": ")",
    "[": "]",
    r"\{": r"\}",
    r"\lbrace": r"\rbrace",
    "|": "|",
    r"\lvert": r"\rvert",
    r"\vert": r"\vert",
    r"\|": r"\|",
    r"\lfloor": r"\rfloor",
    r"\lceil": r"\rceil",
    r"\langle": r"\rangle",
}

_GREEK = (
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho varrho"
    " sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Upsilon Phi Psi Omega"
).split()
SYMBOLS = (
    *("\\" + g for g in _GREEK),
    r"\cup",
    r"\cap",
    r"\setminus",
    r"\mid",
    r"\colon",
    r"\prime",
    r"\degree",
    r"\angle",
    r"\measuredangle",
    r"\triangle",
    r"\perp",
    r"\parallel",
    r"\begin",
    r"\end",
    r"\sum",
    r"\prod",
    r"\int",
    r"\lim",
    r"\lor",
    r"\land",
    r"\vee",
    r"\wedge",
    r"\pmod",
    r"\bmod",
    r"\mod",
    r"\ell",
    r"\R",
    r"\reals",
    r"\dots",
    r"\ldots",
    r"\cdots",
    r"\approx",
    r"\simeq",
    r"\sim",
    r"\thickapprox",
)

_ESCAPED = (r"\{", r"\}", r"\%", r"\$", r"\_", r"\&", r"\|", r"\#")

KNOWN_MACROS: frozenset[str] = frozenset(
    name
    for name in (
        *WRAPPERS,
        *SPACING,
        *MODIFIERS,
        *CONSTANTS,
        *FUNCTIONS,
        *ARGUMENT_MACROS,
        *OPERATORS,
        *RELATIONS,
        *BRACKETS,
        *BRACKETS.values(),
        *SYMBOLS,
        *_ESCAPED,
        r"\)",
        r"\]",
    )
    if name.startswith("\\")
)
