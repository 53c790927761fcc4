"""Progress as it arrives, for ``watch``: the live side of ``cadence.py``. There the timestamps say
when progress lines were written, after the fact; here the clock says when they arrived while the
file was followed, and a stall is a silence still going on.

Rules:
- a poll of the file that brings progress lines (``candidates.PROGRESS_RE``) is an arrival; polls
  in a row that each bring some are one burst. A program whose standard output is a file or a
  pipe writes it block-buffered (Python: 8 KiB at a time), so its progress comes as dozens of lines
  at once, then nothing until the buffer fills again;
- the cadence is the median step between the starts of the last ``CADENCE_LINES`` bursts
  (``cadence.cadence_of``). The lines of one burst make no steps: a burst pattern has the cadence
  of its bursts, not a median of zeros that would leave only the floor;
- a stall is a silence since the last arrival of ``cadence.least_silence`` of that cadence (10 min,
  and at least 30 cadences; the 10 min alone while no step is known), or of a fixed threshold
  (``--stall``). Buffered output that fills its buffer within 10 min never reaches the floor;
  one that takes longer is covered from its first measured step on;
- lines read before the watch (the end of the file, or all of it with ``--from-start``) arrived
  when the file was last written (its modification time): their progress starts the clock and
  counts as a burst, so the first live burst makes a step from it;
- a stall is reported once, and none after a failure was reported (a dead worker explains the
  stop, as in ``candidates.with_silence``); progress arriving again re-arms it, and the step over it is
  no step of the cadence (a stall that ended would otherwise lift the threshold 30 times over it);
- none after a line that says the run finished (``watch/ends.py``): the silence that reaches the
  threshold after it, and after the last progress, is the run's end (``ended``). Progress that
  arrives more than ``FINISH_GRACE_S`` after that line, on a later line, is a new run (a second
  fit) and arms stalls again; sooner, it is the run's closing output (Lightning and the Hugging
  Face Trainer draw their progress bar a last time after it). A file read at start arrives all at
  once: its progress after such a line is that run's. A new file (replaced, truncated) forgets it.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .cadence import CADENCE_LINES, WEIGHT, cadence_of, duration, least_silence

#: a poll that brought at least this many progress lines shows block-buffered output (the note says so)
BURST_LINES = 10
#: progress this long after a line that says the run finished is a new run's; sooner, the run's
#: closing output (the Hugging Face Trainer logs its line, may load the best checkpoint, then closes
#: its bar)
FINISH_GRACE_S = 30.0


@dataclass(frozen=True)
class Finish:
    """A line that says the run finished, and when it arrived (clock seconds)."""

    line: int
    at: float


@dataclass(frozen=True)
class Stall:
    """Progress stopped arriving: the last progress line, the last line read, and the figures.
    ``candidates.with_silence`` weighs it as it weighs a ``cadence.Silence``."""

    last_line: int
    last_text: str
    end_line: int
    end_text: str
    seconds: float
    threshold: float
    cadence: float | None
    steps: int
    burst: int
    polls: int = 0  # polls that brought progress while watched
    #: the file ended mid-line (not a progress bar's redraw): the program writes its output in blocks,
    #: and what it printed last may still sit in its buffer
    midline: bool = False
    weight: float = WEIGHT
    stopped: bool = True  # nothing arrives: the run is not going on by itself

    def describe(self) -> str:
        if self.cadence is None:
            pace = ("progress had come at every poll until then" if self.polls > 1 else
                    "too few arrivals to measure their cadence")
        else:
            pace = f"progress had arrived every {duration(self.cadence)} (median of the last {self.steps} steps)"
        text = (f"no progress line for {duration(self.seconds)} after line {self.last_line} while the file was "
                f"watched (threshold {duration(self.threshold)}; {pace})")
        if self.end_line > self.last_line:
            text += f"; other output went on until line {self.end_line}"
        if self.burst >= BURST_LINES or self.midline:
            shown = f"progress came in bursts of up to {self.burst} lines" if self.burst >= BURST_LINES else \
                "the file ends mid-line"
            text += (f"; {shown}: the program's output is block-buffered, so its last lines may not be written "
                     "yet (python -u or PYTHONUNBUFFERED=1 makes them arrive as printed)")
        return text

    def facts(self) -> dict[str, str]:
        facts = {"silence": duration(self.seconds), "last_progress_line": str(self.last_line),
                 "stall_threshold": duration(self.threshold)}
        if self.cadence is not None:
            facts["cadence"] = duration(self.cadence)
        return facts


class Arrivals:
    """When progress arrived, poll by poll (the rules above); ``stalled`` says when it stopped."""

    def __init__(self, fixed: float | None = None) -> None:
        self.fixed = fixed
        self.starts: deque[tuple[float, bool]] = deque(maxlen=CADENCE_LINES + 1)  # (when, after a stall)
        self.at: float | None = None
        self.in_burst = False
        self.last: tuple[int, str] | None = None
        self.end: tuple[int, str] | None = None
        self.burst = 0
        self.polls = 0
        self.reported = False
        self.finish: Finish | None = None

    def backlog(self, written: float, line: int, text: str) -> None:
        """Progress read before the watch, in a file last written at ``written`` (clock seconds):
        one burst however many pieces it is read in."""
        if self.at is not None and written < self.at:
            return  # a replaced file's lines, older than what already arrived
        if not self.starts or written > self.starts[-1][0]:
            self.starts.append((written, False))
        self.at, self.last, self.in_burst, self.reported = written, (line, text), False, False
        self._resumed(written, line)

    def poll(self, now: float, progress: tuple[int, str, int] | None) -> None:
        """One poll: the last progress line it brought (number, text, how many it brought), or None."""
        if progress is None:
            self.in_burst = False
            return
        if not self.in_burst:
            self.starts.append((now, self.reported))
        line, text, count = progress
        self.at, self.last, self.in_burst, self.reported = now, (line, text), True, False
        self.burst, self.polls = max(self.burst, count), self.polls + 1
        self._resumed(now, line)

    def finished(self, at: float, line: int) -> None:
        """A line that says the run finished arrived at ``at``: no stall after it (the rules above)."""
        self.finish = Finish(line, at)

    def renumbered(self) -> None:
        """Lines are numbered from 1 again (a new file): a line that said the run finished was the
        old file's, and stalls are armed again."""
        self.finish = None

    def _resumed(self, at: float, line: int) -> None:
        """Progress on ``line`` arrived at ``at``: a new run's, past the finish's grace."""
        if self.finish is not None and line > self.finish.line and at - self.finish.at > FINISH_GRACE_S:
            self.finish = None

    def ended(self, now: float) -> Finish | None:
        """The line that says the run finished, once the silence after it and after the last
        progress has reached the threshold (where a stall would be reported)."""
        if self.finish is None:
            return None
        since = self.finish.at if self.at is None else max(self.at, self.finish.at)
        return self.finish if now - since >= self.threshold() else None

    def explained(self) -> None:
        """A failure was reported: no stall until progress arrives again."""
        self.reported = True

    def saw(self, line: int, text: str) -> None:
        """The last line read so far (a stall cites it where output went on after the progress)."""
        self.end = (line, text)

    def steps(self) -> list[float]:
        starts = list(self.starts)
        return [b - a for (a, _), (b, resumed) in zip(starts, starts[1:]) if not resumed]

    def threshold(self) -> float:
        return self.fixed if self.fixed is not None else least_silence(cadence_of(self.steps()))

    def stalled(self, now: float, midline: bool = False) -> Stall | None:
        """The stall, the first time the silence since the last arrival reaches the threshold
        (``midline``: the file ends mid-line, a progress bar's redraw aside)."""
        if self.at is None or self.last is None or self.reported or self.finish is not None:
            return None
        silence, threshold = now - self.at, self.threshold()
        if silence < threshold:
            return None
        self.reported = True
        steps = self.steps()
        end = self.end if self.end is not None and self.end[0] > self.last[0] else self.last
        return Stall(last_line=self.last[0], last_text=self.last[1], end_line=end[0], end_text=end[1],
                     seconds=silence, threshold=threshold, cadence=cadence_of(steps) if steps else None,
                     steps=len(steps), burst=self.burst, polls=self.polls, midline=midline)
