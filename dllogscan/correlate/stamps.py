"""A log line's time, for ``cadence.py`` and the batch (``batch/layouts.py``): the stamp it starts
with or holds, read in seconds (``line_time``), and the step from one stamped line to another.

Rules:
- a timestamp is the first ``YYYY-MM-DD[T ]HH:MM:SS`` (``/`` also allowed) on a line, wherever it
  sits (logging prefixes, CRI prefixes, Slurm's ``CANCELLED AT <time>``), or the first of the other
  layouts training logs print: ``MM/DD/YYYY HH:MM:SS`` (the Hugging Face and accelerate examples'
  logging format), ``MM/DD/YY`` (rich), ``[MM/DD HH:MM:SS`` (detectron2), ``Mon DD HH:MM:SS``
  (syslog, journalctl, ``dmesg -T``, whose ``[Mon Nov 30 06:00:00 2026]`` names its year after the
  clock) and glog's ``I1201 HH:MM:SS`` (absl, PyTorch's c10 and NCCL lines); a stamp with no year
  takes the year that puts it nearest the last stamp of the end that has one (the Slurm line),
  else the end's own year where its reader knows one (``Context.year``: the batch's file date),
  else 2000; seconds since boot (``[   12.5]``) are no wall-clock time;
- the ``NN/NN`` form's order is decided once for the end (``Context.day_first``): day first where
  one of its stamps has a first number over 12, month first where one has a second number over 12,
  else the reading under which its dates run forward and span the least (``11/12`` then ``12/12``
  is one night in DD/MM, not a month in MM/DD; a tie reads month first); where both numbers are
  over 12 somewhere (two layouts), each stamp is read alone, day first only where it must be;
- a stamp followed by a zone (``Z``, ``+05:30``, ``-0800``, `` UTC``, after any fraction of a
  second) is read in UTC; one without is local time, whose offset the log does not say. A step
  between two stamps with a zone, or two without, is exact. A step from one to the other
  (``reading``) is read on one clock, the local time taken to be in the zone the other stamp was
  written in (one machine writes both; ``Z`` is UTC: containers and many clusters keep it), unless
  another offset a clock keeps (``OFFSETS_S``) makes the step no gap at all (Z-stamped steps 2 s
  apart, then Slurm's local ``CANCELLED AT`` exactly 4 h 0 min 2 s later: a node at UTC+4, not a
  hang of 4 h to the second: it cannot be told, None), or the one clock puts the later line first
  (then that offset, where one makes it no gap).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property

#: a timestamped line: where it starts and ends, its time (seconds since 1970: in UTC where its
#: stamp names a zone, else as written) and the offset its stamp names (seconds east; None for none)
Stamped = tuple[int, int, float, "float | None"]
#: a stamp's time (seconds since 1970: in UTC where it names a zone, else as written) and the offset
#: its zone names (seconds east; None for none)
Reading = tuple[float, "float | None"]
#: a stamp: ISO (groups 1-6), then month/day[/year] (7-12), syslog's month name (13-17) and glog's
#: letter and month-day (18-22). Every form holds ``HH:MM:SS``; the ISO one comes first, as the one
#: most logs print
TIMESTAMP_RE = re.compile(
    rb"20(\d\d)[-/](\d\d)[-/](\d\d)[T ](\d\d):(\d\d):(\d\d)(?!\d)"
    rb"|(?<![\d/])(\d\d)/(\d\d)(?:/((?:20)?\d\d))?,? (\d\d):(\d\d):(\d\d)(?![\d:])"
    rb"|(?<![\w])(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)(?![\d:])"
    rb"|(?<![\w\[])\[?[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?!\d)")
MONTHS = {m: i for i, m in enumerate((b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep",
                                      b"Oct", b"Nov", b"Dec"), 1)}
NO_YEAR = 2000  # a leap year, for a Feb 29 stamp, where no stamp of the end names its year
#: the ``NN/NN`` form, from the slash after its first number (a literal first: the engine skips
#: ahead), for ``Context.day_first``: the two numbers, the year and where the clock begins
SLASH_RE = re.compile(rb"/(?<=(?<![\d/])(\d\d)/)(\d\d)(?:/((?:20)?\d\d))?,? (?=\d\d:\d\d:\d\d(?![\d:]))")
#: a time zone right after a stamp's seconds (past any fraction of a second): ``Z``, ``+05:30``,
#: ``-0800``, `` UTC``, ``GMT+01:00``
ZONE_RE = re.compile(rb"(?:[.,]\d{1,9})?(?:Z(?![A-Za-z])| ?(?:UTC|GMT)?([+-])(\d\d):?(\d\d)(?!\d)"
                     rb"| ?(?:UTC|GMT)(?![\w+-]))")
#: the offsets from UTC that clocks keep, in seconds east: every whole hour from UTC-12 h to UTC+14 h,
#: and the half and three-quarter hours some regions keep (Marquesas -9:30, Newfoundland -3:30,
#: Iran +3:30, Afghanistan +4:30, India +5:30, Nepal +5:45, Myanmar +6:30, Eucla +8:45, central
#: Australia +9:30 and +10:30, Chatham +12:45 and +13:45)
OFFSETS_S = tuple(sorted({h * 3600.0 for h in range(-12, 15)}
                         | {m * 60.0 for m in (-570, -210, 210, 270, 330, 345, 390, 525, 570, 630, 765, 825)}))
#: a step this far back in time is the stamps' cut fractions of a second, not a line written first
BACKWARDS_S = 1.0
#: what every form ends in: its ``:MM:SS``. Searched first, with its literal first, so the engine
#: skips ahead fast (0.1 ms on 300 KB without a stamp; the forms' alternation alone takes 30 ms),
#: and each form is tried only in the 16 bytes before such a hit
GATE_RE = re.compile(rb":\d\d:\d\d(?!\d)")
#: the forms that name their year, each with its literal first (``Context.reference``)
ISO_RE = re.compile(rb"20\d\d[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?!\d)")
US_YEAR_RE = re.compile(rb"/(?<=\d\d/\d\d/)20\d\d,? \d\d:\d\d:\d\d(?!\d)")
REACH = 16  # the longest form's length before its ``:MM:SS`` (``12/01/2026, 12``, ``[I1201 12``)
#: the year ``dmesg -T`` writes after a syslog-form clock: ``[Mon Nov 30 06:00:00 2026]``
CTIME_YEAR_RE = re.compile(rb" (\d{4})\]")
#: what every form holds around its clock: a digit or comma, a space or ``T``, ``HH:MM:SS`` (each
#: form's date ends in a digit, the ``NN/NN/YYYY,`` one may in a comma), spelled from the first colon
#: on so that the engine skips to each ":" fast. One search tells a block holds no stamp at all
#: (``may_hold``): progress clocks (``eta: 0:10:34``, tqdm's ``[01:23<00:05``) have no date before them
DATED_RE = re.compile(rb":\d\d:\d\d(?!\d)(?<=[\d,][ T]\d\d:\d\d:\d\d)")
WINDOWS = (2 << 10, 16 << 10, 64 << 10)


def seconds_of(y: int, mo: int, d: int, h: int, mi: int, s: int) -> float:
    """Seconds since 1970 of a civil date and time (no calendar/datetime import on the plain path)."""
    y -= mo <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (mo + (-3 if mo > 2 else 9)) + 2) // 5 + d - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    return float(days * 86400 + h * 3600 + mi * 60 + s)


def stamps_in(end: bytes, lo: int = 0, hi: int | None = None):
    """The ``TIMESTAMP_RE`` matches in ``end[lo:hi]``, in order, found from ``GATE_RE``'s hits."""
    hi = len(end) if hi is None else hi
    last = lo
    for g in GATE_RE.finditer(end, lo, hi):
        if end[g.start() - 3:g.start() - 2] not in (b" ", b"T") or g.start() < 3:
            continue  # every form has a space or ``T`` before its hour (a tqdm bar's ``[01:23:45`` has not)
        # one byte past the hit, so a form's own look-ahead sees what follows its seconds
        m = TIMESTAMP_RE.search(end, max(last, g.start() - REACH), min(hi, g.end() + 1))
        if m is not None and m.end() == g.end():
            last = m.end()
            yield m


