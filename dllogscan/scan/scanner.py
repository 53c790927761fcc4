"""Stream a source in large binary chunks and turn prefilter hits into signature Hits.

Memory stays bounded by the chunk size: a multi-GB file or a single 1 GB line is read in
``CHUNK`` pieces, and only the lines around a keyword are decoded and regex-matched (``matcher``).
A line longer than ``MAX_LINE`` is matched in a window around the keyword. Sizes: ``limits``.
"""
from __future__ import annotations

from typing import BinaryIO, Callable, Iterator

from . import limits
from .deadlines import DeadTest, anchor_heads, key_length, live_positions
from .linememo import LineMemo
from .matcher import LineMatcher
from .output import RoundState, ScanOutput, WindowBudget, line_bounds
from .parallel import try_parallel
from .prefilter import Prefilter, make_prefilter
from ..core.errors import SourceError
from ..normalize.blanks import fold
from ..signatures.database import Database
from ..sources.streams import STREAM_ERRORS, describe_read_error


def _any_signature(sig) -> bool:
    """With no round screen, any signature below its cap may match."""
    return True


def _line_positions(prefilter: Prefilter, data: bytes, start: int, end: int,
                    budget: WindowBudget) -> Iterator[int]:
    """The keyword positions of ``data[start:end]``, which holds no newline, a segment at a time
    while its windows are within ``budget``: past that, the scanner passes over the rest of the
    line, so the positions the prefilter would find there (one per 38 bytes of a repeated
    failure, each a Python call) are not looked for."""
    step = limits.WINDOW * limits.LINE_WINDOWS
    while start < end and budget.open():
        stop = min(end, start + step)
        yield from prefilter.positions(data, start, stop)
        start = stop


