"""Turn one raw log line into the clean texts that signatures are matched against.

Real input is messy: ANSI colours, ``\\r`` progress bars with an error glued to their end, CRLF,
markdown quoting and headings (an issue's title pasted as ``# RuntimeError: ...``), ``[rank3]:``
prefixes, Kubernetes CRI prefixes, rich's box-drawn tracebacks and exception reprs with escaped
``\\n`` inside one line, structured log records (Docker's json-file driver, ``journalctl -o
json``, Fluent Bit, Cloud Logging exports) that carry the line as a JSON string. Each raw line
yields one or more *views*.
"""
from __future__ import annotations

import json
import re

from ..core.printable import strip_log_controls
from ..core.utf8 import to_utf8

#: ANSI sequences: CSI (``ESC [``, or its one-character form U+009B), OSC (``ESC ]``, or U+009D) up
#: to its terminator, and the other two-character escapes; a lone U+009B would otherwise go with
#: the C1 controls (``strip_log_controls``) and leave its parameters behind (``31m``)
ANSI_RE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]{0,512}(?:\x07|\x1b\\|\x9c)"
                     r"|\x1b[@-Z\\-_]")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
QUOTE_RE = re.compile(r"^(?:[ \t]*>)+[ \t]?")
HEADING_RE = re.compile(r"^#{1,6}[ \t]+")  # a markdown heading: ``# title``, never ``#include`` or ``#!``
BOX_LEFT_RE = re.compile(r"^[ \t]*[│┃║|][ \t]?")
BOX_RIGHT_RE = re.compile(r"[ \t]*[│┃║]$")
CRI_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:stdout|stderr) [FP] ")
RANK_RE = re.compile(r"^\[(?:rank|RANK)\s?(?P<rank>\d+)\]:?[ \t]?|^\[default(?P<local>\d+)\]:[ \t]?|^(?P<srun>\d{1,4}): ")
ESCAPED_NL = "\\n"
MAX_VIEW_CHARS = 4000
#: where ``views_in_full`` splits a line into views (as bytes): a carriage return, an escaped newline
VIEW_BREAK_B = re.compile(rb"\r|\\n")
PLAIN_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n"
PLAIN_LINE_BYTES = bytes(range(0x20, 0x7F)) + b"\t"
BLANKS = (b" ", b"\t")
ESCAPED_NL_BYTES = ESCAPED_NL.encode()
PREFIX_STARTS = rb">|#|\[rank|\[RANK|\[default|\d{1,4}: |\d{4}-\d\d-\d\dT|\{\""
PREFIX_START_RE = re.compile(PREFIX_STARTS)
#: a line after the first that starts with a blank or with a prefix (``plain_lines``): one search
#: where ``\n `` and ``\n\t`` were two more passes over the data, each slower than this one
LINE_START_RE = re.compile(rb"\n(?:[ \t]|" + PREFIX_STARTS + rb")")
#: where a structured log record keeps the line: Docker json-file and Fluent Bit ``log``,
#: journald ``MESSAGE``, most shippers ``message`` or ``msg``, Cloud Logging ``textPayload``
#: (or ``jsonPayload.message``)
RECORD_KEYS = ("log", "MESSAGE", "message", "msg", "textPayload")
#: a record longer than this is left as it is (its text is still searched, escaped)
MAX_RECORD_CHARS = 1 << 20
LINE_BREAK_RE = re.compile(r"\r\n|[\r\n]")


def has_ansi(text: str) -> bool:
    """Whether ``text`` holds a character that starts an ANSI sequence (three ``in`` tests: a tenth
    of a regex search's cost on a log line)."""
    return "\x1b" in text or "\x9b" in text or "\x9d" in text


def decode(raw: bytes) -> str:
    """Bytes to text: invalid UTF-8 replaced, NUL and other control bytes dropped, ANSI stripped."""
    text = raw.decode("utf-8", errors="replace")
    if has_ansi(text):
        text = ANSI_RE.sub("", text)
    return text


def printable_line(text: str) -> str:
    """A raw line to show beside the evidence: ANSI sequences, control and bidi characters
    removed, nothing else changed."""
    if has_ansi(text):
        text = ANSI_RE.sub("", text)
    return strip_log_controls(CONTROL_RE.sub("", text))


def strip_prefixes(text: str) -> tuple[str, str | None]:
    """Remove quoting, markdown headings, box drawing, CRI and rank prefixes; return the text and the
    rank, if any."""
    rank = None
    text = CRI_RE.sub("", text, count=1)
    for _ in range(3):
        before = text
        text = QUOTE_RE.sub("", text, count=1)
        text = HEADING_RE.sub("", text, count=1)
        m = RANK_RE.match(text)
        if m:
            rank = m.group("rank") or m.group("local") or m.group("srun")
            text = text[m.end():]
        if text.lstrip()[:1] in ("│", "┃", "║"):
            text = BOX_RIGHT_RE.sub("", BOX_LEFT_RE.sub("", text, count=1))
        if text == before:
            break
    return text, rank


