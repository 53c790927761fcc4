"""Which keyword positions of a round lead nowhere, so that their lines cost no per-line work:
asked one position at a time (``DeadTest.__call__``), or a block of positions at a time
(``DeadTest.live``) where a round holds thousands of them (a failure printed on every line)."""
from __future__ import annotations

from itertools import islice
from os.path import commonprefix
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from .matcher import cap

if TYPE_CHECKING:
    from .output import ScanOutput
    from ..signatures.database import Signature

#: positions ``live`` filters at once: a signature that reaches its cap inside a block makes the
#: rest of the block dead only for the per-position test, which the scanner still asks
BLOCK = 1024
#: distinct keys answered before the answers are forgotten (keys of short anchors take in the
#: bytes after them, which may differ on every line)
MAX_KEYS = 4096

Held = tuple[tuple[bytes, tuple["Signature", ...]], ...]  # the keywords holding an anchor, with their signatures


def key_length(anchors: list[bytes]) -> int:
    """How many bytes from a position tell which anchor starts there: one more than the longest
    start two anchors share (no anchor starts another: ``anchors.anchors`` keeps the shortest)."""
    shared = max((len(commonprefix([a, b])) for i, a in enumerate(anchors) for b in anchors[i + 1:]), default=0)
    return shared + 1


def anchor_heads(anchors: list[bytes], kw_bytes: list[tuple[bytes, tuple]]) -> tuple[int, dict[bytes, tuple]]:
    """The first bytes every anchor has (as many as the shortest one holds), and for each such
    head its anchors, each with the keywords that hold it (those a line may owe to it)."""
    if not anchors:
        return 0, {}
    size = min(len(a) for a in anchors)
    by_head: dict[bytes, list] = {}
    for anchor in anchors:
        held = tuple((kw, sigs) for kw, sigs in kw_bytes if anchor in kw)
        by_head.setdefault(anchor[:size], []).append((anchor, held))
    return size, {head: tuple(found) for head, found in by_head.items()}


class DeadTest(dict):
    """Whether the anchor at a position of one round's ``data`` leads only to signatures that are
    no longer matched (at their ``cap``) or, where ``may_match`` says so, cannot match in this
    round. The answer is kept per anchor, and per ``key_len`` bytes from the position (the keys
    of this dictionary, each answered on first use), until another signature reaches its cap
    (``ScanOutput.capped``); answers only turn from live to dead within a round, as counts only
    grow. (A dictionary itself rather than one it holds: a bound method as its look-up would make
    a cycle, and each round's data would wait for the garbage collector.)"""

    def __init__(self, data: bytes, heads: tuple[int, dict[bytes, tuple]], key_len: int,
                 may_match: Callable[["Signature"], bool], out: "ScanOutput") -> None:
        super().__init__()
        self.data, self.key_len, self.out = data, key_len, out
        self._head_len, self._by_head = heads
        self._may_match = may_match
        self._capped = out.capped
        self._by_anchor: dict[bytes, bool] = {}

    def __missing__(self, key: bytes) -> bool:
        found = self[key] = self._answer(key)
        return found

    def _sync(self) -> None:
        """Forget the answers once a signature has reached its cap since they were given."""
        if self.out.capped != self._capped or len(self) > MAX_KEYS:
            self._capped = self.out.capped
            self._by_anchor.clear()
            self.clear()

    def _answer(self, key: bytes) -> bool:
        for anchor, held in self._by_head.get(key[:self._head_len], ()):
            if key.startswith(anchor[:self.key_len]):
                found = self._by_anchor.get(anchor)
                if found is None:
                    found = self._by_anchor[anchor] = self._dead(held)
                return found
        return False  # every position starts an anchor: not met, kept to be safe

    def _dead(self, held: Held) -> bool:
        counts, may_match, data = self.out.counts, self._may_match, self.data
        return not any(kw in data and any(counts[sig.id] < cap(sig) and may_match(sig) for sig in sigs)
                       for kw, sigs in held)

    def __call__(self, pos: int) -> bool:
        self._sync()
        return self[self.data[pos:pos + self.key_len]]

    def live(self, positions: list[int]) -> Iterator[int]:
        """``positions`` less those this test finds dead, ``BLOCK`` at a time: one list
        comprehension and a dictionary look-up per position where a round is full of them."""
        data, size, it = self.data, self.key_len, iter(positions)
        while True:
            block = list(islice(it, BLOCK))
            if not block:
                return
            self._sync()
            yield from [pos for pos in block if not self[data[pos:pos + size]]]


def live_positions(dead: DeadTest | None, positions: Iterable[int]) -> Iterable[int]:
    """The positions a round's loop should visit: a list less its dead ones; anything else
    (the lazy positions of a one-line round, which its window budget stops) as it is."""
    return dead.live(positions) if dead is not None and isinstance(positions, list) else positions