def _fields(m: "re.Match[bytes]", context: "Context | None" = None) -> tuple[int | None, int, int, int, int, int]:
    """(year or None, month, day, hour, minute, second) of a ``TIMESTAMP_RE`` match, an ``NN/NN``
    stamp in the order ``context`` decided for its end (alone: day first only where it must be)."""
    g = m.groups()
    if g[0] is not None:
        return (2000 + int(g[0]), *map(int, g[1:6]))  # type: ignore[return-value]
    if g[6] is not None:
        mo, d = int(g[6]), int(g[7])
        day_first = None if context is None else context.day_first
        if (mo > 12 >= d) if day_first is None else day_first:
            mo, d = d, mo
        year = None if g[8] is None else int(g[8]) + (2000 if len(g[8]) == 2 else 0)
        return (year, mo, d, int(g[9]), int(g[10]), int(g[11]))
    if g[12] is not None:
        ctime = CTIME_YEAR_RE.match(m.string, m.end())
        year = None if ctime is None else int(ctime.group(1))
        return (year, MONTHS[g[12]], int(g[13]), int(g[14]), int(g[15]), int(g[16]))
    return (None, *map(int, g[17:22]))  # type: ignore[return-value]


def _time(m: "re.Match[bytes]", context: "Context | None" = None) -> float | None:
    if m.start() and m.string[m.start() - 1] in b"0123456789":
        return None  # a longer number ending in 20..., not a year
    y, mo, d, h, mi, s = _fields(m, context)
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
        return None
    if y is not None:
        return seconds_of(y, mo, d, h, mi, s)
    ref = context.reference if context is not None else None
    if ref is None:
        return seconds_of(context.year if context is not None and context.year else NO_YEAR, mo, d, h, mi, s)
    # the year that puts the stamp nearest the reference (a December step before a January kill)
    return min((seconds_of(y, mo, d, h, mi, s) for y in (ref[0] - 1, ref[0], ref[0] + 1)), key=lambda t: abs(t - ref[1]))


