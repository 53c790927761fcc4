"""Timing from the log itself: the cadence of timestamped progress lines and the silence after
the last one (steps every 2 s, then 3 h 50 min of nothing before Slurm's time-limit kill).

Fed from the scan without reading the file again: the scanner keeps the raw end of its input
(``ScanOutput.end``, at most ``scan.limits.END_BYTES``), and only that is measured, once, when the
verdict needs it (no strong diagnosis, or a hang to weigh). Only the timestamps of progress lines
and of the lines after the last one are kept.

Rules:
- a line's time is read by ``stamps.py`` (its layouts, the year of a stamp without one, the order
  of ``NN/NN``, time zones). A step between a stamp with a zone and one without is read on one
  clock unless a zone's offset makes it no gap at all (``stamps.reading``); a silence read on one
  clock says so (``Silence.zone_assumed``), and one that cannot be told is ``TwoZones``, neither a
  hang nor a job at work;
- a progress line is one ``PROGRESS_RE`` matches (a tqdm bar, ``step 12``, ``epoch 3``, ``loss=``);
- the cadence is the median step between the last ``CADENCE_LINES`` timestamped progress lines
  (the end is read backwards from its last line, and no further than that), steps between a
  stamp with a zone and one without left out;
- a run is steady to its end (``Steady``) where the last timestamped line comes within
  ``STEADY_RATIO`` cadences (or ``STEADY_MIN_S``) of the last progress line: a Slurm time-limit
  kill then found a job still at work, not a hang;
- the silence is the longest stretch without any timestamped line from the last progress line to
  the end, a heartbeat not counting as output: a line after the last progress line whose text
  (its stamp aside) comes back word for word ``HEARTBEAT_REPEATS`` times or more (a monitor's
  ``GPU util 0%``, a retry loop's warning, Horovod's stalled-ranks notice) says the process is
  alive, not that it works; the end's last stamped line still ends the stretch. It counts
  (``Silence``) when at least ``MIN_PROGRESS`` progress lines carried a timestamp, the silence
  lasts ``MIN_SILENCE_S`` or more and at least ``MIN_RATIO`` cadences;
  alone it says hang only where something after the last progress line says the run was stopped
  or failed (``Silence.stopped``: a kill, a watchdog, a traceback), not where the program ended
  the quiet itself and finished (a final evaluation, an upload, then "Done.").
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import islice

from ..normalize import lines as normalize
from .candidates import PROGRESS_RE
from .stamps import (BACKWARDS_S, TIMESTAMP_RE, ZONE_RE, Stamped, reading, readings, stamped_backwards, stamps_in,
                     zone_name)

PROGRESS_B = re.compile(PROGRESS_RE.pattern.encode(), re.IGNORECASE)
MIN_PROGRESS = 5
MIN_SILENCE_S = 600.0
MIN_RATIO = 30.0
CADENCE_LINES = 50
#: a last timestamped line within this many cadences (or seconds) of the last progress line ends a
#: steady run (``steady_end``): the job was killed at work, not after it stopped
STEADY_RATIO = 3.0
STEADY_MIN_S = 60.0
MAX_SPAN_S = 60 * 86400.0  # a silence longer than this is two runs in one file, not a hang
#: what says a run was stopped from outside, or failed, after its last progress line: a kill, a
#: signal, a scheduler's cancel, a watchdog or timeout, an interrupt, a traceback or an error.
#: A silence followed by none of it (a final evaluation, an upload, then "Done.") is a long pause
STOPPED_B = re.compile(rb"kill|cancel|terminat|sig(?:term|int|kill|usr|abrt)|signal|abort|time ?limit|timed? ?out"
                       rb"|watchdog|preempt|interrupt|traceback|error|exception|fatal|exited with (?:code|status) [1-9]"
                       rb"|no batch|stuck|hang|froze|\^C", re.IGNORECASE)
#: a line after the last progress line that comes back word for word (its stamp aside) this many
#: times is a heartbeat, not output: it does not break a silence
HEARTBEAT_REPEATS = 3
FRACTION_B = re.compile(rb"[.,]\d{1,9}")
#: how much a measured silence weighs as evidence of a hang (class E), alone or beside E hits
WEIGHT = 0.6


@dataclass(frozen=True)
class Silence:
    """The stop: the last progress line, where the silence starts and ends, and the figures."""

    last_line: int
    last_text: str
    quiet_from: int
    end_line: int
    end_text: str
    seconds: float
    cadence: float
    progress_lines: int
    weight: float = WEIGHT
    #: whether anything after the last progress line says the run was stopped from outside or
    #: failed (``STOPPED_B``); a quiet stretch the program itself ended and finished after is no hang
    stopped: bool = True
    #: the silence runs from a stamp with a zone to one without (or back), read on one clock: the
    #: zone the other stamp names (``reading``), given here as ``UTC`` or ``UTC+05:30``
    zone_assumed: str | None = None
    #: heartbeat lines inside the silence (``HEARTBEAT_REPEATS``): how many, and the first one's number
    heartbeats: int = 0
    heartbeat_line: int = 0

    def describe(self) -> str:
        where = "after it" if self.quiet_from == self.last_line else f"from line {self.quiet_from}"
        zones = (f" (one of its ends has no time zone: read as {self.zone_assumed}, like the other)"
                 if self.zone_assumed else "")
        quiet = (f"no output but a repeated line (line {self.heartbeat_line}'s, {self.heartbeats} times: a heartbeat)"
                 if self.heartbeats else "no output")
        return (f"progress every {duration(self.cadence)} (median of the last {self.progress_lines} timestamped "
                f"progress lines) "
                f"up to line {self.last_line}, then {quiet} for {self._silence()} {where} "
                f"until line {self.end_line}{zones}")

    def facts(self) -> dict[str, str]:
        return {"silence": self._silence(), "cadence": duration(self.cadence),
                "last_progress_line": str(self.last_line)}

    def _silence(self) -> str:
        return duration(self.seconds)


@dataclass(frozen=True)
class TwoZones:
    """A quiet stretch after the last progress line that may be a silence, from a stamp with a
    time zone to one without (local time, at an offset the log does not say), or back, whose length
    is an offset a clock keeps (``reading``): it could not be measured, so it says neither that
    the run hung nor that it was at work."""

    last_line: int
    zoned_line: int
    local_line: int

    def describe(self) -> str:
        return (f"the times are in two zones: line {self.zoned_line} names its zone, line {self.local_line} is in "
                "local time with no zone, and the step between them is as long as a zone's offset from UTC, so the "
                f"silence after the last progress line (line {self.last_line}) could not be measured: the timing "
                "shows neither a hang nor a job still at work")


def duration(seconds: float) -> str:
    """``3 h 50 min``, ``12 min 5 s``, ``2.0 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    s = int(round(seconds))
    h, m, sec = s // 3600, s % 3600 // 60, s % 60
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    return f"{m} min {sec} s" if sec else f"{m} min"


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _too_few_stamps(end: bytes) -> bool:
    """Fewer stamps than the progress lines a cadence needs: nothing to measure. One forward
    search; a log stamped only in its header would otherwise be walked back window by window."""
    return not end or len(list(islice(stamps_in(end), MIN_PROGRESS))) < MIN_PROGRESS


