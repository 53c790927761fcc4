"""The literals every prefilter searches for: the signature keywords, reduced to those that no
other keyword contains, and how they are grouped for the packed searcher."""
from __future__ import annotations

from typing import Iterable

#: Aho-Corasick's vectorised (packed, "Teddy") searcher takes at most 64 literals; at 65 it falls
#: back to the automaton, about six times slower (measured on the batch bench's logs: 2.8 ms ->
#: 17 ms per 12 MB). More anchors than this are searched in several packed groups, one pass each.
PACKED_LIMIT = 64


def anchors(keywords: Iterable[str]) -> list[bytes]:
    """The minimal literals whose presence covers every keyword (a line with ``Bus error.``
    also holds ``Bus error``, so searching the shorter one suffices), shortest first and in one
    order whatever the hash seed: the Hyperscan cache is keyed by this list (ties in length once
    kept the set's order, new each run: a cache miss and a 2-5 ms compile nearly every start)."""
    out: list[bytes] = []
    for kw in sorted({k.encode("utf-8") for k in keywords}, key=lambda k: (len(k), k)):
        if not any(a in kw for a in out):
            out.append(kw)
    return out


def packed_groups(literals: list[bytes], limit: int = PACKED_LIMIT) -> list[list[bytes]]:
    """``literals`` in as few groups of at most ``limit`` as there can be, of even sizes (one
    pass of the packed searcher each), every group in the list's order."""
    if not literals:
        return []
    count = -(-len(literals) // limit)
    return [literals[i::count] for i in range(count)]