def zone_offset(end: bytes, at: int) -> float | None:
    """The UTC offset (seconds east) of a zone written right after a stamp that ends at ``at``;
    None where there is none."""
    zone = ZONE_RE.match(end, at)
    if zone is None:
        return None
    sign, h, mi = zone.groups()
    if sign is None:
        return 0.0
    if int(h) > 14 or int(mi) > 59:
        return None
    return (int(h) * 3600 + int(mi) * 60) * (-1.0 if sign == b"-" else 1.0)


class Context:
    """What the stamps of one end share, each found once, when a stamp first asks for it (searches
    with a literal first: a log whose stamps never ask costs nothing); ``year``: the year of a stamp
    without one where no stamp of the end names its year (None: ``NO_YEAR``)."""

    def __init__(self, end: bytes, year: int | None = None):
        self.end = end
        self.year = year

    @cached_property
    def reference(self) -> tuple[int, float] | None:
        """The year and time of the last stamp of the end that names its year (ISO, or
        ``MM/DD/YYYY``), for the stamps without one."""
        found = [m for rx in (ISO_RE, US_YEAR_RE) for m in rx.finditer(self.end)]
        for m in sorted(found, key=lambda m: m.start(), reverse=True):
            full = TIMESTAMP_RE.match(self.end, m.start() if m.re is ISO_RE else m.start() - 5, m.end() + 1)
            t = _time(full, self) if full is not None and full.end() == m.end() else None
            if t is not None:
                return (_fields(full, self)[0], t)
        return None

    @cached_property
    def day_first(self) -> bool | None:
        """Whether the ``NN/NN`` form reads day first in this end (the rules above); None where it
        holds both a first and a second number over 12, or none of that form (a stamp read in the
        context of an end that does not hold it: the batch reads a log's lines in its head's)."""
        dates = _slash_dates(self.end)
        if not dates:
            return None
        over = (any(int(a) > 12 for a, _, _ in dates), any(int(b) > 12 for _, b, _ in dates))
        if any(over):
            return None if all(over) else over[0]
        return _order(dates, day_first=True) < _order(dates, day_first=False)


def _slash_dates(end: bytes) -> list[tuple[bytes, bytes, bytes | None]]:
    """The (first number, second number, year) of the ``NN/NN`` stamps of ``end``, one for each run
    of stamps of one date, in order: a log runs forward, so the search goes on from the last place
    that date is written (a date or two per end, not a Python step per stamp)."""
    dates: list[tuple[bytes, bytes, bytes | None]] = []
    at = 0
    while (m := SLASH_RE.search(end, at)) is not None:
        dates.append(m.groups())  # type: ignore[arg-type]
        written = end[m.start() - 2:m.end()]
        at = max(m.end(), end.rfind(written) + len(written))
    return dates


def _order(dates: list[tuple[bytes, bytes, bytes | None]], day_first: bool) -> tuple[int, float]:
    """How badly one reading of ``dates`` fits a log: the steps back in time, then the time spanned."""
    days = []
    for a, b, year in dates:
        mo, d = (int(b), int(a)) if day_first else (int(a), int(b))
        if 1 <= mo <= 12 and 1 <= d <= 31:  # (a 00 is no date either way)
            y = NO_YEAR if year is None else int(year) + (2000 if len(year) == 2 else 0)
            days.append(seconds_of(y, mo, d, 0, 0, 0))
    back = sum(later < earlier for earlier, later in zip(days, days[1:]))
    return (back, max(days) - min(days) if days else 0.0)


