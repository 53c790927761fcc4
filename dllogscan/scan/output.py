"""What a scan produces (``ScanOutput``), what one round hands the next (``RoundState``), and the
line helpers over raw bytes that the scanner and the parallel split share: a keyword's line, the
clean lines around it, the last lines of the input, the evidence excerpt."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import limits, linememo
from ..core.models import Hit
from ..normalize import lines as normalize

if TYPE_CHECKING:
    from .linememo import LineMemo


@dataclass
class ScanOutput:
    """What the scanner saw in one source."""

    hits: list[Hit] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # lines matched per signature: exact up to its cap (matcher.cap)
    capped: int = 0  # how many signatures have reached their cap (``matcher.cap``): not matched again
    lines: int = 0
    bytes_read: int = 0
    tail_src: tuple[bytes, int, bool] | None = field(default=None, repr=False)  # what ``tail`` is cleaned from
    head_src: bytes | None = field(default=None, repr=False)  # what ``head`` is cleaned from
    read_error: str | None = None
    folded: bool = False  # some line held Unicode blanks or invisible characters (normalize/blanks.py)
    prefix: bytes = b""  # the first KEEP_PREFIX bytes (limits.py): the whole input when it is small
    document: str | None = None  # the document kind when the input was flattened (sources/documents.py)
    end: bytes = b""  # the raw last END_BYTES of the input, from a line start (cadence.py reads it)
    end_line: int = 1  # the line number of end's first line
    memo: "LineMemo | None" = field(default=None, repr=False, compare=False)  # this round's cleaned lines
    _tail: list[tuple[int, str]] | None = field(default=None, repr=False)
    _head: list[tuple[int, str]] | None = field(default=None, repr=False)

    @property
    def head(self) -> list[tuple[int, str]]:
        """The first lines (up to 10 non-empty), cleaned on first use: only the classifier reads
        them, and a batch of healthy logs never does."""
        if self._head is None:
            self._head = list(lines_after(self.head_src, 0, 10, 0)) if self.head_src is not None else []
        return self._head

    @head.setter
    def head(self, value: list[tuple[int, str]]) -> None:
        self._head, self.head_src = list(value), None

    def wants_head(self) -> bool:
        """No head yet: none kept, or the one kept cleans to no line at all (the next round's
        data is tried then, as it always was)."""
        return not self.head if self.head_src is not None else not self._head

    def keep_head(self, data: bytes) -> None:
        """Keep the start of ``data`` to clean the head from when it is asked for."""
        self._head, self.head_src = None, b"\n" + data[:limits.MAX_LINE * 2]

    @property
    def tail(self) -> list[tuple[int, str]]:
        """The last ``TAIL_LINES`` non-empty lines, cleaned on first use (only the classifier
        reads them: a batch of healthy logs never does)."""
        if self._tail is None:
            self._tail = tail_lines(*self.tail_src) if self.tail_src is not None else []
        return self._tail

    @tail.setter
    def tail(self, value: list[tuple[int, str]]) -> None:
        self._tail, self.tail_src = list(value), None


def tail_lines(tail_data: bytes, line_at: int, cut: bool) -> list[tuple[int, str]]:
    """The last ``TAIL_LINES`` non-empty lines of ``tail_data``, the final round's last
    ``LOOKBEHIND`` bytes (``line_at``: the number of its last line; ``cut``: its first line
    is a piece, dropped)."""
    first_line = line_at - tail_data.count(b"\n")
    lines = tail_data.split(b"\n")
    if cut:
        lines, first_line = lines[1:], first_line + 1
    tail: list[tuple[int, str]] = []
    for i in range(len(lines) - 1, -1, -1):  # clean only the last TAIL_LINES non-empty lines
        text = normalize.clean(lines[i])[:limits.MAX_EVIDENCE_CHARS]
        if text:
            tail.append((first_line + i, text))
            if len(tail) == limits.TAIL_LINES:
                break
    return tail[::-1]


@dataclass
class RoundState:
    """What one round of ``Scanner.scan_rounds`` hands the next."""

    carry: bytes = b""        # bytes kept from the previous round: lookbehind + unprocessed lookahead
    search_from: int = 0      # offset in data where unprocessed bytes start
    base_line: int = 1        # line number of data[0]
    data_offset: int = 0      # absolute offset of data[0]
    done_lines: set[int] = field(default_factory=set)  # absolute line starts matched last round
    keep_prefix: bool = True  # collect ScanOutput.prefix


def line_bounds(data: bytes, pos: int) -> tuple[int, int]:
    """Start and end of the line holding ``pos``, or a window around it on a huge line or on one
    whose view would be cut (``normalize.cut_in_view``: a view keeps ``MAX_VIEW_CHARS``). Until
    session 63 only a line over ``MAX_LINE`` was windowed, and one of 4 to 16 KB was matched by its
    first 4 000 characters alone: a failure pasted at the end of a line of joined output was not found."""
    lo = max(0, pos - limits.MAX_LINE)
    start = data.rfind(b"\n", lo, pos) + 1
    if start == 0 and lo > 0:
        start = max(0, pos - limits.WINDOW)
    end = data.find(b"\n", pos, pos + limits.MAX_LINE)
    if end == -1:
        end = min(len(data), pos + limits.WINDOW) if pos + limits.MAX_LINE < len(data) else len(data)
    if end - start > normalize.MAX_VIEW_CHARS and normalize.cut_in_view(data[start:end]):
        start, end = max(start, pos - limits.WINDOW), min(end, pos + limits.WINDOW)
    return start, end


def cut(data: bytes, start: int, end: int) -> bool:
    """Whether ``line_bounds`` gave a window of a longer line: a bound that is not a line's."""
    return (start > 0 and data[start - 1] != 10) or (end < len(data) and data[end] != 10)


