"""The literals every prefilter searches for: the signature keywords, reduced to those that no
other keyword contains, and kept within what the fast searcher takes."""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

#: Aho-Corasick's vectorised (packed, "Teddy") searcher takes at most 64 literals; at 65 it falls
#: back to the automaton, about six times slower (measured on the batch bench's logs: 2.8 ms ->
#: 17 ms per 12 MB; the bench's mixed logs, 2 processes: 0.75 s -> 0.94 s)
PACKED_LIMIT = 64
#: the shortest literal that may stand for several keywords (``workers`` for ``num_workers``,
#: ``persistent_workers``, ...): shorter ones would wake the scanner on too many lines
MIN_SHARED = 5
WORD = re.compile(rb"[A-Za-z]+")


def anchors(keywords: Iterable[str], limit: int = PACKED_LIMIT) -> list[bytes]:
    """The minimal literals whose presence covers every keyword (a line with ``Bus error.``
    also holds ``Bus error``, so searching the shorter one suffices), shortest first and in one
    order whatever the hash seed: the Hyperscan cache is keyed by this list (ties in length once
    kept the set's order, new each run: a cache miss and a 2-5 ms compile nearly every start).

    Over ``limit``, literals that share a word give way to it (see ``_shared``): a line the
    prefilter then finds is still matched against the keywords it really holds."""
    out = _minimal({k.encode("utf-8") for k in keywords})
    while len(out) > limit:
        shared = _shared(out, len(out) - limit + 1)
        if shared is None:
            break
        out = _minimal({a for a in out if shared not in a} | {shared})
    return out


def _minimal(literals: set[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for kw in sorted(literals, key=lambda k: (len(k), k)):
        if not any(a in kw for a in out):
            out.append(kw)
    return out


def _shared(literals: list[bytes], needed: int) -> bytes | None:
    """The longest word (a run of at least ``MIN_SHARED`` letters) that ``needed`` literals hold,
    else the one most literals hold (two at least); ties go to the word more literals hold."""
    held: Counter[bytes] = Counter()
    for lit in literals:
        held.update({w for w in WORD.findall(lit) if len(w) >= MIN_SHARED})
    candidates = sorted((w for w, n in held.items() if n >= 2), key=lambda w: (-len(w), -held[w], w))
    enough = [w for w in candidates if held[w] >= needed]
    if enough:
        return enough[0]
    return max(candidates, key=lambda w: (held[w], len(w)), default=None)