def views(raw: bytes | str) -> tuple[list[str], str | None]:
    """All clean texts of one raw line (its ``\\r`` segments and escaped-``\\n`` parts). A
    ``plain_line`` is its own one view (most lines of a log: ~1 us instead of ~4)."""
    if isinstance(raw, bytes) and plain_line(raw):
        return ([raw.decode("ascii")] if raw else []), None
    return views_in_full(raw)


def plain_line(raw: bytes) -> bool:
    """Whether no rule of ``views_in_full`` changes the line ``raw``: what ``plain_lines`` asks of
    each line (printable ASCII and tabs, no blank at either end, no escaped ``\\n``, no prefix
    to strip, not longer than ``MAX_VIEW_CHARS``)."""
    return (not raw.translate(None, PLAIN_LINE_BYTES) and raw[:1] not in BLANKS and raw[-1:] not in BLANKS
            and len(raw) <= MAX_VIEW_CHARS and ESCAPED_NL_BYTES not in raw and not PREFIX_START_RE.match(raw))


def cut_in_view(raw: bytes) -> bool:
    """Whether a view of the line ``raw`` would be cut at ``MAX_VIEW_CHARS``: a part of it between
    carriage returns and escaped newlines is longer (in bytes, so never a miss). A structured
    record (``{"...``) is read whole, as its decoded text is split again."""
    if len(raw) <= MAX_VIEW_CHARS or raw.startswith(b'{"'):
        return False
    return any(len(part) > MAX_VIEW_CHARS for part in VIEW_BREAK_B.split(raw))


def record_text(line: str) -> str | None:
    """The log line a structured record carries (``{"log": "...", "stream": "stderr", ...}``),
    JSON escapes undone; None for a line that is not such a record."""
    if not line.startswith('{"') or not line.rstrip().endswith("}") or len(line) > MAX_RECORD_CHARS:
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    payload = record.get("jsonPayload")
    nested = payload.get("message") if isinstance(payload, dict) else None
    for value in [record.get(key) for key in RECORD_KEYS] + [nested]:
        if isinstance(value, str):
            return value
    return None


def views_in_full(raw: bytes | str) -> tuple[list[str], str | None]:
    """``views`` with every rule applied."""
    text = decode(raw) if isinstance(raw, bytes) else raw
    text = text.rstrip("\r\n")
    record = record_text(text)
    if record is not None:  # its escapes undone: lone surrogates, ANSI and line breaks appear only now
        text = LINE_BREAK_RE.sub("\r", decode(to_utf8(record))).rstrip("\r")
    rank = None
    out: list[str] = []
    for segment in text.split("\r"):
        segment = strip_log_controls(CONTROL_RE.sub("", segment))
        if not segment.strip():
            continue
        segment, seg_rank = strip_prefixes(segment)
        rank = rank or seg_rank
        parts = segment.split(ESCAPED_NL) if ESCAPED_NL in segment else [segment]
        for part in parts:
            part = part.strip()
            if part:
                out.append(part[:MAX_VIEW_CHARS])
    return out, rank


def clean(raw: bytes | str) -> str:
    """One display text for a raw line: its views joined by a space."""
    parts, _ = views(raw)
    return " ".join(parts)


def plain_lines(data: bytes) -> bool:
    """Whether every line of ``data`` is its own one view, unchanged: printable ASCII and tabs
    only (no ``\\r``, ANSI or control bytes), no escaped ``\\n``, no blank next to a newline, no
    line start that ``strip_prefixes`` would remove (a superset of its rules is checked), and no
    line longer than ``MAX_VIEW_CHARS``. Then each line's view, and two neighbouring lines
    joined by a space, are substrings of ``data`` with newlines read as spaces."""
    # a backslash or a tab is seldom there: one memchr pass for it (0.1 ms per 4 MB) spares the
    # search for its pair (bytes.find of a two-byte needle: 3-4 ms)
    if data.translate(None, PLAIN_BYTES) or (b"\\" in data and ESCAPED_NL_BYTES in data):
        return False
    if data[:1] in BLANKS or b" \n" in data or (b"\t" in data and b"\t\n" in data):
        return False
    if PREFIX_START_RE.match(data) or LINE_START_RE.search(data):
        return False
    return lines_at_most(data, MAX_VIEW_CHARS)


def lines_at_most(data: bytes, most: int) -> bool:
    """Whether no line of ``data`` is longer than ``most`` bytes: a walk from a newline to the
    last one within ``most + 1`` bytes (a round of 4 MB took 15 ms to split into its lines, one
    bytes object each, for their longest; the walk, about one ``rfind`` per 4 KB, under 1 ms)."""
    pos, size = 0, len(data)
    while size - pos > most:
        nl = data.rfind(b"\n", pos, pos + most + 1)
        if nl == -1:
            return False
        pos = nl + 1
    return True
