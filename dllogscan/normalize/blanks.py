"""Unicode blanks and invisible characters, folded before the keyword search.

Text pasted from a rendered page, a chat or a word processor carries no-break spaces (``&nbsp;``
becomes U+00A0), narrow and ideographic spaces, zero-width spaces and joiners, soft hyphens, a
stray byte-order mark, bidirectional marks. On screen ``killed by signal: Bus error`` looks the
same; in the bytes the keyword ``killed by signal`` is gone, and a bus error read as a bare worker
death is a wrong answer, not a missing one. ``fold`` writes every such blank as an ASCII space and
drops every such invisible character, over the raw bytes that the prefilter searches.

It keeps each line's length: a line's folded text is padded with spaces at its end (before its
``\\r``), so newlines stay where they were, and the streaming scanner's byte grid, line numbers
and split scan (``scan/parallel.py``) are those of the raw file. Only complete lines of at most
``max_line`` bytes (the scanner's ``MAX_LINE``) are folded: an unfinished last line waits for the
next round, and a longer line (matched in windows) stays as it is, so every round folds a line
the same way whichever round or worker reads it first.
"""
from __future__ import annotations

import re

#: Unicode space separators other than U+0020 (category Zs): no-break, ogham, en/em and the
#: other typographic spaces, narrow no-break, medium mathematical, ideographic
SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
#: characters that show nothing: soft hyphen, zero-width space / non-joiner / joiner, word
#: joiner and the invisible operators, byte-order mark, and the bidirectional marks, embeddings
#: and isolates (the bidirectional ones ``core/printable.py`` also drops from what it shows)
INVISIBLE = ("\u00ad\u061c\u200b\u200c\u200d\u200e\u200f" + "".join(map(chr, range(0x202A, 0x202F)))
             + "".join(map(chr, range(0x2060, 0x2065))) + "".join(map(chr, range(0x2066, 0x206A))) + "\ufeff")
FOLDED = [c.encode() for c in SPACES + INVISIBLE]
SPACE_RE = re.compile(f"[{SPACES}]")
INVISIBLE_RE = re.compile(f"[{INVISIBLE}]")
FOLDED_RE = re.compile(b"|".join(map(re.escape, FOLDED)))
#: a round whose last DENSE_SAMPLE bytes hold more than one character to fold per DENSE_BYTES
#: is folded in one pass over all its lines (about 120 ms per 4 MB where every line has some),
#: not line by line (about 5 us a line)
DENSE_BYTES, DENSE_SAMPLE = 512, 64 << 10
_SEARCHER = None


def _starts(data: bytes) -> list[int]:
    """Offsets of the characters to fold in ``data``: Aho-Corasick's vectorised search where the
    extension is installed (about 1 ms per MB of non-ASCII text), else a regex (about 5)."""
    global _SEARCHER
    if _SEARCHER is None:
        try:
            import ahocorasick_rs  # noqa: PLC0415 - only non-ASCII input needs it

            automaton = ahocorasick_rs.BytesAhoCorasick(FOLDED, matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
            _SEARCHER = lambda d: [start for _, start, _ in automaton.find_matches_as_indexes(d)]  # noqa: E731
        except ImportError:
            _SEARCHER = lambda d: [m.start() for m in FOLDED_RE.finditer(d)]  # noqa: E731
    return _SEARCHER(data)


def fold_text(data: bytes) -> bytes:
    """``data`` with every blank a space and every invisible character gone (its length changes);
    bytes that are not UTF-8 kept as they are."""
    while True:
        text = data.decode("utf-8", "surrogateescape")
        folded = INVISIBLE_RE.sub("", SPACE_RE.sub(" ", text)).encode("utf-8", "surrogateescape")
        if len(folded) == len(data):
            return folded
        data = folded  # bytes that were not UTF-8 can meet as a new character once one between goes


def fold_line(line: bytes) -> bytes:
    """One line (no ``\\n``) folded, its length kept: spaces pad its end, before a final ``\\r``."""
    return _padded(fold_text(line), len(line))


def _padded(folded: bytes, size: int) -> bytes:
    pad = b" " * (size - len(folded))
    return folded[:-1] + pad + b"\r" if folded.endswith(b"\r") else folded + pad


def fold(data: bytes, final: bool, max_line: int) -> bytes:
    """``data`` with every complete line of at most ``max_line`` bytes folded (the last line too
    when ``final``: the input ends there); ASCII data is returned as it is."""
    if data.isascii():
        return data
    limit = len(data) if final else data.rfind(b"\n") + 1
    region = data[:limit]
    sample = region[-DENSE_SAMPLE:]  # its start is the last round's, folded already
    if len(_starts(sample)) * DENSE_BYTES > len(sample):
        raw, folded = region.split(b"\n"), fold_text(region).split(b"\n")
        lines = [r if len(r) == len(f) or len(r) > max_line else _padded(f, len(r)) for r, f in zip(raw, folded)]
        return b"\n".join(lines) + data[limit:]
    starts = _starts(region)
    if not starts:
        return data
    pieces, done = [], 0
    for pos in starts:
        if pos < done:
            continue
        begin = region.rfind(b"\n", 0, pos) + 1
        stop = region.find(b"\n", pos)
        stop = limit if stop == -1 else stop
        line = region[begin:stop]
        pieces += [region[done:begin], line if len(line) > max_line else fold_line(line)]
        done = stop
    pieces.append(data[done:])
    return b"".join(pieces)
