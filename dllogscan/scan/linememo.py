"""Per-line helpers of the scanner: each line of a round cleaned once (``LineMemo``), and the
automaton that finds a line's keywords in one pass."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..normalize import lines as normalize
from . import screen

if TYPE_CHECKING:
    from ..signatures.database import Signature

MEMO_LINES = 4096  # distinct lines remembered (keyword look-up, cleaned views)


def keyword_automaton(keywords: list[bytes], engine: str):
    """An Aho-Corasick automaton over every keyword, to find a line's keywords in one pass; None
    for the pure-Python engine or where ``ahocorasick-rs`` is not installed."""
    if engine == "python" or not keywords:
        return None
    try:
        import ahocorasick_rs  # noqa: PLC0415
    except ImportError:
        return None
    return ahocorasick_rs.BytesAhoCorasick(keywords)


def clean_slice(data: bytes, begin: int, stop: int) -> str:
    """``normalize.clean`` of ``data[begin:stop]`` (where no memo is at hand)."""
    return normalize.clean(data[begin:stop])


class LineMemo:
    """The cleaned views of the lines of one round's ``data``, each line cleaned once however
    many hits, neighbours and joins ask for it (keyed by its bounds in ``data``)."""

    def __init__(self, data: bytes, many: bool = False) -> None:
        self.data = data
        self.screen = screen.RoundScreen(data) if many else None  # a round full of keyword lines
        self._screened: dict[int, tuple[Signature, ...]] = {}
        self._views: dict[tuple[int, int], tuple[list[str], str | None]] = {}
        #: the last line matched, when it found nothing new and its previous line is a copy of it:
        #: (its end, its bytes, the signatures counted at their cap). The next line, when it is one
        #: more copy followed by another, has the same neighbours and so the same outcome.
        self.repeat: tuple[int, bytes, tuple[str, ...]] | None = None
        #: the last join a group's screen was asked about: (the group, the joined text, its answer).
        #: A line's join with the next line is the next line's join with it: asked once.
        self.last_join: tuple[object, str, bool] | None = None

    def screen_join(self, group, text: str) -> bool:
        """Whether ``group`` (a line screen) finds anything in the joined ``text``."""
        last = self.last_join
        if last is not None and last[0] is group and last[1] == text:
            return last[2]
        found = group.search(text) is not None
        self.last_join = (group, text, found)
        return found

    def screened(self, sigs: tuple[Signature, ...]) -> tuple[Signature, ...]:
        """``sigs`` less those the round screen rules out (``sigs`` is one of the scanner's
        cached groups, so its ``id`` names it)."""
        found = self._screened.get(id(sigs))
        if found is None:
            found = self._screened[id(sigs)] = tuple(s for s in sigs if self.screen.may_match(s))
        return found

    def views(self, data: bytes, begin: int, stop: int) -> tuple[list[str], str | None]:
        key = (begin, stop)
        found = self._views.get(key)
        if found is None:
            if len(self._views) >= MEMO_LINES:
                self._views.clear()
            found = self._views[key] = normalize.views(data[begin:stop])
        return found

    def clean(self, data: bytes, begin: int, stop: int) -> str:
        """``normalize.clean`` of the line: its views joined by a space."""
        return " ".join(self.views(data, begin, stop)[0])