class WindowBudget:
    """The windows of over-long lines one round has matched: ``limits.LINE_WINDOWS`` of one line,
    ``limits.ROUND_WINDOWS`` in all. A window over either is passed over with the rest of its line
    in this round (the next round counts afresh), so a line of keywords repeated for hundreds of
    megabytes costs a few windows per round, not one every ``WINDOW`` bytes. A dry round
    (``parallel.py``) counts as the real one does."""

    def __init__(self) -> None:
        self.last = -1  # the start of the last window counted
        self.in_line = 0
        self.in_round = 0

    def skip_to(self, data: bytes, start: int, end: int) -> int | None:
        """Where to go on from when the window ``data[start:end]`` is over budget: the end of its
        line (or of the data); None to match it (a whole line is never counted)."""
        if not cut(data, start, end):
            return None
        if self.last < 0 or data.find(b"\n", self.last, start) != -1:
            self.in_line = 0  # another line
        self.last = start
        self.in_line += 1
        self.in_round += 1
        if self.open():
            return None
        nl = data.find(b"\n", end)
        return nl if nl != -1 else len(data)

    def open(self) -> bool:
        """Whether the last window counted was within budget."""
        return self.in_line <= limits.LINE_WINDOWS and self.in_round <= limits.ROUND_WINDOWS


def lines_after(data: bytes, end: int, count: int, lineno: int,
                memo: "LineMemo | None" = None) -> tuple[tuple[int, str], ...]:
    """Up to ``count`` clean non-empty lines after the line ending at ``end`` (``lineno``), numbered."""
    out = []
    pos = end + 1
    clean = memo.clean if memo is not None else linememo.clean_slice
    for i in range(1, count + 1):
        if pos >= len(data):
            break
        nxt = data.find(b"\n", pos, pos + limits.MAX_LINE)
        stop = nxt if nxt != -1 else min(len(data), pos + limits.WINDOW)
        text = clean(data, pos, stop)
        if text:
            out.append((lineno + i, text[:limits.MAX_EVIDENCE_CHARS]))
        if nxt == -1:
            break
        pos = nxt + 1
    return tuple(out)

def lines_before(data: bytes, start: int, count: int, lineno: int,
                 memo: "LineMemo | None" = None) -> tuple[tuple[int, str], ...]:
    """Up to ``count`` clean non-empty lines before the line starting at ``start`` (``lineno``),
    numbered. A line longer than ``MAX_LINE`` gives its last ``WINDOW`` bytes and ends the walk (as
    ``line_bounds`` cuts it); until session 63 it was read from the round's first byte, so each hit
    in a long line cleaned megabytes of data for one 600-character excerpt."""
    out = []
    stop = start - 1
    clean = memo.clean if memo is not None else linememo.clean_slice
    for i in range(1, count + 1):
        if stop < 0:
            break
        lo = max(0, stop - limits.MAX_LINE)
        begin = data.rfind(b"\n", lo, stop) + 1
        huge = begin == 0 and lo > 0  # no line start within MAX_LINE: a window of it, as line_bounds
        if huge:
            begin = stop - limits.WINDOW
        text = clean(data, begin, stop)
        if text:
            out.append((lineno - i, text[:limits.MAX_EVIDENCE_CHARS]))
        if begin == 0 or huge:
            break
        stop = begin - 1
    out.reverse()
    return tuple(out)


def excerpt(text: str, match) -> str:
    """The evidence text: the whole clean line, or a window around the match on a long one."""
    if len(text) <= limits.MAX_EVIDENCE_CHARS:
        return text
    lo = max(0, match.start() - 100)
    return ("…" if lo else "") + text[lo: lo + limits.MAX_EVIDENCE_CHARS] + "…"
