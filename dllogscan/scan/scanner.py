"""Stream a source in large binary chunks and turn prefilter hits into signature Hits.

Memory stays bounded by the chunk size: a multi-GB file or a single 1 GB line is read in
``CHUNK`` pieces, and only the lines around a keyword are decoded and regex-matched. A line
longer than ``MAX_LINE`` is matched in a window around the keyword.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import BinaryIO, Callable

from . import linememo, screen
from ..normalize import lines as normalize
from .linememo import MEMO_LINES, LineMemo
from ..core.models import Hit
from .prefilter import Prefilter, make_prefilter
from ..core.errors import SourceError
from ..signatures.database import Database, Signature
from ..sources.streams import STREAM_ERRORS, describe_read_error

CHUNK = 4 << 20
LOOKBEHIND = 64 << 10
LOOKAHEAD = 256 << 10
MAX_LINE = 16 << 10
WINDOW = 2048
BEFORE_LINES = 20
TAIL_LINES = 30
MAX_HITS_PER_SIGNATURE = 200
MAX_EVIDENCE_CHARS = 600
KEEP_PREFIX = 1 << 20
END_BYTES = 256 << 10  # the raw end of the input kept for cadence.py (timing of the last lines)
MEMO_LINE_BYTES = 1024  # longer lines are not remembered by their bytes
SCREEN_AFTER = 16  # lines of one signature group before its screen is built
NO_SCREEN = object()
SCREEN_MIN_POSITIONS = 2000  # keyword hits in one round that make the round screen pay (screen.py)


@dataclass
class ScanOutput:
    """What the scanner saw in one source."""

    hits: list[Hit] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)
    lines: int = 0
    bytes_read: int = 0
    tail_src: tuple[bytes, int, bool] | None = field(default=None, repr=False)  # what ``tail`` is cleaned from
    head_src: bytes | None = field(default=None, repr=False)  # what ``head`` is cleaned from
    read_error: str | None = None
    prefix: bytes = b""  # the first KEEP_PREFIX bytes: the whole input when it is small
    document: str | None = None  # the document kind when the input was flattened (documents/)
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
            self._head = list(Scanner._lines_after(self.head_src, 0, 10, 0)) if self.head_src is not None else []
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
        self._head, self.head_src = None, b"\n" + data[:MAX_LINE * 2]

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


class Scanner:
    """Matches one compiled database against byte streams."""

    def __init__(self, db: Database, prefilter: Prefilter | None = None, engine: str = "auto") -> None:
        self.db = db
        self.prefilter = prefilter or make_prefilter(db.keywords, engine)
        self._kw_bytes = [(kw.encode("utf-8"), sigs) for kw, sigs in db.by_keyword.items()]
        self._kw_automaton = linememo.keyword_automaton([kw for kw, _ in self._kw_bytes], self.prefilter.name)
        self._by_line: dict[bytes, tuple[Signature, ...]] = {}
        self._groups: dict[tuple[int, ...], tuple[Signature, ...]] = {}  # keyword indices -> signatures
        self._screens: dict[tuple[str, ...], object] = {}
        self._screen_asks: dict[tuple[str, ...], int] = {}
        self._outcomes: dict[tuple, list] = {}  # a line's matches, by what decides them (_outcome_key)

    # -- line helpers -------------------------------------------------------------------
    @staticmethod
    def _line_bounds(data: bytes, pos: int) -> tuple[int, int]:
        """Start and end of the line holding ``pos``, or a window around it on a huge line."""
        lo = max(0, pos - MAX_LINE)
        start = data.rfind(b"\n", lo, pos) + 1
        if start == 0 and lo > 0:
            start = max(0, pos - WINDOW)
        end = data.find(b"\n", pos, pos + MAX_LINE)
        if end == -1:
            end = min(len(data), pos + WINDOW) if pos + MAX_LINE < len(data) else len(data)
        return start, end

    @staticmethod
    def _lines_after(data: bytes, end: int, count: int, lineno: int,
                     memo: "LineMemo | None" = None) -> tuple[tuple[int, str], ...]:
        out = []
        pos = end + 1
        clean = memo.clean if memo is not None else linememo.clean_slice
        for i in range(1, count + 1):
            if pos >= len(data):
                break
            nxt = data.find(b"\n", pos, pos + MAX_LINE)
            stop = nxt if nxt != -1 else min(len(data), pos + WINDOW)
            text = clean(data, pos, stop)
            if text:
                out.append((lineno + i, text[:MAX_EVIDENCE_CHARS]))
            if nxt == -1:
                break
            pos = nxt + 1
        return tuple(out)

    @staticmethod
    def _lines_before(data: bytes, start: int, count: int, lineno: int,
                      memo: "LineMemo | None" = None) -> tuple[tuple[int, str], ...]:
        out = []
        stop = start - 1
        clean = memo.clean if memo is not None else linememo.clean_slice
        for i in range(1, count + 1):
            if stop < 0:
                break
            begin = data.rfind(b"\n", max(0, stop - MAX_LINE), stop) + 1
            text = clean(data, begin, stop)
            if text:
                out.append((lineno - i, text[:MAX_EVIDENCE_CHARS]))
            if begin == 0:
                break
            stop = begin - 1
        out.reverse()
        return tuple(out)

    # -- matching -----------------------------------------------------------------------
    def _candidates(self, raw: bytes) -> tuple[Signature, ...]:
        """The signatures whose keywords ``raw`` holds (remembered per distinct line). One tuple
        object per combination of keywords, so callers may remember things by its ``id``."""
        found = self._by_line.get(raw)
        if found is None:
            if self._kw_automaton is not None:
                found_kw = {i for i, _, _ in self._kw_automaton.find_matches_as_indexes(raw, overlapping=True)}
            else:
                found_kw = {i for i, (kw, _) in enumerate(self._kw_bytes) if kw in raw}
            key = tuple(sorted(found_kw))
            found = self._groups.get(key)
            if found is None:
                sigs: dict[str, Signature] = {}
                for index in key:
                    for sig in self._kw_bytes[index][1]:
                        sigs[sig.id] = sig
                found = self._groups[key] = tuple(sigs.values())
            if len(raw) <= MEMO_LINE_BYTES:
                if len(self._by_line) >= MEMO_LINES:
                    self._by_line.clear()
                self._by_line[raw] = found
        return found

    def _screen(self, sigs: tuple[Signature, ...]):
        """The screen (``screen.py``) of a group of signatures, built once per group, and only
        when the group has come up ``SCREEN_AFTER`` times (building one costs a few ms)."""
        key = tuple(s.id for s in sigs)
        found = self._screens.get(key)
        if found is None:
            asked = self._screen_asks[key] = self._screen_asks.get(key, 0) + 1
            if asked < SCREEN_AFTER:
                return None
            found = self._screens[key] = screen.build(sigs) or NO_SCREEN
        return None if found is NO_SCREEN else found

    def _match_line(self, data: bytes, start: int, end: int, lineno: int, out: ScanOutput) -> None:
        raw = data[start:end]
        sigs = self._candidates(raw)
        if not sigs:
            return
        memo = out.memo if out.memo is not None and out.memo.data is data else None
        if memo is None:
            memo = out.memo = LineMemo(data)
        if memo.screen is not None:
            sigs = memo.screened(sigs)  # none of those left out can match in this round
            if not sigs:
                return
        counts = out.counts
        live = []
        for sig in sigs:
            if counts[sig.id] >= MAX_HITS_PER_SIGNATURE:
                counts[sig.id] += 1  # at its cap: not matched again
            else:
                live.append(sig)
        if not live:
            return
        key = self._outcome_key(data, start, end, raw, live)
        found = self._outcomes.get(key) if key is not None else None
        if found is None:
            found = self._decide(data, start, end, lineno, live, memo)
            if key is not None:
                if len(self._outcomes) >= MEMO_LINES:
                    self._outcomes.clear()
                self._outcomes[key] = found
        if not found:
            return
        rank = memo.views(data, start, end)[1]
        before = self._lines_before(data, start, BEFORE_LINES, lineno, memo)
        for sig, match, text in found:
            facts = {k: v for k, v in match.groupdict().items() if v}
            if rank is not None:
                facts.setdefault("rank", rank)
            after = self._lines_after(data, end, sig.capture_after, lineno, memo) if sig.capture_after else ()
            counts[sig.id] += 1
            out.hits.append(Hit(signature=sig.id, line=lineno, text=_excerpt(text, match),
                                facts=facts, before=before, after=after))

    @staticmethod
    def _outcome_key(data: bytes, start: int, end: int, raw: bytes, live: list[Signature]):
        """What decides a line's matches: its bytes, its neighbours' bytes (wrapped messages) and
        the signatures still below their cap; None for long lines (not remembered)."""
        if end - start > MEMO_LINE_BYTES:
            return None
        prev = b""
        if start > 0:
            stop = start - 1
            begin = data.rfind(b"\n", max(0, stop - MAX_LINE), stop) + 1
            if stop - begin > MEMO_LINE_BYTES:
                return None
            prev = data[begin:stop]
        nxt = b""
        pos = end + 1
        if pos < len(data):
            stop = data.find(b"\n", pos, pos + MAX_LINE)
            stop = stop if stop != -1 else min(len(data), pos + WINDOW)
            if stop - pos > MEMO_LINE_BYTES:
                return None
            nxt = data[pos:stop]
        return prev, raw, nxt, tuple(s.id for s in live)

    def _decide(self, data: bytes, start: int, end: int, lineno: int, live: list[Signature],
                memo: "LineMemo") -> list[tuple[Signature, object, str]]:
        """The signatures of ``live`` that match this line, alone or wrapped with a neighbour,
        each with its match and the text it matched in."""
        texts = memo.views(data, start, end)[0]
        if not texts:
            return []
        group = self._screen(tuple(live))
        alone = group is None or any(group.search(t) for t in texts)
        joins: dict[str, tuple[str, int] | None] = {}
        found = []
        for sig in live:
            match, text = None, ""
            if alone:
                for text in texts:
                    match = sig.compiled.search(text)
                    if match:
                        break
            if match is None:
                match, text = self._match_wrapped(sig, data, start, end, lineno, texts, memo, group, joins)
            if match is not None:
                found.append((sig, match, text))
        return found

    def _match_wrapped(self, sig: Signature, data: bytes, start: int, end: int, lineno: int,
                       texts: list[str], memo: "LineMemo", group, joins: dict):
        """A message wrapped across two lines: this line joined with a neighbour, where the match
        spans the join (a match inside the neighbour alone is the neighbour's own hit). The joined
        texts are made once per line (``joins``) and skipped when the group's screen rules them out."""
        for side in ("prev", "next"):
            if side not in joins:
                joins[side] = self._join(side, data, start, end, lineno, texts, memo, group)
            joined = joins[side]
            if joined is None:
                continue
            text, split = joined
            match = sig.compiled.search(text)
            if match and match.start() <= split < match.end():
                return match, text
        return None, ""

    def _join(self, side: str, data: bytes, start: int, end: int, lineno: int, texts: list[str],
              memo: "LineMemo", group) -> tuple[str, int] | None:
        """This line joined with its previous or next line, and the offset of the join; None when
        the neighbour is empty or absent, or the screen finds nothing in the joined text."""
        if side == "prev":
            prev = self._lines_before(data, start, 1, lineno, memo)
            if not prev or prev[0][0] != lineno - 1:
                return None
            text, split = prev[0][1] + " " + texts[0], len(prev[0][1])
        else:
            nxt = self._lines_after(data, end, 1, lineno, memo)
            if not nxt or nxt[0][0] != lineno + 1:
                return None
            text, split = texts[-1] + " " + nxt[0][1], len(texts[-1])
        if group is not None and not group.search(text):
            return None
        return text, split

    def scan(self, stream: BinaryIO) -> ScanOutput:
        """Scan a binary stream to its end (or its reader's limit); a large plain file is split
        over processes (``parallel.py``) with the same result."""
        from .parallel import try_parallel  # noqa: PLC0415 - parallel imports this module

        out = try_parallel(self, stream)
        return out if out is not None else self.scan_rounds(stream.read, ScanOutput(), RoundState())

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
                chunk = read(CHUNK)
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
                if st.keep_prefix and len(out.prefix) < KEEP_PREFIX and chunk:
                    out.prefix += chunk[: KEEP_PREFIX - len(out.prefix)]
            data = carry + chunk if carry else chunk
            if not is_dry and data and (final or len(data) > LOOKAHEAD) and out.wants_head():
                out.keep_head(data)
            proc_end = len(data) if final else max(search_from, len(data) - LOOKAHEAD)
            positions = self.prefilter.positions(data, search_from, proc_end)
            if not is_dry:
                out.memo = LineMemo(data, many=len(positions) >= SCREEN_MIN_POSITIONS)
            # Newlines are counted once per byte: up to each hit, then on to where the next round starts.
            counted_to, line_at = 0, base_line
            fresh: set[int] = set()
            last_end = -1
            for pos in positions:
                if pos < last_end:
                    continue  # same line (or window) as the previous keyword
                start, end = self._line_bounds(data, pos)
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
                tail_from = max(0, len(data) - LOOKBEHIND)
                out.tail_src, out._tail = (data[tail_from:], line_at, tail_from > 0), None
                out.end, out.end_line = self._end(data, line_at, base_line)
                out.memo = None
                return out
            keep_from = max(0, proc_end - LOOKBEHIND)
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
        start = max(0, len(data) - END_BYTES)
        if not start:
            return data, base_line  # the whole round: no newlines to count again
        start = data.find(b"\n", start) + 1 or len(data)
        return data[start:], line_at - data.count(b"\n", start)


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
        text = normalize.clean(lines[i])[:MAX_EVIDENCE_CHARS]
        if text:
            tail.append((first_line + i, text))
            if len(tail) == TAIL_LINES:
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


def _excerpt(text: str, match) -> str:
    """The evidence text: the whole clean line, or a window around the match on a long one."""
    if len(text) <= MAX_EVIDENCE_CHARS:
        return text
    lo = max(0, match.start() - 100)
    return ("…" if lo else "") + text[lo: lo + MAX_EVIDENCE_CHARS] + "…"
