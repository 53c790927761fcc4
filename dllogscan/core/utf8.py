"""Text in memory back to the bytes the scanner reads.

A ``str`` from the user can hold two kinds of lone surrogate: U+DC80-U+DCFF stand for bytes that
were not UTF-8 (Python's ``surrogateescape``, from a file name, ``sys.argv`` or a caller that
decoded so) and go back to those bytes; any other (JSON's ``\\ud800``, a page's character
reference) has no bytes and becomes U+FFFD, as an undecodable byte does when the scanner reads it.
Encoding strictly, or with ``surrogateescape`` alone, raised ``UnicodeEncodeError`` on the second kind.
"""
from __future__ import annotations

import re

#: surrogates that ``surrogateescape`` cannot turn back into a byte
LONE_SURROGATE_RE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def to_utf8(text: str) -> bytes:
    """``text`` as UTF-8 bytes, never raising (see the module's docstring)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return LONE_SURROGATE_RE.sub("\ufffd", text).encode("utf-8", "surrogateescape")
