"""Documents that are not logs: issue-tracker exports (GitHub, GitLab, Discourse), Jupyter
notebooks and HTML pages.

They are flattened into one text (title, body, comments in order; code blocks kept line for line)
before scanning, so evidence line numbers refer to that flattened text. Plain logs never reach the
parsers: only an input whose first byte is ``{`` or ``<`` (a JSON array is read as text) and that ends under
``MAX_DOCUMENT_BYTES`` is read whole and tried.
"""
from __future__ import annotations

import json
from typing import BinaryIO

from ..core.utf8 import to_utf8
from .html_text import html_to_text, looks_like_html
from .shapes import flatten_json

MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
__all__ = ["MAX_DOCUMENT_BYTES", "flatten_bytes", "flatten_stream", "html_to_text"]


def _candidate(head: bytes) -> bool:
    """Could be a document: starts with ``{`` or ``<``, and is not JSON lines (a structured log)."""
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] == b"<":
        return True
    if head[:1] != b"{":
        return False
    first, sep, after = head.partition(b"\n")
    if sep and after.lstrip()[:1] == b"{":
        try:
            json.loads(first)
            return False
        except ValueError:
            pass
    return True


def _read_up_to(stream: BinaryIO, n: int) -> bytes:
    parts: list[bytes] = []
    while n > 0:
        piece = stream.read(n)
        if not piece:
            break
        parts.append(piece)
        n -= len(piece)
    return b"".join(parts)


def flatten_bytes(data: bytes) -> tuple[bytes, str | None]:
    """``(text, kind)``: the flattened text of a known document, or ``(data, None)`` unchanged."""
    if not _candidate(data[:4096]):
        return data, None
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    if text.lstrip().startswith("{"):
        try:
            found = flatten_json(json.loads(text))
        except (ValueError, RecursionError):
            return data, None
        if found is None:
            return data, None
        kind, flat = found
        return to_utf8(flat), kind
    if looks_like_html(text):
        return to_utf8(html_to_text(text)), "html"
    return data, None


def flatten_stream(head: bytes, rest: BinaryIO, limit: int = MAX_DOCUMENT_BYTES) -> tuple[bytes, str | None]:
    """For the pipeline, after sniffing: ``(head, None)`` untouched for a plain log. An input that
    may be a document is read on up to ``limit`` bytes; when it ended there and is a known
    document, ``(flattened text, kind)`` comes back (``rest`` is then exhausted). Otherwise every
    byte read is returned as the new head, to be read in front of ``rest``."""
    if not _candidate(head):
        return head, None
    data = head + _read_up_to(rest, limit + 1 - len(head))
    if len(data) > limit:
        return data, None
    return flatten_bytes(data)
