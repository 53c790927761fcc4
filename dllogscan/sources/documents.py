"""Documents that are not logs: issue-tracker exports (GitHub, GitLab, Discourse), Jupyter
notebooks and HTML pages.

They are flattened into one text (title, body, comments in order; code blocks kept line for line)
before scanning, so evidence line numbers refer to that flattened text. Plain logs never reach the
parsers: only an input that starts with ``{``, ``<`` or an array of objects (``[{``, ``[[{``) and
ends under ``MAX_DOCUMENT_BYTES`` is read whole and tried (JSON of at most
``MAX_DOCUMENT_VALUES`` values). An array is parsed one element at a time and given up on (read
as text) at its first element that is no part of a thread.
"""
from __future__ import annotations

import json
import re
from typing import Any, BinaryIO, Iterator

from ..core.utf8 import to_utf8
from .html_text import html_to_text, looks_like_html
from .shapes import flatten_array, flatten_json

MAX_DOCUMENT_BYTES = 20 * 1024 * 1024
#: the most values (keys included) a JSON document is decoded into; one past it is read as text.
#: Python holds a value in 50 to 200 bytes, and one can take three bytes of input (``{},``): 20 MiB
#: of empty comments decoded to 1.3 GB and took 17 s to flatten. A real export spends 10 bytes or
#: more on a value (a REST comment about 50), so one under ``MAX_DOCUMENT_BYTES`` holds fewer
MAX_DOCUMENT_VALUES = 2_000_000
#: a JSON string (from its opening quote to its closing one, or to the end where none closes it),
#: or a mark that a value or key follows; possessive, so no escape leaves a state to backtrack to
JSON_TOKEN_RE = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?|[\[{,:]', re.DOTALL)
QUOTE = ord('"')
#: JSON's white space (the decoder's own set)
JSON_SPACE = re.compile(r"[ \t\n\r]*")
__all__ = ["MAX_DOCUMENT_BYTES", "flatten_bytes", "flatten_stream", "html_to_text"]


def _candidate(head: bytes) -> bool:
    """Could be a document: starts with ``<``, with an array of objects (pages of them, as ``gh api
    --paginate --slurp`` writes), or with ``{`` and is not JSON lines (a structured log). A log line
    that starts with ``[`` (``[rank0]:``, ``[2024-01-01 ...]``) is none of these."""
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] == b"<":
        return True
    if head[:1] == b"[":
        inner = head[1:].lstrip(b" \t\r\n")
        if inner[:1] == b"[":
            inner = inner[1:].lstrip(b" \t\r\n")
        return inner[:1] == b"{"
    if head[:1] != b"{":
        return False
    first, sep, after = head.partition(b"\n")
    if sep and after.lstrip()[:1] == b"{":
        try:
            json.loads(first)
            return False
        except (ValueError, RecursionError):  # RecursionError: nested past the decoder's depth
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


def array_elements(text: str) -> Iterator[Any]:
    """The elements of the JSON array ``text``, decoded one at a time (ValueError where it is not
    one). Arrays one after another (the pages that ``gh api --paginate`` writes) are read as one,
    and so are arrays inside the array (``--paginate --slurp``): each yields its elements in turn."""
    decoder = json.JSONDecoder()
    depth, want, at = 0, "page", 0  # want: a page's "[", a "first" value or "]", a "value", "more" (, or ])
    while True:
        at = JSON_SPACE.match(text, at).end()  # type: ignore[union-attr] - ``*`` matches anywhere
        if at == len(text):
            if depth:
                raise ValueError("the array is not closed")
            return
        char = text[at]
        if char == "]" and want in ("first", "more"):
            depth, at = depth - 1, at + 1
            want = "more" if depth else "page"
        elif char == "," and want == "more":
            want, at = "value", at + 1
        elif want == "page" or (char == "[" and depth == 1 and want != "more"):
            if char != "[":
                raise ValueError(f"expected '[' at {at}")
            depth, want, at = depth + 1, "first", at + 1
        elif want == "more":
            raise ValueError(f"expected ',' or ']' at {at}")
        else:
            value, at = decoder.raw_decode(text, at)
            want = "more"
            yield value


def json_values_bound(data: bytes) -> int:
    """At most how many values and keys the JSON ``data`` holds: each but the outermost comes
    right after a ``[``, ``{``, ``,`` or ``:`` of its own (those inside strings count too, so the
    bound never falls short)."""
    return 1 + sum(data.count(mark) for mark in (b"[", b"{", b",", b":"))


def json_values_over(data: bytes, most: int) -> bool:
    """Whether the JSON ``data`` holds more than ``most`` values and keys, counting only the marks
    outside strings (a log quoted in a body, its commas and colons, is one value; an empty ``[]``
    or ``{}`` still counts one), so never short; True too for text that is no JSON, which is
    refused anyway. Read token by token with nothing copied (``re.sub`` taking the strings out
    held 900 MB for 20 MB of ``"a",``), and given up at the first mark past ``most`` or past
    ``2 * most`` tokens (in JSON, strings are values too: the tokens are at most one more than
    twice the marks): for a small ``most``, such as the triage page's, a few thousand steps."""
    if json_values_bound(data) <= most:
        return False
    marks = tokens = 0
    for token in JSON_TOKEN_RE.finditer(data):
        tokens += 1
        marks += data[token.start()] != QUOTE
        if marks >= most or tokens > 2 * most:
            return True
    return False


def flatten_bytes(data: bytes) -> tuple[bytes, str | None]:
    """``(text, kind)``: the flattened text of a known document, or ``(data, None)`` unchanged
    (JSON of more than ``MAX_DOCUMENT_VALUES`` values too)."""
    if not _candidate(data[:4096]):
        return data, None
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    start = text.lstrip()[:1]
    if start in ("{", "["):
        if json_values_bound(data) > MAX_DOCUMENT_VALUES:
            return data, None
        try:
            found = flatten_json(json.loads(text)) if start == "{" else flatten_array(array_elements(text))
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