class Scanner(LineMatcher):
    """Matches one compiled database against byte streams."""

    def __init__(self, db: Database, prefilter: Prefilter | None = None, engine: str = "auto") -> None:
        self.prefilter = prefilter or make_prefilter(db.keywords, engine)
        super().__init__(db, self.prefilter.name)
        anchors = getattr(self.prefilter, "anchors", [])
        self._heads = anchor_heads(anchors, self._kw_bytes)
        self._key_len = key_length(anchors)

    def _dead_test(self, data: bytes, memo: LineMemo, out: ScanOutput) -> DeadTest | None:
        """A test of whether the anchor at a position leads only to signatures that cannot match
        in this round or are no longer matched, so that such a line costs no per-line work at all
        (``deadlines.py``): a signature at its ``cap`` (a failure line repeated thousands of times,
        a fact read once from the first of many traceback frames) in any round; in a round of plain
        lines (``RoundScreen.text``), also one whose keywords are absent or that the round screen
        rules out (a log of near misses). A line is still matched when one anchor it holds may lead
        somewhere, and then against every keyword it holds, as before. None: test nothing (no
        screen, and no signature at its cap yet)."""
        screen = memo.screen if memo.screen is not None and memo.screen.text is not None else None
        if not self._heads[0] or (screen is None and not out.capped):
            return None
        return DeadTest(data, self._heads, self._key_len, screen.may_match if screen is not None else _any_signature,
                        out)

    def scan(self, stream: BinaryIO, first_line: int = 1) -> ScanOutput:
        """Scan a binary stream to its end (or its reader's limit), its first line numbered
        ``first_line``; a large plain file is split over processes (``parallel.py``) with the
        same result."""
        out = try_parallel(self, stream) if first_line == 1 else None
        if out is not None:
            return out
        return self.scan_rounds(stream.read, ScanOutput(), RoundState(base_line=first_line))

    def scan_rounds(self, read: Callable[[int], bytes], out: ScanOutput, st: "RoundState",
                    rounds: int | None = None, dry: int = 0) -> ScanOutput:
        """The streaming loop: one round per ``CHUNK`` read, ``st`` carried between rounds.

        ``rounds`` stops before the read of round ``rounds`` (``st`` then describes the next
        round); the first ``dry`` rounds only note which lines they would match (for a worker
        that starts mid-file, see ``parallel.py``)."""
        done = 0
        while True:
            if rounds is not None and done == rounds:
                out.memo = None
                return out
            try:
                chunk = read(limits.CHUNK)
            except SourceError as exc:
                out.read_error, chunk = str(exc), b""
            except STREAM_ERRORS as exc:
                out.read_error, chunk = describe_read_error(exc), b""
            is_dry = done < dry
            done += 1
            final = not chunk
            carry, search_from, base_line, data_offset = st.carry, st.search_from, st.base_line, st.data_offset
            if not is_dry:
                out.bytes_read += len(chunk)
                if st.keep_prefix and len(out.prefix) < limits.KEEP_PREFIX and chunk:
                    out.prefix += chunk[: limits.KEEP_PREFIX - len(out.prefix)]
            raw = carry + chunk if carry else chunk
            data = fold(raw, final, limits.MAX_LINE)
            if data is not raw and not out.folded and data != raw:
                out.folded = True
            if not is_dry and data and (final or len(data) > limits.LOOKAHEAD) and out.wants_head():
                out.keep_head(data)
            proc_end = len(data) if final else max(search_from, len(data) - limits.LOOKAHEAD)
            budget = WindowBudget()
            if proc_end - search_from > limits.MAX_LINE and data.find(b"\n", search_from, proc_end) == -1:
                # one line: a round screen has nothing to read (plain_lines), and its keywords
                # are found only as far as its windows' budget goes
                positions, many = _line_positions(self.prefilter, data, search_from, proc_end, budget), False
            else:
                positions = self.prefilter.positions(data, search_from, proc_end)
                many = len(positions) >= limits.SCREEN_MIN_POSITIONS
            if not is_dry:
                out.memo = LineMemo(data, many=many)
            # Newlines are counted once per byte: up to each hit, then on to where the next round starts.
            counted_to, line_at = 0, base_line
            fresh: set[int] = set()
            last_end = -1
            dead = self._dead_test(data, out.memo, out) if not is_dry else None
            for pos in live_positions(dead, positions):
                if pos < last_end:
                    continue  # same line (or window) as the previous keyword
                if dead is not None and dead(pos):
                    continue  # its anchor leads nowhere in this round (a later one may)
                start, end = line_bounds(data, pos)
                skip = budget.skip_to(data, start, end)
                if skip is not None:
                    last_end = skip  # a long line's windows over this round's budget
                    continue
                last_end = max(end, pos + 1)
                absolute = data_offset + start
                if absolute in st.done_lines:
                    continue
                fresh.add(absolute)
                line_at += data.count(b"\n", counted_to, start)
                counted_to = start
                if not is_dry:
                    self._match_line(data, start, end, line_at, out)
            st.done_lines = fresh
            if final:
                line_at += data.count(b"\n", counted_to)  # line number of the last (partial) line
                out.lines = line_at - (1 if data.endswith(b"\n") else 0) if data else base_line - 1
                tail_from = max(0, len(data) - limits.LOOKBEHIND)
                out.tail_src, out._tail = (data[tail_from:], line_at, tail_from > 0), None
                out.end, out.end_line = self._end(data, line_at, base_line)
                out.memo = None
                return out
            keep_from = max(0, proc_end - limits.LOOKBEHIND)
            nl = data.find(b"\n", keep_from, proc_end)
            if nl != -1:
                keep_from = nl + 1
            if keep_from >= counted_to:
                st.base_line = line_at + data.count(b"\n", counted_to, keep_from)
            else:
                st.base_line = line_at - data.count(b"\n", keep_from, counted_to)
            st.data_offset = data_offset + keep_from
            st.carry = data[keep_from:]
            st.search_from = proc_end - keep_from

    @staticmethod
    def _end(data: bytes, line_at: int, base_line: int) -> tuple[bytes, int]:
        """The last END_BYTES of the final round's data from a line start, and that line's number
        (``line_at``: the number of the data's last line; ``base_line``: of its first)."""
        start = max(0, len(data) - limits.END_BYTES)
        if not start:
            return data, base_line  # the whole round: no newlines to count again
        start = data.find(b"\n", start) + 1 or len(data)
        return data[start:], line_at - data.count(b"\n", start)
