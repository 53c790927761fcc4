"""Text that reaches a terminal, a spreadsheet or a rendered page must not act on it.

Rules:
- Log text (``normalize``) already loses C0 controls and ANSI sequences; it also loses C1
  controls (U+0080-U+009F: U+009B is an 8-bit CSI, U+009D an OSC) and the bidirectional
  controls that reorder what is shown (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C):
  ``strip_log_controls``.
- Text formats (markdown, GitHub annotations, the terminal report) drop whatever control is
  left in what they print (``strip_controls``), whatever its way in.
- Names (files, archive members) and one-line messages are data: every control, bidi control,
  invisible character (``INVISIBLE``: ``job\\u200b.log`` would show as ``job.log``) and lone
  surrogate (an undecodable byte of a non-UTF-8 name) is kept as a visible escape, ``\\x1b``,
  ``\\u202e``, ``\\u200b``, ``\\xff``: ``escape``; text formats drop the invisible ones too.
"""
from __future__ import annotations

import re

BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: characters that show nothing (soft hyphen, Mongolian vowel separator, zero-width space, non-joiner
#: and joiner, word joiner and the invisible operators, byte-order mark, tags) or break a line where
#: a name has none (line and paragraph separators)
INVISIBLE = "\u00ad\u180e\u200b-\u200d\u2028\u2029\u2060-\u2064\ufeff\U000e0000-\U000e007f"
LOG_CONTROLS_RE = re.compile(f"[\x80-\x9f{BIDI}]")
UNSAFE_RE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI}{INVISIBLE}\ud800-\udfff]")


OUTPUT_CONTROLS_RE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}{INVISIBLE}]")


def strip_controls(text: str) -> str:
    """``text`` without any control or bidi character but tab and newline: the last guard of a
    text format (markdown, annotations, the terminal report) whatever reached it."""
    return OUTPUT_CONTROLS_RE.sub("", text) if OUTPUT_CONTROLS_RE.search(text) else text


def strip_log_controls(text: str) -> str:
    """``text`` without C1 and bidirectional controls."""
    return LOG_CONTROLS_RE.sub("", text) if LOG_CONTROLS_RE.search(text) else text


def _escaped(m: re.Match) -> str:
    code = ord(m.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape(text: str) -> str:
    """``text`` with every control, bidi control and lone surrogate written as an escape."""
    return UNSAFE_RE.sub(_escaped, text) if UNSAFE_RE.search(text) else text
