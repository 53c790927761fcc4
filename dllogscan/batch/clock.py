"""A log line's wall-clock time as batch rows hold it (``first_time``, ``last_time``, a hit's
``time`` and so ``first_failure_time``), read by ``correlate/stamps.py`` as the hang timing reads it.

Rules:
- a time is ``YYYY-MM-DDTHH:MM:SS``, the clock the log wrote; a stamp that names a zone (``Z``,
  ``+05:30``, `` UTC``) keeps that clock and adds its offset, ``+HH:MM`` (``+00:00`` for ``Z`` and
  ``UTC``), so one text tells both the log's own day and the instant;
- a log's ``NN/NN`` order and the year of a stamp without one are decided once, from the log's head
  (``Clock``); a year no stamp of the head names is the file's, else this year's;
- two times are compared as instants where both name a zone, else on one clock (``on_one_clock``):
  the local time taken to be in the zone the other names, as ``stamps.reading`` takes it.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from ..correlate import stamps


class Clock:
    """How one log's stamps are read: ``stamps.Context`` over its head, made the first time a stamp
    needs it (``head`` may be a function, read then: the batch's scanner and ``layouts.from_content``
    share one clock per log, so its hits and its first and last times read alike)."""

    def __init__(self, head: bytes | Callable[[], bytes] = b"", year: int | None = None) -> None:
        self._head = head
        self.year = year
        self._context: stamps.Context | None = None

    @property
    def context(self) -> stamps.Context:
        """The log's ``stamps.Context``, made on first use (not a ``cached_property``: Python
        3.11's takes a lock)."""
        if self._context is None:
            head = self._head() if callable(self._head) else self._head
            self._context = stamps.Context(head, self.year or datetime.now().year)
        return self._context

    def time(self, line: bytes) -> str | None:
        """The time of ``line``'s first stamp (``iso``); None where it holds none."""
        found = stamps.line_time(line, self.context)
        return None if found is None else iso(found)


def iso(reading: stamps.Reading) -> str | None:
    """A stamp's time as a batch row holds it (the rules above); None past ``datetime``'s years
    (``time.gmtime``: cheaper than a ``datetime``, and read for every stamped hit)."""
    seconds, offset = reading
    written = time.gmtime(seconds + (offset or 0.0))
    if not 1 <= written.tm_year <= 9999:
        return None
    text = "%04d-%02d-%02dT%02d:%02d:%02d" % written[:6]
    return text if offset is None else text + stamps.offset_text(offset)


def parsed(text: object) -> datetime | None:
    """A batch time as a ``datetime`` (aware where it names an offset); None for none, no time or
    no text (a results file's fact of another type)."""
    try:
        return datetime.fromisoformat(text) if isinstance(text, str) and text else None
    except ValueError:
        return None


def on_one_clock(*times: datetime | None) -> tuple[datetime | None, ...]:
    """``times`` made comparable: as they are where all name a zone or none does, else each as its
    own clock shows it (the offset dropped: a local time read in the zone the others name)."""
    aware = {t.tzinfo is not None for t in times if t is not None}
    if len(aware) < 2:
        return times
    return tuple(None if t is None else t.replace(tzinfo=None) for t in times)


def earliest(texts: list[str]) -> str:
    """The earliest of batch times (``on_one_clock``); text that is no time counts last."""
    times = on_one_clock(*map(parsed, texts))
    known = [(t, text) for t, text in zip(times, texts) if t is not None]
    return min(known, key=lambda pair: pair[0])[1] if known else min(texts)
