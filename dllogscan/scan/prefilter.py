"""Multi-literal prefilter over raw bytes: which byte offsets hold a signature keyword.

Only lines with a keyword are decoded and regex-matched, so the prefilter decides the speed.
Three engines give the same answer, each searching only the *anchors* (keywords that contain no
shorter keyword): Hyperscan (extra ``fast``), Aho-Corasick (``ahocorasick-rs``, a dependency with
wheels for every common platform) and a pure-Python one built on ``bytes.find`` (``probe.py``),
the fallback where neither extension is installed. ``auto`` takes the first one importable.
"""
from __future__ import annotations

import hashlib
import threading
from operator import itemgetter
from typing import Iterable, Protocol

from .anchors import anchors, packed_groups
from ..core.paths import read_cached, write_cached


class Prefilter(Protocol):
    name: str

    def positions(self, data: bytes, start: int, end: int) -> list[int]:
        """Sorted offsets in ``data`` where an anchor starts at ``start <= offset < end``."""


class FindPrefilter:
    """Pure Python reference: one ``bytes.find`` loop per anchor (the planned ``ProbePrefilter``
    in ``probe.py`` gives the same positions, faster)."""

    name = "python-find"

    def __init__(self, keywords: Iterable[str]) -> None:
        self.anchors = anchors(keywords)
        self.longest = max((len(a) for a in self.anchors), default=1)

    def positions(self, data: bytes, start: int, end: int) -> list[int]:
        found: list[int] = []
        limit = min(len(data), end + self.longest)
        for anchor in self.anchors:
            pos = data.find(anchor, start, limit)
            while pos != -1 and pos < end:
                found.append(pos)
                pos = data.find(anchor, pos + 1, limit)
        found.sort()
        return found


#: bytes of window per leftmost match above which one overlapping pass over the whole window is
#: cheaper than one per line (a line's pass costs a few Python calls, ~1 KB of automaton work)
DENSE_BYTES_PER_MATCH = 1024


class AhoCorasickPrefilter:
    """Aho-Corasick over the anchor set (``ahocorasick-rs``), every occurrence reported,
    overlapping ones included, as one ``find`` loop per anchor would.

    The overlapping search walks the automaton byte by byte (~0.7 GB/s); a leftmost-first search
    runs the library's vectorised literal searcher (~6 GB/s) but skips occurrences that overlap
    one it reported. Every skipped occurrence overlaps a reported one (the search resumes where
    a match ends, and the leftmost match from there starts at or before any occurrence after
    it), so when no anchor holds a newline each one lies in a line that holds a reported match:
    the fast pass finds those lines, and the overlapping search runs on them alone. The packed
    searcher takes 64 literals at most, so more anchors get one fast pass per group of them."""

    name = "ahocorasick"

    def __init__(self, keywords: Iterable[str]) -> None:
        import ahocorasick_rs  # noqa: PLC0415 - imported only when chosen

        self.anchors = anchors(keywords)
        self.longest = max((len(a) for a in self.anchors), default=1)
        self._automaton = ahocorasick_rs.BytesAhoCorasick(self.anchors)
        self._leftmost = ([ahocorasick_rs.BytesAhoCorasick(group, matchkind=ahocorasick_rs.MATCHKIND_LEFTMOST_FIRST)
                           for group in packed_groups(self.anchors)]
                          if self.anchors and not any(b"\n" in a for a in self.anchors) else None)

    def positions(self, data: bytes, start: int, end: int) -> list[int]:
        """Offsets in ``data[start:end + longest]``, read through a memoryview: no copy. Two
        anchors never start at one offset (neither contains the other): no duplicates."""
        if end <= start:
            return []
        limit = min(len(data), end + self.longest)
        with memoryview(data) as view:
            first = self._first(view[start:limit]) if self._leftmost else None
            if first is None:
                matches = self._automaton.find_matches_as_indexes(view[start:limit], overlapping=True)
                found = [start + at for _, at, _ in matches if at < end - start]
            else:
                found = self._in_lines(data, view, start, limit, end, first)
        found.sort()
        return found

    def _first(self, window: memoryview) -> list[tuple[int, int, int]] | None:
        """The leftmost-first matches of each packed group, in the order they start (every
        occurrence of an anchor overlaps one of its own group's); None once they number more than
        one per ``DENSE_BYTES_PER_MATCH`` bytes, the groups left unsearched and nothing sorted: the
        window is searched whole then."""
        found: list[tuple[int, int, int]] = []
        for searcher in self._leftmost:
            found.extend(searcher.find_matches_as_indexes(window))
            if len(found) * DENSE_BYTES_PER_MATCH > len(window):
                return None
        if len(self._leftmost) > 1:
            found.sort(key=itemgetter(1))
        return found

    def _in_lines(self, data: bytes, view: memoryview, start: int, limit: int, end: int,
                  first: list[tuple[int, int, int]]) -> list[int]:
        """Every occurrence in the lines (within ``start:limit``) of the leftmost ``first``."""
        found: list[int] = []
        line_end = -1
        for _, at, to in first:
            if start + at < line_end:
                continue  # in the line searched last
            nl = data.rfind(b"\n", start, start + at)
            line_start = nl + 1 if nl != -1 else start
            line_end = data.find(b"\n", start + to, limit)
            if line_end == -1:
                line_end = limit
            for _, pos, _ in self._automaton.find_matches_as_indexes(view[line_start:line_end], overlapping=True):
                if line_start + pos < end:
                    found.append(line_start + pos)
        return found


