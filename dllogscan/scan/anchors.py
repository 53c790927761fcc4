"""The literals every prefilter searches for: the signature keywords, reduced to those that no
other keyword contains."""
from __future__ import annotations

from typing import Iterable


def anchors(keywords: Iterable[str]) -> list[bytes]:
    """The minimal literals whose presence covers every keyword (a line with ``Bus error.``
    also holds ``Bus error``, so searching the shorter one suffices)."""
    kws = sorted({k.encode("utf-8") for k in keywords}, key=len)
    out: list[bytes] = []
    for kw in kws:
        if not any(a in kw for a in out):
            out.append(kw)
    return out
