"""Which ASCII digits a group of signatures cannot tell apart, so that a line's outcome can be
remembered by its *shape* (``matcher.LineMatcher._shape``): a crash loop's lines differ only in
pids, ports and line numbers, and the exact-bytes memo never sees the same line twice.

A pattern reads a character only through its atoms (literals, classes, ``.``, ``\\d``, ``\\w``,
``\\b``...). Where every atom that accepts one digit of a set accepts them all, the engine takes
the same steps on a text and on that text with those digits swapped for one another, so it finds
a match in one exactly where it finds one in the other. ``table`` gives the ``bytes.translate``
table that sends each digit to the first one it cannot be told from (``Errno 24``: 2 and 4 stay,
the other eight become 0), or None when it cannot say: a back-reference (it compares what two
places hold), a user's signature (a budgeted pattern), or syntax the ``regex`` module may read
otherwise than ``re``'s parser (POSIX classes, fuzzy counts, ``\\p``), whose parse is used here.
``normalize.views`` reads every digit alike too, except in a structured record (JSON numbers):
the matcher shapes no line that holds a ``{``.

A pattern that tells digits apart (``User defined signal [12]``) keeps many shapes of a line with
a pid in it apart; ``widen`` makes its splitting atoms accept every digit, which only lets it match
more. Where the widened patterns find nothing in a line and its joins, no line of that line's
all-digits-alike shape can hold a match of the originals (``shaping``).
"""
from __future__ import annotations

import re
from typing import Any, Iterable

try:  # private modules of re (3.11-3.13 at least): without them no line is shaped, only slower
    from re import _constants as sre  # noqa: PLC2701 - the parse tree of re, the patterns' syntax
    from re import _parser  # noqa: PLC2701
except ImportError:  # pragma: no cover - a Python that moved them
    sre = _parser = None  # type: ignore[assignment]

from .screen import _class_end, _quantifier_end, build, unnamed

DIGITS = "0123456789"
#: every digit sent to 0: the table of signatures that read every digit alike, as they are or widened
ALL_ALIKE = bytes.maketrans(DIGITS.encode(), b"0" * len(DIGITS))
#: text of a pattern that ``regex`` may read otherwise than ``re``: a POSIX class, a fuzzy count
#: or a constraint (``{e<=1}``), a property, a named list, version or branch-reset flags
UNSURE_RE = re.compile(r"\[:\^?[a-zA-Z]+:\]|\{\s*[a-zA-Z]|\\[pPNLXGKmM]|\(\?[V|]|\(\?\(")
#: categories a class may hold; each holds every digit or none
CATEGORIES = {sre.CATEGORY_DIGIT, sre.CATEGORY_NOT_DIGIT, sre.CATEGORY_SPACE, sre.CATEGORY_NOT_SPACE,
              sre.CATEGORY_WORD, sre.CATEGORY_NOT_WORD} if sre is not None else set()
REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT} if sre is not None else set()

_SETS: dict[tuple[str, str], list[frozenset[str]] | None] = {}


class Unsure(Exception):
    """A construct whose reading of digits is not known here."""


def _class_digits(items: list) -> frozenset[str]:
    """The digits a parsed class (``IN``) accepts."""
    negate, found = False, set()
    for op, av in items:
        if op is sre.NEGATE:
            negate = True
        elif op is sre.LITERAL:
            found.update(d for d in DIGITS if ord(d) == av)
        elif op is sre.RANGE:
            found.update(d for d in DIGITS if av[0] <= ord(d) <= av[1])
        elif op is sre.CATEGORY and av in CATEGORIES:
            if av in (sre.CATEGORY_DIGIT, sre.CATEGORY_WORD, sre.CATEGORY_NOT_SPACE):
                found.update(DIGITS)
        else:
            raise Unsure(op)
    return frozenset(set(DIGITS) - found if negate else found)


def _atom_sets(parsed: Iterable, out: list[frozenset[str]]) -> None:
    """Add to ``out`` the set of digits each atom of ``parsed`` accepts, where it is some but not
    all of them (those that split the digits); raise ``Unsure`` on what this does not read."""
    for op, av in parsed:
        if op in (sre.LITERAL, sre.NOT_LITERAL):
            if chr(av) in DIGITS:
                out.append(frozenset(chr(av)))
        elif op is sre.IN:
            found = _class_digits(av)
            if 0 < len(found) < len(DIGITS):
                out.append(found)
        elif op in (sre.ANY, sre.AT):
            continue  # any character; anchors and \b see a digit as a word character, all alike
        elif op is sre.SUBPATTERN:
            _atom_sets(av[3], out)
        elif op is sre.BRANCH:
            for branch in av[1]:
                _atom_sets(branch, out)
        elif op in REPEATS:
            _atom_sets(av[2], out)
        elif op is sre.ATOMIC_GROUP:
            _atom_sets(av, out)
        elif op in (sre.ASSERT, sre.ASSERT_NOT):
            _atom_sets(av[1], out)
        else:
            raise Unsure(op)  # back-references (GROUPREF, GROUPREF_EXISTS) and the unknown


