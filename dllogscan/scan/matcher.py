"""Matching one line: which signatures its keywords point to, whether a group's screen rules
them out, and each signature's match on the line's clean views (or on the line joined with a
neighbour, for a message wrapped across two lines). Outcomes are remembered by what decides them,
and a line that matched nothing also by its shape (``digits.py``)."""
from __future__ import annotations

from . import digits, limits, linememo, screen
from .linememo import MEMO_LINES, LineMemo
from .output import ScanOutput, excerpt, lines_after, lines_before
from ..core.models import Hit
from ..signatures.database import Database, Signature

NO_SCREEN = object()


def cap(sig: Signature) -> int:
    """The hits of ``sig`` kept per source: ``MAX_HITS_PER_SIGNATURE``, one for a fact read once
    (``Signature.once``). A signature at its cap is not matched again, and a line that holds only
    its keywords is passed over unread (``Scanner._dead_test``)."""
    return 1 if sig.once else limits.MAX_HITS_PER_SIGNATURE


class LineMatcher:
    """The per-line half of the ``Scanner``: keyword -> signatures -> matches -> ``Hit``s."""

    def __init__(self, db: Database, prefilter_name: str) -> None:
        self.db = db
        self._kw_bytes = [(kw.encode("utf-8"), sigs) for kw, sigs in db.by_keyword.items()]
        self._kw_automaton = linememo.keyword_automaton([kw for kw, _ in self._kw_bytes], prefilter_name)
        self._by_line: dict[bytes, tuple[Signature, ...]] = {}
        self._groups: dict[tuple[int, ...], tuple[Signature, ...]] = {}  # keyword indices -> signatures
        self._screens: dict[tuple[str, ...], object] = {}
        self._screen_asks: dict[tuple[str, ...], int] = {}
        self._outcomes: dict[tuple, list] = {}  # a line's matches, by what decides them (_outcome_key)
        self._misses: set[tuple] = set()  # the shapes of lines that matched nothing (_shape)
        self._tables: dict[tuple[str, ...], tuple] = {}  # live signature ids -> digits.shaping

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
            if len(raw) <= limits.MEMO_LINE_BYTES:
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
            if asked < limits.SCREEN_AFTER:
                return None
            found = self._screens[key] = screen.build(sigs) or NO_SCREEN
        return None if found is NO_SCREEN else found

    def _match_line(self, data: bytes, start: int, end: int, lineno: int, out: ScanOutput) -> None:
        raw = data[start:end]
        memo = out.memo if out.memo is not None and out.memo.data is data else None
        repeat = memo.repeat if memo is not None else None
        if repeat is not None and repeat[0] == start - 1 and repeat[1] == raw and _line_at(data, end + 1, raw):
            for sig_id in repeat[2]:
                out.counts[sig_id] += 1  # the same line between two copies of itself: the same outcome
            memo.repeat = (end, raw, repeat[2])
            return
        sigs = self._candidates(raw)
        if not sigs:
            return
        if memo is None:
            memo = out.memo = LineMemo(data)
        memo.repeat = None
        if memo.screen is not None:
            sigs = memo.screened(sigs)  # none of those left out can match in this round
            if not sigs:
                return
        counts = out.counts
        live, capped = [], []
        for sig in sigs:
            if counts[sig.id] >= cap(sig):
                counts[sig.id] += 1  # at its cap: not matched again
                capped.append(sig.id)
            else:
                live.append(sig)
        if not live:
            memo.repeat = _repeat(data, start, end, raw, capped)
            return
        key = self._outcome_key(data, start, end, raw, live)
        found = self._outcomes.get(key) if key is not None else None
        if found is None:
            shape, wide = self._shape(key, live) if key is not None else (None, None)
            if shape is not None and shape in self._misses:
                found = []
            else:
                found = self._decide(data, start, end, lineno, live, memo)
                if shape is not None and not found and (wide is None or not self._finds(wide, data, start, end,
                                                                                          lineno, memo)):
                    if len(self._misses) >= MEMO_LINES:
                        self._misses.clear()
                    self._misses.add(shape)
            if key is not None:
                if len(self._outcomes) >= MEMO_LINES:
                    self._outcomes.clear()
                self._outcomes[key] = found
        if not found:
            memo.repeat = _repeat(data, start, end, raw, capped)
            return
        rank = memo.views(data, start, end)[1]
        before = lines_before(data, start, limits.BEFORE_LINES, lineno, memo)
        for sig, match, text in found:
            facts = {k: v for k, v in match.groupdict().items() if v}
            if rank is not None:
                facts.setdefault("rank", rank)
            after = lines_after(data, end, sig.capture_after, lineno, memo) if sig.capture_after else ()
            counts[sig.id] += 1
            if counts[sig.id] == cap(sig):
                out.capped += 1
            out.hits.append(Hit(signature=sig.id, line=lineno, text=excerpt(text, match),
                                facts=facts, before=before, after=after))

    @staticmethod
    def _outcome_key(data: bytes, start: int, end: int, raw: bytes, live: list[Signature]):
        """What decides a line's matches: its bytes, its neighbours' bytes (wrapped messages) and
        the signatures still below their cap; None for long lines (not remembered)."""
        if end - start > limits.MEMO_LINE_BYTES:
            return None
        prev = b""
        if start > 0:
            stop = start - 1
            begin = data.rfind(b"\n", max(0, stop - limits.MAX_LINE), stop) + 1
            if stop - begin > limits.MEMO_LINE_BYTES:
                return None
            prev = data[begin:stop]
        nxt = b""
        pos = end + 1
        if pos < len(data):
            stop = data.find(b"\n", pos, pos + limits.MAX_LINE)
            stop = stop if stop != -1 else min(len(data), pos + limits.WINDOW)
            if stop - pos > limits.MEMO_LINE_BYTES:
                return None
            nxt = data[pos:stop]
        return prev, raw, nxt, tuple(s.id for s in live)

    def _shape(self, key: tuple, live: list[Signature]) -> tuple[tuple | None, object]:
        """The outcome key with each digit sent to the first one that no live signature tells it
        from, or to 0 where each pattern that tells some apart can be widened (``digits.shaping``),
        and the screen of the widened patterns then: lines of one shape all miss alike. None where
        the live signatures may read digits unevenly, or where a line holds a ``{`` (a structured
        record: ``normalize.views`` reads its JSON numbers)."""
        prev, raw, nxt, ids = key
        found = self._tables.get(ids)
        if found is None:
            found = self._tables[ids] = digits.shaping(live)
        table, wide = found
        if table is None or b"{" in raw or b"{" in prev or b"{" in nxt:
            return None, None
        return (prev.translate(table), raw.translate(table), nxt.translate(table), ids), wide

    def _finds(self, wide, data: bytes, start: int, end: int, lineno: int, memo: "LineMemo") -> bool:
        """Whether the screen of widened patterns finds anything in the line or its joins."""
        texts = memo.views(data, start, end)[0]
        if not texts:
            return False
        if any(wide.search(t) for t in texts):
            return True
        for side in ("prev", "next"):
            joined = self._join(side, data, start, end, lineno, texts, memo, None)
            if joined is not None and wide.search(joined[0]):
                return True
        return False

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
        the neighbour is empty or absent, this line is longer than a wrapped message's part
        (``limits.WRAP_MAX``), or the screen finds nothing in the joined text."""
        if end - start > limits.WRAP_MAX:
            return None
        if side == "prev":
            prev = lines_before(data, start, 1, lineno, memo)
            if not prev or prev[0][0] != lineno - 1:
                return None
            text, split = prev[0][1] + " " + texts[0], len(prev[0][1])
        else:
            nxt = lines_after(data, end, 1, lineno, memo)
            if not nxt or nxt[0][0] != lineno + 1:
                return None
            text, split = texts[-1] + " " + nxt[0][1], len(texts[-1])
        if group is not None and not memo.screen_join(group, text):
            return None
        return text, split


def _repeat(data: bytes, start: int, end: int, raw: bytes, capped: list[str]):
    """What ``LineMemo.repeat`` keeps of a line that found nothing new: only a whole line whose
    previous line is a copy of it qualifies."""
    if _line_at(data, start, raw) and _line_at(data, start - len(raw) - 1, raw):
        return end, raw, tuple(capped)
    return None


def _line_at(data: bytes, begin: int, raw: bytes) -> bool:
    """Whether the whole line of ``data`` that starts at ``begin`` is ``raw``."""
    if not 0 <= begin <= len(data) or (begin and data[begin - 1] != 10) or not data.startswith(raw, begin):
        return False
    stop = begin + len(raw)
    return stop == len(data) or data[stop] == 10
