"""The shapes an answer is read into (Leaf, Collection, Chain, Matrix), the bounds on them, and bracket scanning.

Shared by ``rewards.math.structure`` (which builds the tree), ``rewards.math.intervals`` (inequalities and
interval sets) and ``rewards.math.math_verifier`` (which compares two trees). Plain bounded Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_LENGTH = 1000  # characters, after the extractor has isolated the answer
MAX_DEPTH = 6  # bracket nesting
MAX_ITEMS = 64  # elements in a tuple/set/matrix


class Unparseable(ValueError):
    pass


class TooComplex(ValueError):
    pass


@dataclass(frozen=True)
class Leaf:
    text: str
    equation: bool = False  # a two-sided equation compared as an equation (x^2 + y^2 = 1)
    name: str = ""  # what the answer was called (``y`` in ``y = 2x + 1``): must match when both sides name it


@dataclass(frozen=True)
class Collection:
    items: tuple
    ordered: bool
    brackets: str  # "()" "[)" ... for ordered; "set" for sets, bare lists, "or" lists, \pm and unions
    # an interval set's variable (``x`` in ``x \in [0, 1]``), or a solution tuple's names (``p,q`` in
    # ``p=5,q=2;p=7,q=2``): compared when both sides have one
    name: str = ""
    # a set written in braces (``\{1, 2\}``): one object, an element of a list of sets, never flattened into it
    # (``\{1\}, \{2, 3\}`` is two sets, not 1, 2, 3); a bare list, an or-list, a \pm and a union are not
    braced: bool = field(default=False, repr=False, compare=False)


@dataclass(frozen=True)
class Chain:
    """``2 + 1 = 3``: every part must equal the reference."""

    parts: tuple
    name: str = ""  # ``x = 2 + 1 = 3``: the variable it is about, if written


@dataclass(frozen=True)
class Matrix:
    rows: tuple


OPEN = {"(": ")", "[": "]", r"\{": r"\}", "{": "}", r"\langle": r"\rangle"}
CLOSE = {")", "]", r"\}", "}", r"\rangle"}


def matching_close(text: str, open_index: int, pair: str = "{}") -> int:
    """Index of the bracket closing the one at ``open_index`` (``pair`` is open + close), or -1.

    >>> matching_close(r"\\text{a{b}c} d", 5), matching_close("f(x(y)", 1, "()")
    (11, -1)
    """
    depth, step = 0, {pair[0]: 1, pair[1]: -1}
    for i in range(open_index, len(text)):
        depth += step.get(text[i], 0)
        if depth == 0:
            return i
    return -1


def tokens(text: str):
    """(index, token) for bracket-aware scanning; ``\\{`` and ``\\langle`` count as one token."""
    i = 0
    while i < len(text):
        for multi in (r"\{", r"\}", r"\langle", r"\rangle"):
            if text.startswith(multi, i):
                yield i, multi
                i += len(multi)
                break
        else:
            yield i, text[i]
            i += 1


def split_top(text: str, separator: re.Pattern) -> list[str]:
    """Split at matches of ``separator`` that sit outside every bracket and brace."""
    if separator.search(text) is None:  # the common case (a plain answer): no depth map to build
        return [text.strip()]
    depth, cuts = 0, []
    depths = [0] * (len(text) + 1)
    for i, tok in tokens(text):
        if tok in OPEN or tok == "{":
            depth += 1
        elif tok in CLOSE or tok == "}":
            depth -= 1
        for j in range(i, i + len(tok)):
            depths[j] = depth if not (tok in OPEN or tok == "{") else depth - 1
    for m in separator.finditer(text):
        if depths[m.start()] == 0 and m.end() > m.start():
            cuts.append((m.start(), m.end()))
    parts, last = [], 0
    for start, end in cuts:
        parts.append(text[last:start])
        last = end
    parts.append(text[last:])
    return [p.strip() for p in parts]


def outer_brackets(text: str) -> tuple[str, str, str] | None:
    """(open, inner, close) when one bracket pair encloses the whole text (``[0, 9)`` counts)."""
    toks = list(tokens(text))
    if not toks or toks[0][1] not in OPEN:
        return None
    depth = 0
    for n, (i, tok) in enumerate(toks):
        if tok in OPEN:
            depth += 1
        elif tok in CLOSE:
            depth -= 1
            if depth == 0:
                if n != len(toks) - 1:
                    return None
                opener = toks[0][1]
                return opener, text[len(opener) : i], tok
    return None


def collection(nodes: list, ordered: bool, brackets: str, name: str = "", braced: bool = False) -> Collection:
    """A Collection within ``MAX_ITEMS``; an unordered one is flat (``{1 \\pm \\sqrt{5}, -2}`` has three elements),
    except for the sets written in braces it holds: ``\\{1\\}, \\{2, 3\\}`` is a list of two sets (a partition is
    not its union), whatever separates them (``,`` ``;`` ``or`` ``and``, boxes, ``ANSWER:`` lines)."""
    if not ordered:
        nodes = _shared_labels([n for node in nodes for n in (node.items if _flattens(node) else (node,))])
    if len(nodes) > MAX_ITEMS:
        raise TooComplex(f"more than {MAX_ITEMS} elements")
    return Collection(tuple(nodes), ordered, brackets, name, braced)


def _flattens(node) -> bool:
    """An unordered collection that only lists values (a bare list, ``3 or 4``, ``\\pm``): its values join the list."""
    return is_set(node) and not node.braced


def is_set(node) -> bool:
    return isinstance(node, Collection) and not node.ordered


def _is_point(node) -> bool:
    return isinstance(node, Collection) and node.ordered and node.brackets == "()"


def _shared_labels(nodes: list) -> list:
    r"""``(x, y) = (1, 2) \text{ or } (3, 4)``: a tuple's labels stand for the unlabeled tuples of its size after it.

    Dropping them would let ``(y, x) = (1, 2), (3, 4)`` (y is 1) pay for it, or any labels at all.
    """
    out, labels = [], ""
    for node in nodes:
        if _is_point(node) and "," in node.name:
            labels = node.name
        elif _is_point(node) and not node.name and labels and len(labels.split(",")) == len(node.items):
            node = Collection(node.items, True, "()", labels)
        out.append(node)
    return out