class HyperscanPrefilter:
    """Hyperscan block mode over the whole anchor set at once."""

    name = "hyperscan"

    def __init__(self, keywords: Iterable[str]) -> None:
        import hyperscan  # noqa: PLC0415 - optional extra, imported only when chosen

        self.anchors = anchors(keywords)
        self.longest = max((len(a) for a in self.anchors), default=1)
        self._lengths = [len(a) for a in self.anchors]
        self._db = _compiled(hyperscan, self.anchors)
        self._local = threading.local()  # a Hyperscan scratch may serve one thread at a time
        self._local.scratch = hyperscan.Scratch(self._db)
        self._scratch_type = hyperscan.Scratch

    def _scratch(self):
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._scratch_type(self._db)
        return scratch

    def positions(self, data: bytes, start: int, end: int) -> list[int]:
        """One scan over ``data[start:end + longest]`` through a memoryview: no copy."""
        found: list[int] = []
        limit = min(len(data), end + self.longest)
        lengths = self._lengths
        offset = start

        def on_match(ident: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
            pos = offset + to - lengths[ident]
            if pos < end:
                found.append(pos)

        with memoryview(data) as view:
            self._db.scan(view[start:limit], match_event_handler=on_match, scratch=self._scratch())
        found.sort()
        return found


def _compile(hyperscan, literals: list[bytes]):
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    exprs = [b"".join(b"\\x%02x" % c for c in lit) for lit in literals]  # literal, escaped byte by byte
    db.compile(expressions=exprs, ids=list(range(len(exprs))), elements=len(exprs), flags=[0] * len(exprs))
    return db


def _compiled(hyperscan, literals: list[bytes]):
    """The block-mode database for ``literals``, from the on-disk cache when it holds it
    (keyed by the literals and the Hyperscan version); any cache problem just recompiles."""
    key = hashlib.sha256(b"\0".join(literals) + hyperscan.__version__.encode()).hexdigest()[:24]
    name = f"hs-{key}.db"
    blob = read_cached(name)
    if blob is not None:
        try:
            return hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
        except (hyperscan.error, TypeError, ValueError):
            pass
    db = _compile(hyperscan, literals)
    write_cached(name, hyperscan.dumpb(db))
    return db


ENGINES = ("auto", "hyperscan", "ahocorasick", "python")
MODULES = {"hyperscan": "hyperscan", "ahocorasick": "ahocorasick_rs"}


def available(engine: str) -> bool:
    """Whether ``engine``'s extension module is installed (found, not imported)."""
    from importlib.util import find_spec  # noqa: PLC0415

    module = MODULES.get(engine)
    return module is None or find_spec(module) is not None


def make_prefilter(keywords: Iterable[str], engine: str = "auto") -> Prefilter:
    """``auto`` takes Hyperscan when importable, else Aho-Corasick, else pure Python (planned
    probes); naming an engine whose module is missing raises ImportError."""
    kws = list(keywords)
    for name, made in (("hyperscan", HyperscanPrefilter), ("ahocorasick", AhoCorasickPrefilter)):
        if engine in ("auto", name) and kws:
            try:
                return made(kws)
            except ImportError:
                if engine == name:
                    raise
    from .probe import ProbePrefilter  # noqa: PLC0415 - only when chosen

    return ProbePrefilter(kws)
