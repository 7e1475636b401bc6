r"""The ending rule: what the text after a final answer, and the words just before it, do to that answer.

Why: real models do not stop at the answer. They close with pleasantries ("Let me know if you have any other
questions!"), restate it in words ("That is my final answer.", ", which is the answer to the question."), say how it
was checked ("The answer was checked by adding 24 five times."), close a display formula (``\]``), a bold heading or
a think block, or emit an end-of-turn token. None of that changes the answer, and refusing it (round 5 refused any
tail with a digit or words like "answer" or "let me": 8 of 20 ordinary endings of common model families) teaches a
policy nothing but to stop early. What does change it:

* **a take-back**: a retraction, a doubt, a correction, an alternative or a condition ("Wait, that's wrong",
  "Hmm, or maybe", "I'm not sure", "Let me recheck", "Correction:", "I take it back", "Update:", "I meant",
  "seems", "Please verify this", "at least", "but", "if", "approximately", any negation, a question mark): the answer is hedged (``TAKES_BACK``, read after the pleasantries are set aside);
* **another value stated as the answer**: a number or formula in the tail in a position that states it ("It
  should be 125", "the answer is $125$", "So 125.", "= 125" with nothing computed on its left, a value standing alone
  right after the answer or alone in its sentence). It becomes one more final-answer statement, so the usual rule
  applies: several different statements are a hedge (``grade`` still pays when each verifies equal to the
  reference: "\boxed{0.5}. That is 1/2."). A number inside a computation or a description ("adding 24 five
  times", "24 \times 5 = 120") states nothing;
* **a negation of the answer itself**, before it: "The answer is not \boxed{120}", "I don't think it is
  \boxed{120}", "It cannot be \boxed{120}" (``negated_before``): that statement is no answer (a contrast after the
  negation, "not 125 but \boxed{120}", "x is not 0, so \boxed{5}", leaves the answer standing);
* a tail over ``MAX_TAIL_CHARS``, or an unclosed box in it (a truncated second answer), stays a hedge.

Everything here is a bounded regular-expression scan without nested quantifiers over a tail of at most
``MAX_TAIL_CHARS`` characters (and 80 before a statement): linear, in the caller's thread, no clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_TAIL_CHARS = 400  # a longer text after the final answer is more than an ending: a hedge
_NEGATION_WINDOW = 80  # characters before a statement read for a negation of it

# end-of-turn tokens, think and answer tags: a template's, not the model's words
_SPECIAL_TOKENS = re.compile(
    r"<\|[^|<>\n]{1,40}\|>|<\uff5c[^<>\n]{1,40}\uff5c>|</?s>|<end_of_turn>|<eos>|<eot>"
    r"|</?(?:think|thinking|answer|reasoning|solution|output)>",
    re.IGNORECASE,
)
# markdown and math delimiters left around prose: **bold**, # headings, ---, > quotes, \] closing a display, $ signs
_MARKUP = re.compile(
    r"\*{1,3}|_{2,}|^[ \t]*#{1,6}[ \t]*|^[ \t]*[-=*_]{3,}[ \t]*$|^[ \t]*>[ \t]?|\\[\[\]()]|\$\$?", re.M
)

# Phrases that close a reply and say nothing about the answer. Fixed phrases with small optional parts only: an
# open clause could carry a hedge past the scan ("let me know ..., but it may be 125").
_QUESTIONS = (
    r"(?:any |some )?(?:other |more |further |additional |follow-up |follow up )?questions?"
    r"(?: or (?:concerns|comments|requests))?"
)
_HELP_WORD = r"(?:help|clarification|assistance|explanation|details|information)"
_HELP = rf"(?:any |some )?(?:further |more |additional )?{_HELP_WORD}(?: or {_HELP_WORD})?"
_PLEASANTRIES = re.compile(
    "|".join(
        (
            rf"let me know if you(?: have| need| want| would like|['’]d like) (?:{_QUESTIONS}|{_HELP}"
            r"|me to (?:explain|clarify|elaborate|go over)[a-z ,'’-]{0,40})"
            rf"(?: or (?:need|want|would like) {_HELP})?",
            r"let me know if (?:anything|something) (?:is|was) (?:unclear|confusing)",
            r"let me know if there(?:['’]s| is) anything else(?: i can (?:help (?:you )?with|do))?",
            rf"do you have {_QUESTIONS}\s*\?",
            rf"if you have {_QUESTIONS}(?: or (?:need|want|would like) {_HELP})?,? (?:feel free to|please|just) "
            r"(?:ask|let me know|reach out)",
            rf"if you (?:need|want|would like) {_HELP},? (?:feel free to|please|just) (?:ask|let me know|reach out)",
            r"(?:feel free|don['’]t hesitate|do not hesitate) to (?:ask|reach out|let me know)"
            rf"(?: if you have {_QUESTIONS}| if you need {_HELP})?",
            r"(?:i )?hope (?:this|that|it|my|the)(?: answer| explanation| solution| breakdown)? (?:helps|helped|is "
            r"helpful|was helpful|is clear|is correct|is right|makes sense|answers your question)",
            r"is there anything else (?:i can help (?:you )?with|you (?:need|would like|'d like)(?: to know)?)\s*\?",
            rf"any {_QUESTIONS}\s*\?",
            # a question to the user about more help: letters and commas only, so no value or formula hides in it
            r"(?:would|do) you (?:like|want) me to [a-z ,'’-]{1,80}\?",
            r"(?:i am|i'm) (?:happy|glad) to help",
            # an offer to say more: letters only, so no value hides in it
            r"(?:let me|i can|i(?:['’]d| would) be (?:happy|glad) to) (?:explain|clarify|elaborate)(?: on)?"
            r"(?: (?:it|this|that|any step|each step|the steps|further|more|in more detail)){0,2}"
            r"(?: if (?:needed|necessary|you (?:like|want|need|wish|would like|['’]d like)))?",
            r"(?:happy|glad) (?:i could|to) help(?: further)?(?: if needed)?",
            r"good luck(?: with your (?:studies|homework|test|exam))?",
            r"thanks? (?:you )?(?:for (?:reading|asking|your question|the question))?",
            r"have a (?:great|nice|good|wonderful) (?:day|time|one)",
            r"you(?:['’]re| are) welcome",
            r"happy (?:learning|studying|solving)",
            r"cheers",
        )
    ),
    re.IGNORECASE,
)

# A take-back: a retraction, doubt, correction, alternative, condition, approximation or negation.
TAKES_BACK = re.compile(
    r"\b(?:wait|wrong|mistakes?|mistaken|errors?|erroneous|incorrect(?:ly)?|actually|instead|correction|corrected"
    r"|correcting|oops|whoops|hm+|h+m{2,}|uh|um+|recheck\w*|re-check\w*|reconsider\w*|redo|re-do|recompute\w*"
    r"|recalculat\w*|re-?evaluat\w*|re-?examin\w*|revis(?:e|ed|ing|ion)|but|however|although|though|alternatively"
    r"|alternative|otherwise|maybe|perhaps|possibly|probably|likely|unlikely|might|could|may\s+(?:be|have|not)"
    r"|unsure|uncertain|doubt\w*|guess\w*|suspect\w*|approx\w*|roughly|nearly|almost|or|either|rather|sorry"
    r"|apologi[sz]\w*|assum\w*|unless|if|suppos\w*|not|no|never|none|nor|neither|cannot|nothing|kidding|joking|both"
    r"|second\s+thought|scratch\s+that|never\s*mind|nvm"
    r"|retract\w*|take\s+(?:it|that|this)\s+back|typo|meant|update[ds]?|edit(?:ed)?|err+|tentative\w*|estimat\w*"
    r"|seem\w*|appears?|i\s+(?:think|believe)|at\s+(?:least|most)|around|more\s+or\s+less|give\s+or\s+take"
    r"|(?:please|you\s+(?:should|must|need\s+to))\s+(?:verify|check|double[\s-]?check|confirm)"
    r"|(?:verify|check|double[\s-]?check|confirm)\s+(?:this|that|it|my)"
    r"|let(?:['’]s|\s+me|\s+us)\s+(?:re\w*|check|verify|double|try|think|see|look|go\s+back|fix|correct|make\s+sure"
    r"|confirm|be\s+careful|start\s+over))\b|\w+n['’]t\b|\?",
    re.IGNORECASE,
)

# ---- values stated in the tail ---------------------------------------------------------------------------------

_SEGMENT = "\x00"  # where a math segment ($...$, \(...\)) stood in the prose
_VALUE = re.compile(_SEGMENT + r"|(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:[ \t]*/[ \t]*\d+)?%?(?![\w])")
_BOUNDARY = re.compile(r"[.!?;](?=\s|$)|\n")
# words that may stand between a statement's verb and its value ("the answer is just about exactly 125")
_TRAILING_FILLER = re.compile(
    r"(?:[\s*_(\[]|\b(?:just|exactly|really|simply|only|still|indeed|now|the|a|an|final|correct|right|answer|value"
    r"|result|total|number|sum|of|equal|to|that|this|here|also)\b)*$",
    re.IGNORECASE,
)
# between the answer (or a stated value) and a value that continues it: "\boxed{120}, 125", "120 and 125", "(also 125)"
_ONLY_PUNCTUATION = re.compile(
    r"(?:[\s.,;:!()\[\]{}*_#>'\"`~&+\-\u2013\u2014]|\b(?:and|also|plus|then|as well as)\b)*", re.I
)
_STATES = re.compile(
    r"(?:\b(?:it|that|this|which|answer|result|solution|total|value|sum|what|there)\s*(?:['’]s\b|\s(?:is|was|are|were"
    r"|equals|should\s+be|would\s+be|must\s+be|will\s+be|has\s+to\s+be|becomes|comes\s+to|remains)\b)"
    r"|\b(?:should|would|must)\s+be|['’]s"
    r"|\b(?:i\.e\.|e\.g\.|namely|so|thus|therefore|hence|giving|gives|yielding|yields|makes)"
    r"|\b(?:answers?|results?|solutions?|total)\s*:|=>|→|\\Rightarrow|\\implies|=)$",
    re.IGNORECASE,
)
_COMPUTED_LEFT = re.compile(r"[\d)}\]!]|[-+*/^×÷·]|\\(?:times|cdot|div|frac|sqrt)")
_FOLLOWED_BY_OPERATOR = re.compile(r"\s*(?:[-+*/^=×÷·]|\\(?:times|cdot|div))")
_ENUMERATOR = re.compile(r"[.)][ \t]+[A-Za-z]")


@dataclass(frozen=True)
class Ending:
    """What the text after the final answer does: ``hedge`` says why it takes the answer back (None: it does not);
    ``stated``: other values it states as the answer, in order."""

    hedge: str | None
    stated: tuple[str, ...] = ()


def math_segments(text: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    r"""The math-delimited segments of ``text`` (``$$...$$``, ``$...$``, ``\(...\)``, ``\[...\]``) as (start, end,
    content), and the plain stretches around them as (start, end), in one linear pass (a delimiter with no closing
    one is never searched for again; ``\$`` is a dollar sign).

    >>> math_segments(r"is $x+1$ or \(y\)")
    ([(3, 8, 'x+1'), (12, 17, 'y')], [(0, 3), (8, 12), (17, 17)])
    """
    segments, plain = [], []
    missing: set[str] = set()
    i = last = 0
    while i < len(text):
        for opener, closer in (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]")):
            if opener in missing or not text.startswith(opener, i) or (opener == "$" and i and text[i - 1] == "\\"):
                continue
            end = text.find(closer, i + len(opener))
            if end < 0:
                missing.add(opener)
                continue
            plain.append((last, i))
            segments.append((i, end + len(closer), text[i + len(opener) : end]))
            i = last = end + len(closer)
            break
        else:
            i += 1
    plain.append((last, len(text)))
    return segments, plain


def _clean(value: str) -> str:
    return " ".join(value.replace("$", " ").split()).strip(" .,;:*_")


def _stated(prose: str, values: list[str], answer: str) -> list[str]:
    """The values ``prose`` (segments replaced by ``_SEGMENT``) states as the answer, other than ``answer`` itself."""
    stated = []
    segment, last_stated = 0, 0  # where the previous value stated (or the answer) ends
    for match in _VALUE.finditer(prose):
        if match.group() == _SEGMENT:
            value, segment = values[segment], segment + 1
        else:
            value = match.group()
        before = prose[: match.start()]
        clause = before[max((m.end() for m in _BOUNDARY.finditer(before)), default=0) :]
        lead = clause[: _TRAILING_FILLER.search(clause).start()]
        after = prose[match.end() :]
        if _FOLLOWED_BY_OPERATOR.match(after) or _ENUMERATOR.match(after):
            says = False  # a computation starts there ("\n48 + 72 = 120"), or a numbered step ("\n1. She sold")
        elif _ONLY_PUNCTUATION.fullmatch(prose, last_stated, match.start()):  # right after the answer or a value
            says = True  # "\boxed{120}, 125", "\boxed{120} and 125", "Answers: 120, 125"
        elif not lead.strip():  # a sentence of its own: "\n125."
            says = True
        elif lead.rstrip().endswith("=") and not lead.rstrip().endswith("=>"):  # "= 125", "x = 125"; never "24*5 = 120"
            left = lead.rstrip()[:-1]
            left = left[max(left.rfind(","), left.rfind(":")) + 1 :].strip()
            says = not _COMPUTED_LEFT.search(left) or _clean(left) == answer
        else:
            says = bool(_STATES.search(lead.rstrip()))
        if says:
            last_stated = match.end()
        if says and _clean(value) and _clean(value) != answer:
            stated.append(_clean(value))
    return stated


def ending(tail: str, answer: str) -> Ending:
    r"""What ``tail`` (the text after the final answer ``answer``) does to it.

    >>> ending("\n\nLet me know if you have any other questions!", "120")
    Ending(hedge=None, stated=())
    >>> ending("\nWait, it is 125.", "120").hedge
    "a take-back ('Wait') in 'Wait, it is 125.'"
    >>> ending(". The answer is $125$.", "120").stated
    ('125',)
    """
    text = _SPECIAL_TOKENS.sub(" ", tail.replace(_SEGMENT, " "))  # a NUL of the model's is no segment marker
    shown = " ".join(text.split())
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    if len(text.strip()) > MAX_TAIL_CHARS:
        return Ending(f"{len(text.strip())} characters after the final answer: more than an ending ({shown!r})")
    if re.search(r"\\(?:boxed|fbox)\b", text):
        return Ending(f"another box after the final answer ({shown!r})")
    segments, plain = math_segments(text)
    pieces, values = [], []
    for (p_start, p_end), segment in zip(plain, [*segments, None]):
        pieces.append(text[p_start:p_end])
        if segment is not None:
            pieces.append(_SEGMENT)
            values.append(segment[2])
    prose = _PLEASANTRIES.sub(" ", _MARKUP.sub(" ", "".join(pieces)))
    word = TAKES_BACK.search(prose.replace(_SEGMENT, " ")) or next(
        (m for m in map(TAKES_BACK.search, values) if m is not None and m.group() != "?"), None
    )
    if word is not None:
        return Ending(f"a take-back ({word.group()!r}) in {shown!r}")
    return Ending(None, tuple(_stated(prose, values, _clean(answer))))


# ---- a negation just before a statement -------------------------------------------------------------------------

_NEGATION = re.compile(r"\b(?:not|never|no|cannot|neither|nor)\b|\w+n['’]t\b|\\neq?\b|≠", re.IGNORECASE)
_NOT_A_NEGATION = re.compile(r"\b(?:no doubt|not only|no matter|without a doubt)\b", re.IGNORECASE)
_CONTRAST = re.compile(r"\b(?:but|rather|instead|so|thus|therefore|hence|then)\b|[,:=]", re.IGNORECASE)


def negated_before(text: str, start: int) -> bool:
    r"""Whether the words just before the statement at ``start`` negate it: its sentence so far holds a negation with
    no contrast after it ("The answer is not \boxed{120}", "I don't think it is \boxed{120}"; not "It is not 125, it is
    \boxed{120}", "not 125 but \boxed{120}", "Since x is not 0, \boxed{5}").

    >>> negated_before(r"The answer is not \boxed{120}.", 18), negated_before(r"not 125 but \boxed{120}", 12)
    (True, False)
    """
    before = text[max(0, start - _NEGATION_WINDOW) : start]
    sentence = before[max((m.end() for m in _BOUNDARY.finditer(before)), default=0) :]
    negations = [m for m in _NEGATION.finditer(sentence) if not _NOT_A_NEGATION.match(sentence, m.start())]
    if not negations:
        return False
    return _CONTRAST.search(sentence, negations[-1].end()) is None
