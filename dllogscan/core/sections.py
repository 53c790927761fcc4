"""The header line a flattened issue thread, Q&A page or notebook puts before each part
(``--- comment 2 by bob ---``, ``--- answer 1 ---``, ``--- output 3 ---``): written by
``sources/shapes.py`` and ``sources/thread_page.py`` (``section``), known to the classifier's
evidence choice, which never cites it (it is the tool's own line, not the reporter's)."""
from __future__ import annotations

import re

#: a header as ``header`` writes it: the part's label (issue, question, comment N, note N, post N,
#: answer N), its author
HEADER = re.compile(
    r"--- (?:issue|question|(?:comment|note|post|answer|cell|output) [^\s-]{1,20})(?: by .{0,200})? ---")


def header(label: str, author: str) -> str:
    """The line before a part of a thread: ``--- {label} by {author} ---``."""
    by = f" by {author}" if author else ""
    return f"--- {label}{by} ---"


def section(label: str, author: str, text: str) -> str:
    """A part of a flattened thread: its header line, then its text."""
    return f"{header(label, author)}\n{text.strip()}\n"