def splitting_sets(pattern: str, flags: str = "") -> list[frozenset[str]] | None:
    """The sets of digits the atoms of ``pattern`` tell from the rest (cached); None when unsure."""
    key = (pattern, flags)
    if key not in _SETS:
        found: list[frozenset[str]] | None = []
        try:
            plain = unnamed(pattern)  # regex lets two groups share a name; re does not
            if _parser is None or plain is None or UNSURE_RE.search(pattern):
                raise Unsure(pattern)
            _atom_sets(_parser.parse(plain, re.IGNORECASE if "i" in flags else 0), found)
        except (Unsure, re.error, RecursionError, OverflowError, ValueError):
            found = None
        _SETS[key] = found
    return _SETS[key]


def table(signatures: Iterable[Any]) -> bytes | None:
    """The ``bytes.translate`` table that sends each digit to the first digit no pattern of
    ``signatures`` tells it from; None when one of them is unsure, or when every digit is told
    from every other (the table would change nothing)."""
    sets: list[frozenset[str]] = []
    for sig in signatures:
        found = None if getattr(sig, "user", False) else splitting_sets(sig.pattern, sig.flags)
        if found is None:
            return None
        sets.extend(found)
    first: dict[tuple[bool, ...], str] = {}
    to = "".join(first.setdefault(tuple(d in s for s in sets), d) for d in DIGITS)
    if to == DIGITS:
        return None
    return bytes.maketrans(DIGITS.encode(), to.encode())


#: group openers under which a wider atom may make a pattern match less: a negative lookaround
#: (it must not match), an atomic group (it commits to its first way through)
NARROWING = ("(?!", "(?<!", "(?>")
POSSESSIVE_RE = re.compile(r"[*+?}]\+")


def widen(pattern: str, flags: str = "") -> str | None:
    """``pattern`` with each atom that tells digits apart made to accept every digit (a digit
    ``1`` -> ``\\d``, ``[12]`` -> ``[0-912]``): it reads every digit alike and matches wherever
    ``pattern`` does, so where it finds nothing in a text, ``pattern`` finds nothing in any text of
    the same shape. ``pattern`` itself when it reads every digit alike; None when unsure, or
    when such an atom sits where a wider atom may match less (``NARROWING``, a possessive
    quantifier anywhere)."""
    if splitting_sets(pattern, flags) is None:
        return None
    if not splitting_sets(pattern, flags):
        return pattern
    if "(?>" in pattern or POSSESSIVE_RE.search(pattern):
        return None
    out: list[str] = []
    stack: list[bool] = []  # per open group: whether it narrows
    i = 0
    try:
        while i < len(pattern):
            c = pattern[i]
            if c == "\\":
                nxt = pattern[i + 1: i + 2]
                if nxt.isdigit() or nxt in ("x", "u", "U", "N", "o", "g", "k"):
                    return None  # a digit written as an escape, or a back-reference
                out.append(pattern[i: i + 2])
                i += 2
            elif c == "[":
                end = _class_end(pattern, i)
                part = pattern[i:end]
                found = splitting_sets(part, flags)
                if found is None:
                    return None
                if found:
                    if any(stack) or part.startswith(("[^", "[]")):
                        return None
                    part = "[0-9" + part[1:]
                out.append(part)
                i = end
            elif c == "(":
                opener = pattern[i: i + 4]
                if pattern.startswith(("(?P<", "(?<"), i) and not pattern.startswith(("(?<=", "(?<!"), i):
                    close = pattern.index(">", i) + 1  # a group's name: copied as it is
                    out.append(pattern[i:close])
                    i = close
                elif opener.startswith("(?") and not opener.startswith(("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>")):
                    return None  # flags, conditionals, comments, references
                else:
                    out.append(c)
                    i += 1
                stack.append(any(stack) or opener.startswith(NARROWING))
            elif c == ")":
                stack.pop()
                out.append(c)
                i += 1
            elif c == "{" and _quantifier_end(pattern, i) > i:
                end = _quantifier_end(pattern, i)
                out.append(pattern[i:end])  # a count: its digits are no atoms
                i = end
            elif c in DIGITS:
                if any(stack):
                    return None
                out.append("\\d")
                i += 1
            else:
                out.append(c)
                i += 1
    except (IndexError, ValueError):
        return None
    wide = "".join(out)
    return wide if splitting_sets(wide, flags) == [] else None


class _Wide:
    """A signature's pattern widened (``widen``), as ``screen.build`` takes it."""

    def __init__(self, pattern: str, flags: str) -> None:
        self.pattern, self.flags = pattern, flags


def shaping(signatures: list[Any]) -> tuple[bytes | None, Any | None]:
    """How the matcher shapes a line for ``signatures``: a table (``ALL_ALIKE`` where every
    pattern can be widened, else ``table``) and, where some pattern had to be widened, the screen
    of the widened patterns, which must find nothing in a line and its joins before its shape
    stands for a miss (the originals then find nothing in any line of that shape)."""
    wide = [None if getattr(s, "user", False) else widen(s.pattern, s.flags) for s in signatures]
    if all(w is not None for w in wide):
        if all(w == s.pattern for w, s in zip(wide, signatures)):
            return ALL_ALIKE, None
        found = build(_Wide(w, s.flags) for w, s in zip(wide, signatures))
        if found is not None:
            return ALL_ALIKE, found
    return table(signatures), None
