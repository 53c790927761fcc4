"""The literals every prefilter searches for: the signature keywords, reduced to those that no
other keyword contains."""
from __future__ import annotations

from typing import Iterable


def anchors(keywords: Iterable[str]) -> list[bytes]:
    """The minimal literals whose presence covers every keyword (a line with ``Bus error.``
    also holds ``Bus error``, so searching the shorter one suffices), shortest first and in one
    order whatever the hash seed: the Hyperscan cache is keyed by this list (ties in length once
    kept the set's order, new each run: a cache miss and a 2-5 ms compile nearly every start)."""
    kws = sorted({k.encode("utf-8") for k in keywords}, key=lambda k: (len(k), k))
    out: list[bytes] = []
    for kw in kws:
        if not any(a in kw for a in out):
            out.append(kw)
    return out
