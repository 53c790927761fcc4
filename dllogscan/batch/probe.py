"""Per-source helpers for the batch: keep a log's first and last bytes while it streams past,
and stamp each signature hit with the wall-clock time of its raw line (before the CRI prefix
that holds it is stripped for matching)."""
from __future__ import annotations

import io
from typing import BinaryIO

from ..scan.output import ScanOutput
from ..scan.scanner import Scanner
from .clock import Clock
from .layouts import LINE_PIECE

EDGE = 16 * 1024


class TapReader(io.RawIOBase):
    """Passes a stream through, keeping its first and last ``EDGE`` bytes."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner, self.head, self.tail = inner, b"", b""
        self.passed = 0  # bytes passed through

    @property
    def whole(self) -> bool:
        """The tail holds the whole stream (it starts at its first byte)."""
        return self.passed <= EDGE

    def readable(self) -> bool:
        return True

    @property
    def cut(self) -> bool:
        return bool(getattr(self.inner, "cut", False))

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        if data:
            self.passed += len(data)
            if len(self.head) < EDGE:
                self.head += data[: EDGE - len(self.head)]
            self.tail = (self.tail + data[-EDGE:])[-EDGE:]
        return data

    def close(self) -> None:
        self.inner.close()
        super().close()


class TimedScanner(Scanner):
    """A Scanner whose hits carry a ``time`` fact when their raw line (or one of the lines
    before it) holds a wall-clock timestamp, read by the log's ``clock`` (``batch/clock.py``; the
    batch sets one per log), else by one that knows only ``year``."""

    year: int | None = None
    clock: Clock | None = None

    def _match_line(self, data: bytes, start: int, end: int, lineno: int, out: ScanOutput) -> None:
        before = len(out.hits)
        super()._match_line(data, start, end, lineno, out)
        if len(out.hits) == before:
            return
        clock = self.clock or Clock(year=self.year)
        when = clock.time(data[start:min(end, start + LINE_PIECE)])
        if not when:  # the hits of one line share one tuple of lines before it
            lines = reversed(out.hits[before].before)
            when = next(filter(None, (clock.time(t.encode("utf-8", "replace")) for _, t in lines)), None)
        if when:
            for hit in out.hits[before:]:
                hit.facts["time"] = when  # each hit's facts are a dict of its own, made for it