def may_hold(block: bytes) -> bool:
    """False when no line of ``block`` holds a stamp ``line_time`` reads (one search)."""
    return DATED_RE.search(block) is not None


def line_time(line: bytes, context: Context | None = None) -> Reading | None:
    """The time of the first valid stamp of ``line`` (``Reading``), its order and year those of the
    end ``context`` describes (alone: day first only where it must be, a missing year 2000); None
    where it holds none. A stamp at the line's start is tried first, as one match: it is the one
    ``stamps_in`` finds first (no form holds a colon before its clock), found without its search."""
    m = TIMESTAMP_RE.match(line)
    found = None if m is None else _reading(m, context)
    if found is not None:
        return found
    for m in stamps_in(line):
        found = _reading(m, context)
        if found is not None:
            return found
    return None


def _reading(m: "re.Match[bytes]", context: Context | None) -> Reading | None:
    """A stamp's time, in UTC where a zone follows it (``zone_offset``), and that zone's offset."""
    t = _time(m, context)
    if t is None:
        return None
    offset = zone_offset(m.string, m.end())
    return (t if offset is None else t - offset, offset)


def stamped_backwards(end: bytes) -> Iterator[Stamped]:
    """Each timestamped line of ``end`` (``Stamped``), last line first; a stamp with a zone is read
    in UTC (``zone_offset``). The stamps are found by the regex engine over windows growing back
    from the end (2 KB, 16 KB, 64 KB, all), so the Python work grows with the lines the caller
    visits, not with the bytes kept."""
    context = Context(end)
    hi = len(end)
    for size in WINDOWS + (len(end),):
        lo = max(0, len(end) - size)
        if lo:
            lo = end.find(b"\n", lo) + 1 or hi
        if lo < hi:
            yield from _window_backwards(end, lo, hi, context)
            hi = lo
        if lo == 0:
            return


def _window_backwards(end: bytes, lo: int, hi: int, context: Context) -> Iterator[Stamped]:
    line_start: int = -1
    first: Stamped | None = None
    for m in reversed(list(stamps_in(end, lo, hi))):
        start = end.rfind(b"\n", 0, m.start()) + 1
        if start != line_start and first is not None:
            yield first
            first = None
        line_start = start
        found = _reading(m, context)
        if found is not None:  # the line's first valid stamp wins
            stop = end.find(b"\n", m.end())
            first = (start, len(end) if stop == -1 else stop, *found)
    if first is not None:
        yield first


def readings(a: Stamped, b: Stamped) -> tuple[float, ...]:
    """The seconds from line ``a`` to line ``b``: one figure where both stamps name a zone or neither
    does. From one to the other, where the local one's offset is unknown: first the figure on one
    clock (the local time in the zone the other stamp names), then one for each of ``OFFSETS_S``."""
    step = b[2] - a[2]
    if (a[3] is None) == (b[3] is None):
        return (step,)
    sign, own = (-1.0, a[3]) if b[3] is None else (1.0, b[3])  # local b: b - offset; local a: a - offset
    return (step + sign * own,) + tuple(step + sign * offset for offset in OFFSETS_S)  # type: ignore[operator]


def reading(a: Stamped, b: Stamped, calm_s: float) -> float | None:
    """The seconds from ``a`` to ``b`` to go by (``readings``): across two zones the one clock's,
    unless another offset makes the step no gap (within ``calm_s``) while the one clock makes it
    one, a coincidence no hang is likely to land on (None: it cannot be told), or the one clock puts
    ``b`` first (then the no-gap reading where an offset gives one, else None)."""
    every = readings(a, b)
    clock = every[0]
    if len(every) == 1 or -BACKWARDS_S <= clock <= calm_s:
        return clock
    calm = next((r for r in every[1:] if -BACKWARDS_S <= r <= calm_s), None)
    if clock > 0:
        return None if calm is not None else clock
    return calm


def zone_name(line: Stamped) -> str:
    """The zone a stamped line names: ``UTC``, ``UTC+05:30``."""
    offset = line[3] or 0.0
    return f"UTC{offset_text(offset)}" if offset else "UTC"


def offset_text(offset: float) -> str:
    """An offset from UTC (seconds east) as ISO 8601 writes it: ``+05:30``, ``-08:00``, ``+00:00``."""
    minutes = int(abs(offset)) // 60
    return f"{'-' if offset < 0 else '+'}{minutes // 60:02d}:{minutes % 60:02d}"