def measure(end: bytes, first_line: int) -> Silence | None:
    """The silence after the last timestamped progress line in ``end`` (the raw end of the input,
    whose first line is number ``first_line``), or None when there is none worth citing."""
    return timing(end, first_line)[0]


def timing(end: bytes, first_line: int) -> tuple[Silence | None, TwoZones | None]:
    """``measure``'s silence, or, where none is sure but a step between stamps in two zones could be
    one, that stretch (``TwoZones``); (None, None) when there is nothing worth citing."""
    if _too_few_stamps(end):
        return None, None
    after: list[Stamped] = []  # stamped lines after the last progress line, last first
    beats: set[int] = set()  # the heartbeats among them (their starts)
    progress: list[Stamped] = []  # the last CADENCE_LINES progress lines, last first
    quiet: list[Stamped] = []  # the last progress line and what followed, in order
    for line in stamped_backwards(end):
        if PROGRESS_B.search(end, line[0], line[1]):
            progress.append(line)
            if len(progress) == 1:
                # the silence can be no longer by now (the cadence can only rule it out): most logs
                # end in progress or in a short pause, and need no more lines than this
                beats = heartbeats(end, after)
                quiet = [line] + [a for a in after[::-1] if a is after[0] or a[0] not in beats]
                steps = [readings(a, b) for a, b in zip(quiet, quiet[1:])]
                if max((max(r) for r in steps), default=0.0) < MIN_SILENCE_S or max(
                        (r[0] for r in steps), default=0.0) > MAX_SPAN_S:
                    return None, None
            if len(progress) == CADENCE_LINES:
                break
        elif not progress:
            after.append(line)
    if len(progress) < MIN_PROGRESS:
        return None, None
    cadence = _cadence(progress)
    least, calm = least_silence(cadence), max(STEADY_RATIO * cadence, STEADY_MIN_S)
    best, at, untold = 0.0, 0, None
    for k, (a, b) in enumerate(zip(quiet, quiet[1:])):
        seconds = reading(a, b, calm)
        if seconds is None:
            untold = untold if untold is not None or max(readings(a, b)) < least else k
        elif seconds > best:
            best, at = seconds, k
    number, text = _number(end, first_line), _text(end)
    last = progress[0]
    if best < least:
        if untold is None:
            return None, None
        zoned, local = sorted(quiet[untold:untold + 2], key=lambda line: line[3] is None)
        return None, TwoZones(last_line=number(last), zoned_line=number(zoned), local_line=number(local))
    start, stop = quiet[at], quiet[at + 1]
    crossed = (start[3] is None) != (stop[3] is None)
    inside = sorted(b for b in beats if start[0] < b <= stop[0])
    return Silence(last_line=number(last), last_text=text(last), quiet_from=number(start),
                   end_line=number(stop), end_text=text(stop), seconds=best, cadence=cadence,
                   progress_lines=len(progress), stopped=STOPPED_B.search(end, last[1]) is not None,
                   zone_assumed=zone_name(start if start[3] is not None else stop) if crossed else None,
                   heartbeats=len(inside), heartbeat_line=first_line + end.count(b"\n", 0, inside[0]) if inside else 0
                   ), None


