"""File and member names as data: what is not UTF-8 is escaped, never an encoding error.

A name on disk or in an archive is bytes. Python reads one that is not UTF-8 (``bad\\xff.log``,
``café.log`` in a Latin-1 tar) with lone surrogates in place of the bad bytes, and every UTF-8
writer (JSONL, CSV, Parquet, ``--out``) then fails on them, losing the rows after. ``printable``
writes such a byte as ``\\xff`` (any other lone surrogate as ``\\udxxx``): the name stays
readable, and the original bytes can be told from it.
"""
from __future__ import annotations

import re
from typing import Any

SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _escape(match: "re.Match[str]") -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def printable(name: str) -> str:
    """``name`` with each lone surrogate (an undecodable byte) written as an escape."""
    return SURROGATE_RE.sub(_escape, name) if SURROGATE_RE.search(name) else name


def printable_values(value: Any) -> Any:
    """``printable`` applied to every string inside ``value`` (dicts, lists, tuples)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {k: printable_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [printable_values(v) for v in value]
    return value
