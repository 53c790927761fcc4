"""Text that reaches a terminal, a spreadsheet or a rendered page must not act on it.

Rules:
- Log text (``normalize``) already loses C0 controls and ANSI sequences; it also loses C1
  controls (U+0080-U+009F: U+009B is an 8-bit CSI, U+009D an OSC) and the bidirectional
  controls that reorder what is shown (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C):
  ``strip_log_controls``.
- Text formats (markdown, GitHub annotations, the terminal report) drop whatever control is
  left in what they print (``strip_controls``), whatever its way in.
- Names (files, archive members) and one-line messages are data: every control, bidi control
  and lone surrogate (an undecodable byte of a non-UTF-8 name) is kept as a visible escape,
  ``\\x1b``, ``\\u202e``, ``\\xff``: ``escape``.
"""
from __future__ import annotations

import re

BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
LOG_CONTROLS_RE = re.compile(f"[\x80-\x9f{BIDI}]")
UNSAFE_RE = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI}\ud800-\udfff]")


OUTPUT_CONTROLS_RE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")


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
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """``text`` with every control, bidi control and lone surrogate written as an escape."""
    return UNSAFE_RE.sub(_escaped, text) if UNSAFE_RE.search(text) else text
