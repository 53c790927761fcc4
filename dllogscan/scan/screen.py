"""One quick test that tells the scanner when none of a line's signatures can match.

A line holding a keyword is tried against every signature of that keyword, alone and joined with
each neighbour; on a log full of near misses (``accept4() failed (24: Too many open files)``)
that is a dozen regex searches per line. A line's *screen* (``build``) is the alternation of
those signatures' own patterns, named groups unnamed: searched in the same texts, it finds
something exactly where some signature does, so one search rules them all out, and the
per-signature search runs only where the screen found something. A *round* screen
(``RoundScreen``) reads a whole round as one text, where a line's anchors and lookarounds mean
something else: it searches the patterns with every zero-width assertion removed (``loosen``:
``^ $ \\b \\B \\A \\Z`` and lookarounds), which only lets a pattern match more.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from ..normalize import lines as normalize
from ..signatures.database import compile_pattern

_LOOSE: dict[tuple[str, str], Any] = {}
_ROUND: dict[tuple[str, str], list[Any] | None] = {}

ANCHORS = {"b", "B", "A", "Z", "z", "G"}


def _class_end(pattern: str, i: int) -> int:
    """The index just past the ``]`` closing the character class that opens at ``pattern[i]``
    (a ``]`` first in the class, or after its ``^``, is a member); the end when none closes it."""
    j = i + 1
    for lead in ("^", "]"):
        if pattern[j: j + 1] == lead:
            j += 1
    while j < len(pattern):
        if pattern[j] == "\\":
            j += 2
            continue
        if pattern[j] == "]":
            return j + 1
        j += 1
    return len(pattern)


def _outside_classes(pattern: str, i: int = 0) -> Iterator[tuple[int, str, int]]:
    """Each character of ``pattern`` from ``i`` that is neither escaped nor in a character class,
    with its offset and the group depth after it (``(`` counts in, ``)`` counts out)."""
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(pattern, i)
            continue
        depth += (c == "(") - (c == ")")
        yield i, c, depth
        i += 1


def _group_end(pattern: str, i: int) -> int:
    """The index just past the ``)`` closing the group that opens at ``pattern[i]``."""
    for at, c, depth in _outside_classes(pattern, i):
        if c == ")" and depth == 0:
            return at + 1
    raise ValueError("unbalanced group")


def loosen(pattern: str) -> str | None:
    """``pattern`` without its zero-width assertions and group names, or None when it has a
    construct this does not rewrite (back-references, inline flags, conditionals)."""
    out: list[str] = []
    i, after_quantifier = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "+" and after_quantifier:
            return None  # possessive: commits like an atomic group, see below
        after_quantifier = c in "*+?}"
        if c == "\\":
            nxt = pattern[i + 1: i + 2]
            if nxt.isdigit() or nxt in ("g", "k"):
                return None  # a back-reference
            if nxt not in ANCHORS:
                out.append(pattern[i: i + 2])
            i += 2
            continue
        if c == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])  # a class asserts nothing: kept whole
            i = end
            continue
        if c in "^$":
            i += 1
            continue
        if c == "(" and pattern[i + 1: i + 2] == "?":
            rest = pattern[i + 2:]
            if rest.startswith(("=", "!", "<=", "<!")):
                i = _group_end(pattern, i)  # a lookaround: drop it whole
                continue
            if rest.startswith(("P<", "<")) and not rest.startswith(("<=", "<!")):
                close = pattern.index(">", i)
                out.append("(?:")
                i = close + 1
                continue
            if not rest.startswith(":"):
                # inline flags, conditionals, comments, (?P=name); and atomic groups, which
                # commit to their first way through: without an assertion that first way may
                # change and the whole match fail, so the loose pattern would not match more
                return None
        out.append(c)
        i += 1
    return "".join(out)


CLASS_ESCAPES = set("wWdDsS")
QUANTIFIER_START = set("*+?{")


def _atom_end(pattern: str, i: int) -> tuple[int, bool]:
    """The end of the atom at ``pattern[i]`` (a character, an escape, a class, a group) and
    whether it is one literal character."""
    c = pattern[i]
    if c == "\\":
        return i + 2, pattern[i + 1: i + 2] not in CLASS_ESCAPES
    if c == "[":
        return _class_end(pattern, i), False
    if c == "(":
        return _group_end(pattern, i), False
    return i + 1, c != "."


def _quantifier_end(pattern: str, i: int) -> int:
    """Just past the quantifier (and its lazy ``?``) at ``pattern[i]``; ``i`` when none is there."""
    if i >= len(pattern) or pattern[i] not in QUANTIFIER_START:
        return i
    if pattern[i] == "{":
        close = pattern.find("}", i)
        if close == -1 or not all(ch.isdigit() or ch == "," for ch in pattern[i + 1: close]):
            return i  # a literal brace
        i = close + 1
    else:
        i += 1
    return i + 1 if pattern[i: i + 1] == "?" else i


def branches(pattern: str) -> list[str]:
    """The top-level alternatives of ``pattern`` (split at each ``|`` outside groups and classes)."""
    parts, begin = [], 0
    for at, c, depth in _outside_classes(pattern):
        if c == "|" and depth == 0:
            parts.append(pattern[begin:at])
            begin = at + 1
    parts.append(pattern[begin:])
    return parts


def trim_head(branch: str) -> str:
    """``branch`` from its first literal character that no quantifier makes optional: the
    atoms before it (classes, groups, optional characters) are dropped. A text holding a match
    of the branch holds one of what is left, so a search for it is as safe a screen, and one
    that starts at a literal is far quicker (the engine skips ahead to that character)."""
    i = 0
    try:
        while i < len(branch):
            end, literal = _atom_end(branch, i)
            after = _quantifier_end(branch, end)
            if literal and (after == end or branch[end] == "+"):
                return branch[i:]
            i = after
    except (IndexError, ValueError):
        return branch  # not well formed: left as it is
    return branch


MAX_PIECES = 32


def pieces(pattern: str, depth: int = 0) -> list[str]:
    """``pattern`` as alternatives that together match exactly where it does, each from its
    first required literal (``trim_head``, which only lets a piece match more): a branch that
    opens with a group is spread over the group's alternatives (``(?:a|b)c`` is ``ac|bc``)."""
    out: list[str] = []
    for branch in branches(pattern):
        spread = None
        opener = 3 if branch.startswith("(?:") else 1 if branch.startswith("(") and not branch.startswith("(?") else 0
        if depth < 4 and opener:
            try:
                end = _group_end(branch, 0)
            except ValueError:
                end = 0
            if end and _quantifier_end(branch, end) == end:  # a group that must match: spread it
                inner = branch[opener:end - 1]
                spread = [p for alt in branches(inner) for p in pieces(alt + branch[end:], depth + 1)]
        for piece in spread if spread is not None else [trim_head(branch)]:
            if piece not in out:
                out.append(piece)
        if len(out) > MAX_PIECES:
            return [pattern]
    return out


