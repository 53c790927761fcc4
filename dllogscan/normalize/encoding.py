"""Logs that are not UTF-8 but are text: UTF-16 (what Windows PowerShell 5.1's ``>`` writes:
a BOM, then CRLF lines) and UTF-32, transcoded to UTF-8 as they stream, so every later stage
sees the same bytes as for any other log.

Rules (``text_encoding``), on the first bytes of the (decompressed) input:
- a UTF-32 BOM (``FF FE 00 00`` / ``00 00 FE FF``) -> ``utf-32`` when the sample decodes as
  UTF-32; checked before UTF-16, whose little-endian BOM is its prefix (``FF FE`` then a NUL
  character is ``FF FE 00 00`` too: that input does not decode as UTF-32 and is UTF-16);
- a UTF-16 BOM (``FF FE`` / ``FE FF``) -> ``utf-16``;
- no BOM: UTF-16 only when the sample is mostly ASCII in 16-bit units: at least 70 % of the
  bytes on one parity are NUL and at most 5 % on the other (a NUL-padded UTF-8 log has NULs on
  both), and the sample decodes with fewer than 2 % replacement characters.
"""
from __future__ import annotations

import codecs
import io
from typing import BinaryIO

UTF32_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)
UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
MIN_SAMPLE = 16
NUL_SIDE, CLEAN_SIDE, MAX_REPLACED = 0.70, 0.05, 0.02
READ_UNITS = 1 << 20


def text_encoding(head: bytes) -> str | None:
    """The codec to read ``head``'s input with, or None when it is to be read as UTF-8."""
    if head.startswith(UTF32_BOMS) and _decodes(head[: len(head) & ~3], "utf-32"):
        return "utf-32"
    if head.startswith(UTF16_BOMS):
        return "utf-16"
    sample = head[: len(head) & ~1]
    if len(sample) < MIN_SAMPLE or b"\0" not in sample:  # no NUL: neither parity can be 70 % NUL
        return None
    half = len(sample) // 2
    even, odd = sample[0::2].count(0) / half, sample[1::2].count(0) / half
    if odd >= NUL_SIDE and even <= CLEAN_SIDE:
        codec = "utf-16-le"
    elif even >= NUL_SIDE and odd <= CLEAN_SIDE:
        codec = "utf-16-be"
    else:
        return None
    text = sample.decode(codec, errors="replace")
    return codec if text.count("\ufffd") <= MAX_REPLACED * len(text) else None


def _decodes(sample: bytes, codec: str) -> bool:
    try:
        sample.decode(codec)
    except UnicodeDecodeError:
        return False
    return True


def as_utf8(data: bytes) -> bytes:
    """``data`` (a whole input in memory) as UTF-8 when it is UTF-16 or UTF-32, else as is."""
    encoding = text_encoding(data[:8192])
    return data.decode(encoding, errors="replace").encode("utf-8", errors="replace") if encoding else data


class Transcoded(io.RawIOBase):
    """Reads ``inner`` in ``encoding`` and gives its text as UTF-8 bytes (undecodable units
    become U+FFFD), decoding incrementally so memory stays bounded by one read."""

    def __init__(self, inner: BinaryIO, encoding: str) -> None:
        self.inner = inner
        self.decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self.buffer, self.done = b"", False

    def readable(self) -> bool:
        return True

    def _fill(self, size: int) -> None:
        while not self.done and (size < 0 or len(self.buffer) < size):
            raw = self.inner.read(READ_UNITS)
            if not raw:
                self.done = True
            text = self.decoder.decode(raw, final=self.done)
            self.buffer += text.encode("utf-8", errors="replace")

    def read(self, size: int = -1) -> bytes:
        self._fill(size)
        if size < 0 or size >= len(self.buffer):
            out, self.buffer = self.buffer, b""
        else:
            out, self.buffer = self.buffer[:size], self.buffer[size:]
        return out

    def readinto(self, buffer) -> int:  # what io.BufferedReader reads by (results_jsonl's lines)
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.inner.close()
        super().close()