def heartbeats(end: bytes, lines: list[Stamped]) -> set[int]:
    """The starts of the ``lines`` whose text, stamp aside, comes back word for word at least
    ``HEARTBEAT_REPEATS`` times among them."""
    if len(lines) < HEARTBEAT_REPEATS:
        return set()
    keys = [_unstamped(end, line) for line in lines]
    counts = Counter(keys)
    return {line[0] for line, key in zip(lines, keys) if key and counts[key] >= HEARTBEAT_REPEATS}


def _unstamped(end: bytes, line: Stamped) -> bytes:
    """A stamped line's bytes without its first stamp (with the fraction of a second and the
    zone after it), surrounding blanks stripped."""
    text = end[line[0]:line[1]]
    m = TIMESTAMP_RE.search(text)
    if m is None:
        return text.strip()
    zone = ZONE_RE.match(text, m.end())
    stop = zone.end() if zone else m.end()
    fraction = FRACTION_B.match(text, stop)
    return (text[:m.start()] + text[fraction.end() if fraction else stop:]).strip()


def _cadence(progress: list[Stamped]) -> float:
    """The median step between progress lines (given last first) both stamped with a zone or both
    not, at least 1 s."""
    lines = progress[::-1]
    steps = [b[2] - a[2] for a, b in zip(lines, lines[1:]) if (a[3] is None) == (b[3] is None) and b[2] >= a[2]]
    return cadence_of(steps)


def cadence_of(steps: list[float]) -> float:
    """The cadence of progress: the median of ``steps`` (seconds between progress lines, or between
    their arrivals: ``stall.py``), at least 1 s."""
    return max(median(steps) if steps else 0.0, 1.0)


def least_silence(cadence: float) -> float:
    """How long a silence after progress at ``cadence`` must last to count: ``MIN_SILENCE_S``, and
    at least ``MIN_RATIO`` cadences."""
    return max(MIN_SILENCE_S, MIN_RATIO * cadence)


def _number(end: bytes, first_line: int) -> Callable[[Stamped], int]:
    return lambda line: first_line + end.count(b"\n", 0, line[0])


def _text(end: bytes) -> Callable[[Stamped], str]:
    return lambda line: normalize.clean(end[line[0]:line[1]])[:600]


@dataclass(frozen=True)
class Steady:
    """Progress kept its cadence up to the last timestamped line: the job was still working when
    that line (a scheduler's kill) came."""

    last_line: int
    end_line: int
    end_text: str
    seconds: float
    cadence: float

    def describe(self) -> str:
        return (f"progress every {duration(self.cadence)} up to line {self.last_line}, "
                f"{duration(self.seconds)} before line {self.end_line}")


def steady_end(end: bytes, first_line: int) -> Steady | None:
    """``Steady`` where at least ``MIN_PROGRESS`` timestamped progress lines keep a cadence up to
    the last timestamped line of ``end``: no more than ``STEADY_RATIO`` cadences (or
    ``STEADY_MIN_S``) from the last of them to it (across two zones as ``reading`` reads the step);
    else None (a pause, or nothing to measure)."""
    if _too_few_stamps(end):
        return None
    progress: list[Stamped] = []
    stop = None
    for line in stamped_backwards(end):
        stop = stop or line
        if PROGRESS_B.search(end, line[0], line[1]):
            progress.append(line)
            if len(progress) == 1 and min(readings(line, stop)) > MIN_SILENCE_S:
                return None
            if len(progress) == CADENCE_LINES:
                break
    if len(progress) < MIN_PROGRESS or stop is None:
        return None
    cadence = _cadence(progress)
    calm = max(STEADY_RATIO * cadence, STEADY_MIN_S)
    span = reading(progress[0], stop, calm)
    if span is None or not -BACKWARDS_S <= span <= calm:
        return None
    span = max(span, 0.0)
    return Steady(last_line=_number(end, first_line)(progress[0]), end_line=_number(end, first_line)(stop),
                  end_text=_text(end)(stop), seconds=span, cadence=cadence)