def _loose(sig: Any) -> Any | None:
    """One signature's loosened pattern, compiled (cached); None when it has none. A user's
    signature never gets one: its pattern runs only under its time budget (``sigprobe.py``)."""
    if getattr(sig, "user", False):
        return None
    key = (sig.pattern, sig.flags)
    if key not in _LOOSE:
        loose = loosen(sig.pattern)
        compiled = None
        if loose is not None:
            try:
                compiled = compile_pattern(loose, sig.flags)
            except Exception:  # noqa: BLE001 - a pattern it cannot take: no screen, every line tried
                compiled = None
        _LOOSE[key] = compiled
    return _LOOSE[key]


class RoundScreen:
    """Which signatures can match nowhere in one round's ``data``, asked once per signature.

    Where ``normalize.plain_lines(data)`` holds, every text the scanner matches in this data (a
    line's view, a line joined with a neighbour) is a substring of ``data`` with newlines read as
    spaces; a signature whose loosened pattern finds nothing there cannot match any of them. Made
    only for rounds with many keyword lines (a log of near misses), where it turns thousands of
    per-line searches into one search over the round."""

    def __init__(self, data: bytes) -> None:
        self.text = data.replace(b"\n", b" ").decode("ascii") if normalize.plain_lines(data) else None
        self._may: dict[str, bool] = {}

    def may_match(self, sig: Any) -> bool:
        if self.text is None:
            return True
        found = self._may.get(sig.id)
        if found is None:
            parts = _round_parts(sig)
            found = self._may[sig.id] = parts is None or any(p.search(self.text) for p in parts)
        return found


def _round_parts(sig: Any) -> list[Any] | None:
    """One signature's loosened pattern as separate searches, one per alternative, each from its
    first required literal (``trim_head``): on a round of megabytes an alternation, or a branch
    that starts with a class, is tried at every offset, and one of them cost 160 ms per 4 MB
    where its parts cost 2 ms. None when the signature has no loosened pattern."""
    key = (sig.pattern, sig.flags)
    if key not in _ROUND:
        parts = None
        loose = loosen(sig.pattern) if _loose(sig) is not None else None
        if loose is not None:
            try:
                parts = [compile_pattern(p, sig.flags) for p in pieces(loose)]
            except Exception:  # noqa: BLE001 - a piece it cannot take: the whole loose pattern instead
                parts = [_loose(sig)]
        _ROUND[key] = parts
    return _ROUND[key]


def unnamed(pattern: str) -> str | None:
    """``pattern`` with its named groups made plain (``(?P<pid>`` -> ``(?:``), so that the
    patterns of a group may be joined in one alternation; None when it refers to a group
    (back-references: a number, ``(?P=name)``, ``g<name>`` after a backslash)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            if pattern[i + 1: i + 2].isdigit() or pattern[i + 1: i + 2] in ("g", "k"):
                return None
            out.append(pattern[i: i + 2])
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            out.append(pattern[i:end])
            i = end
        elif pattern.startswith("(?P=", i):
            return None
        elif pattern.startswith(("(?P<", "(?<"), i) and not pattern.startswith(("(?<=", "(?<!"), i):
            out.append("(?:")
            i = pattern.index(">", i) + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def build(signatures: Iterable[Any]) -> Any | None:
    """The screen of ``signatures`` (objects with ``pattern`` and ``flags``): their patterns, group
    names made plain (``unnamed``), in one alternation compiled as they are
    (``signatures.compile_pattern``); None when one of them refers to a group (then every signature
    is tried). Searched in the very texts the signatures are (a line's views, a line joined with a
    neighbour), it keeps every assertion: it finds something exactly where some member does. Until
    session 58 it was the loosened alternation (``loosen``, as the round screen is): without its
    anchor and lookarounds a class-led pattern was tried at every offset of a long line (5 MB of
    ``OS | `` took 30 s), and a line that a lookahead rules out passed it and was then searched by
    each member alone and joined with each neighbour (20 MB of ``/dev/shm/cache/...`` lines, 20 s)."""
    parts = []
    for sig in signatures:
        if getattr(sig, "user", False):  # unvetted: only its budgeted pattern may run
            return None
        plain = unnamed(sig.pattern)
        if plain is None:
            return None
        parts.append(f"(?i:{plain})" if "i" in sig.flags else f"(?:{plain})")
    if not parts:
        return None
    try:
        return compile_pattern("|".join(parts))
    except Exception:  # noqa: BLE001 - a pattern it cannot take: no screen, every signature tried
        return None
