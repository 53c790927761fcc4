"""One quick test that tells the scanner when none of a line's signatures can match.

A line holding a keyword is tried against every signature of that keyword, alone and joined with
each neighbour; on a log full of near misses (``accept4() failed (24: Too many open files)``)
that is a dozen regex searches per line. A *screen* is the alternation of those signatures'
patterns with every zero-width assertion removed (``^ $ \\b \\B \\A \\Z`` and lookarounds) and
named groups unnamed. Removing an assertion only lets a pattern match more, so when the screen
finds nothing in a text, no signature of the group matches there: one search rules them all
out, and the exact per-signature search runs only where the screen found something.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..normalize import lines as normalize
from ..signatures.database import compile_pattern

_LOOSE: dict[tuple[str, str], Any] = {}

ANCHORS = {"b", "B", "A", "Z", "z", "G"}


def _group_end(pattern: str, i: int) -> int:
    """The index just past the ``)`` closing the group that opens at ``pattern[i]``."""
    depth, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1: i + 2] == "^":
                i += 1
            if pattern[i + 1: i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced group")


def loosen(pattern: str) -> str | None:
    """``pattern`` without its zero-width assertions and group names, or None when it has a
    construct this does not rewrite (back-references, inline flags, conditionals)."""
    out: list[str] = []
    i, in_class, after_quantifier = 0, False, False
    while i < len(pattern):
        c = pattern[i]
        if not in_class and c == "+" and after_quantifier:
            return None  # possessive: commits like an atomic group, see below
        after_quantifier = not in_class and c in "*+?}"
        if c == "\\":
            nxt = pattern[i + 1: i + 2]
            if not in_class and (nxt.isdigit() or nxt in ("g", "k")):
                return None  # a back-reference
            if not in_class and nxt in ANCHORS:
                i += 2
                continue
            out.append(pattern[i: i + 2])
            i += 2
            continue
        if in_class:
            out.append(c)
            in_class = c != "]"
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            for lead in ("^", "]"):
                if pattern[i: i + 1] == lead:
                    out.append(lead)
                    i += 1
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
            loose = _loose(sig)
            found = self._may[sig.id] = loose is None or loose.search(self.text) is not None
        return found


def build(signatures: Iterable[Any]) -> Any | None:
    """The screen of ``signatures`` (objects with ``pattern`` and ``flags``), compiled as their
    patterns are (``signatures.compile_pattern``); None when one of them cannot be loosened (then every signature is tried)."""
    parts = []
    for sig in signatures:
        if getattr(sig, "user", False):  # unvetted: only its budgeted pattern may run
            return None
        loose = loosen(sig.pattern)
        if loose is None:
            return None
        parts.append(f"(?i:{loose})" if "i" in sig.flags else f"(?:{loose})")
    if not parts:
        return None
    try:
        return compile_pattern("|".join(parts))
    except Exception:  # noqa: BLE001 - a pattern it cannot take: no screen, every signature tried
        return None
