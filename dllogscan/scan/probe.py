"""The pure-Python prefilter: few, cheap passes chosen from the data's own byte frequencies.

A ``bytes.find`` for one byte is ``memchr`` (~8 GB/s); for a longer literal it runs at ~1-2 GB/s.
So each anchor (a keyword containing no shorter keyword) is found through a *probe*: either one
of its rare bytes — one ``memchr`` pass shared by every anchor assigned to that byte, each hit
verified with ``startswith`` — or a substring shared by several anchors, or the anchor itself.
Probes are chosen by a cost model fed with byte and substring counts from a sample of the data,
re-planned when a probe hits far more often than the sample promised. Every reported offset is
a verified anchor start, so the answer equals one ``find`` loop per anchor, whatever the plan.
"""
from __future__ import annotations

from itertools import combinations
from typing import Iterable

from .anchors import anchors

PASS_BYTE = 1 / 8e9      # seconds per data byte of one memchr pass
PASS_FIND = 1 / 1.2e9    # seconds per data byte of one multi-byte find pass
PER_HIT = 0.45e-6        # one trip round the Python loop
PER_CHECK = 0.15e-6      # one startswith
SAMPLE = 32 << 10
REPLAN_FACTOR = 8        # re-plan when a probe hits this many times more than predicted (+ slack)
REPLAN_EVERY = 64 << 20  # and after this many bytes whatever happens

Probe = tuple[bytes, tuple[tuple[bytes, int], ...]]  # needle, (anchor, needle's offset in it)


def shared_substrings(anchor_list: list[bytes], min_len: int = 3) -> list[bytes]:
    """Maximal substrings (length >= ``min_len``) common to two or more anchors."""
    found: set[bytes] = set()
    for a, b in combinations(anchor_list, 2):
        for i in range(len(a)):
            for j in range(i + min_len, len(a) + 1):
                if a[i:j] not in b:
                    break
                found.add(a[i:j])
    cover = {s: frozenset(a for a in anchor_list if s in a) for s in found}
    return sorted(s for s in found if not any(s != t and s in t and cover[s] == cover[t] for t in found))


def plan(anchor_list: list[bytes], shared: list[bytes], sample: bytes) -> list[Probe]:
    """Greedy weighted set cover: the probes that find every anchor at the least expected cost
    per data byte. Frequencies come from ``sample`` (add-half smoothing: unseen is not never)."""
    size = max(len(sample), 1)

    def rate(needle: bytes) -> float:
        return (sample.count(needle) + 0.5) / size

    options: list[tuple[bytes, float, float, list[bytes]]] = []  # needle, pass cost, hit rate, covers
    for byte in sorted({b for a in anchor_list for b in a}):
        needle = bytes([byte])
        options.append((needle, PASS_BYTE, rate(needle), [a for a in anchor_list if needle in a]))
    for sub in shared:
        options.append((sub, PASS_FIND, rate(sub), [a for a in anchor_list if sub in a]))
    for a in anchor_list:
        options.append((a, PASS_FIND, 0.0, [a]))  # the anchor itself: every hit is an answer
    left = set(anchor_list)
    probes: list[Probe] = []
    while left:
        best, best_ratio, best_cover = None, 0.0, []
        for needle, pass_cost, hits, covers in options:
            new = [a for a in covers if a in left]
            if not new:
                continue
            checks = 0 if new == [needle] else len(new)
            cost = pass_cost + hits * (PER_HIT + PER_CHECK * checks)
            if best is None or cost / len(new) < best_ratio:
                best, best_ratio, best_cover = needle, cost / len(new), new
        probes.append((best, tuple((a, a.find(best)) for a in best_cover)))
        left -= set(best_cover)
    return probes


class ProbePrefilter:
    """Pure Python, planned probes; same positions as one ``find`` loop per anchor."""

    name = "python"

    def __init__(self, keywords: Iterable[str]) -> None:
        self.anchors = anchors(keywords)
        self.longest = max((len(a) for a in self.anchors), default=1)
        self._shared = shared_substrings(self.anchors)
        self._probes: list[Probe] = []
        self._expect: dict[bytes, float] = {}
        self._since_plan = 0

    def _plan(self, data: bytes, start: int, end: int) -> None:
        mid = max(start, (start + end) // 2 - SAMPLE // 2)
        sample = data[mid: mid + SAMPLE]
        self._probes = plan(self.anchors, self._shared, sample)
        size = max(len(sample), 1)
        self._expect = {n: (sample.count(n) + 0.5) / size for n, _ in self._probes}
        self._since_plan = 0

    def positions(self, data: bytes, start: int, end: int) -> list[int]:
        if end <= start:
            return []
        if not self._probes or self._since_plan >= REPLAN_EVERY:
            self._plan(data, start, end)
        found, over = self._run(data, start, end)
        self._since_plan += end - start
        if over:
            self._since_plan = REPLAN_EVERY  # plan afresh from the next block
        found.sort()
        return found

    def _run(self, data: bytes, start: int, end: int) -> tuple[list[int], bool]:
        found: list[int] = []
        append = found.append
        find, startswith = data.find, data.startswith
        limit = min(len(data), end + self.longest)
        over = False
        for needle, group in self._probes:
            hits = 0
            if len(group) == 1 and group[0][0] == needle:  # the anchor itself
                pos = find(needle, start, limit)
                while pos != -1 and pos < end:
                    append(pos)
                    pos = find(needle, pos + 1, limit)
                continue
            lo = start + min(off for _, off in group)
            pos = find(needle, lo, limit)
            while pos != -1:
                hits += 1
                for anchor, off in group:
                    at = pos - off
                    if start <= at < end and startswith(anchor, at):
                        append(at)
                pos = find(needle, pos + 1, limit)
            expected = self._expect.get(needle, 0.0) * (limit - lo)
            if hits > REPLAN_FACTOR * expected + 64:
                over = True
        return found, over
