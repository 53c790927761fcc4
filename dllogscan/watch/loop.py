"""The watch loop: poll the file, keep a window of its last lines, decide when a keyword has
settled, measure the progress (the rules: ``watch/__init__.py``)."""
from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from typing import Callable

from ..core.errors import UsageError
from ..core.models import ScanResult
from ..correlate.cadence import PROGRESS_B
from ..correlate.stall import Arrivals, Stall
from ..normalize.encoding import text_encoding
from ..normalize.lines import clean
from ..pipeline import runner as pipeline
from ..scan.limits import MAX_EVIDENCE_CHARS
from ..sources.follow import Follower, Notice, Piece
from ..sources.streams import from_flat
from .ends import ends_pattern
from .events import Event, Outcome
from .process import check_pid
from .writers import Finder, Job

SETTLE_S = 2.0
SETTLE_CAP = 3
WINDOW_BYTES = 1 << 20


@dataclass(frozen=True)
class Options:
    """How to watch: ``stall``, ``timeout``, ``interval`` and ``settle`` in seconds (``stall``
    None: the threshold ``correlate/stall.py`` measures; ``timeout``: the watch's length, None:
    until stopped); ``pid`` the job's process, whose end ends the watch; without it, ``writers``:
    look for the processes that write the file (``writers.py``), whose end ends it as well."""

    interval: float = 1.0
    stall: float | None = None
    keep_going: bool = False
    timeout: float | None = None
    from_start: bool = False
    settle: float = SETTLE_S
    signatures: tuple[str, ...] = ()
    prefilter: str = "auto"
    min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE
    pid: int | None = None
    writers: bool = True


def _text(raw: bytes) -> str:
    return clean(raw)[:MAX_EVIDENCE_CHARS]


def last_line(data: bytes, pattern: re.Pattern[bytes] = PROGRESS_B) -> tuple[int, bytes] | None:
    """The index (among the lines of ``data``) and the bytes of its last line ``pattern`` matches
    (a progress line), found from the end; None when it has none."""
    if not pattern.search(data):
        return None
    end = len(data) - data.endswith(b"\n")
    while True:
        start = data.rfind(b"\n", 0, end) + 1
        if pattern.search(data, start, end):
            return data.count(b"\n", 0, start), data[start:end]
        end = start - 1


def progress_of(piece: Piece) -> tuple[int, str, int] | None:
    """The last progress line a piece brought (its number and text) and how many it brought (live
    pieces only: the backlog makes no bursts), the unfinished line's redrawn segments included (a
    tqdm bar ends its line only when it is done)."""
    found, count = None, 0
    if piece.data and (last := last_line(piece.data)) is not None:
        found = (piece.first_line + last[0], last[1])
        if not piece.backlog:
            count = len({piece.data.rfind(b"\n", 0, m.start()) for m in PROGRESS_B.finditer(piece.data)})
    drawn = [s for s in piece.partial.split(b"\r") if PROGRESS_B.search(s)]
    if drawn:
        found, count = (piece.first_line + piece.count, drawn[-1]), count + len(drawn)
    return None if found is None else (found[0], _text(found[1]), count)


class Watch:
    """One followed file and what is known of it; ``tick`` once per poll."""

    def __init__(self, path: str, options: Options, say: Callable[[str], None],
                 wall: Callable[[], float] = time.time) -> None:
        self.options, self.say, self.wall = options, say, wall
        self.follower = Follower(path, options.from_start, encoding_of=text_encoding)
        self.scanner = pipeline.get_scanner(options.signatures, options.prefilter)
        self.arrivals = Arrivals(options.stall)
        self.source = path
        self.lines_read = 0
        self.ended: str | None = None  # why the watch ends by itself (``Outcome.reason``)
        self.job_pid: int | None = None  # the job's own process, once known (a stall's py-spy dump)
        self._restart()

    def _restart(self) -> None:
        self.arrivals.renumbered()
        self.window, self.window_first = bytearray(), 1
        self.decided_to = 0  # the last line an earlier decision (or the context) covered
        self.pending: list[float] | None = None  # when a keyword came, and the last bytes after it

    def tick(self, now: float) -> list[tuple[str, ScanResult]]:
        """Read what is new, then decide, measure: the reports due (``failure`` or ``stall``)."""
        due = self._read(now)
        if self.pending and (now - self.pending[1] >= self.options.settle
                             or now - self.pending[0] >= self.options.settle * SETTLE_CAP):
            due += self._decide()
        if self.pending:
            return due  # a failure may be settling: it, not a stall, explains the quiet
        if not due and self.arrivals.ended(now) is not None:
            self.ended = "finished"  # the run said it finished: its silence is no stall
            return due
        unfinished = self.follower.unfinished
        stall = self.arrivals.stalled(now, midline=bool(unfinished.strip()) and b"\r" not in unfinished)
        if stall is not None:
            due.append(("stall", self._stalled(stall)))
        return due

    def drain(self, now: float) -> list[tuple[str, ScanResult]]:
        """The last read, once the job's process is gone or at the timeout: what is left, decided at
        once (nothing more will come to settle, or be waited for) and never a stall."""
        due = self._read(now)
        return due + (self._decide() if self.pending else [])

    def _read(self, now: float) -> list[tuple[str, ScanResult]]:
        """Take what is new (its lines, its progress); the decisions a restart forces."""
        due: list[tuple[str, ScanResult]] = []
        live = None
        for item in self.follower.read():
            if isinstance(item, Notice):
                self.say(item.text)
                if item.restart:
                    due += self._decide() if self.pending else []  # what the old file printed last
                    self._restart()
                continue
            due += self._take(item, now)
            # written before it was read: at its mtime
            at = now - max(0.0, self.wall() - self.follower.written) if item.backlog else now
            if item.data and (end := last_line(item.data, ends_pattern())) is not None:
                self.arrivals.finished(at, item.first_line + end[0])
            found = progress_of(item)
            if found is not None and item.backlog:
                self.arrivals.backlog(at, *found[:2])
            elif found is not None:
                live = found if live is None else (found[0], found[1], live[2] + found[2])
        self.arrivals.poll(now, live)
        return due

    def _take(self, piece: Piece, now: float) -> list[tuple[str, ScanResult]]:
        """Keep a piece's lines in the window; a keyword in new ones asks for a decision."""
        due = []
        if piece.data:
            if self.pending and len(self.window) + len(piece.data) > 2 * WINDOW_BYTES:
                due = self._decide(unfinished=False)  # before the lines it waits on leave the window
            self.window += piece.data
            self._trim()
            last = piece.data.rfind(b"\n", 0, len(piece.data) - 1) + 1
            self.arrivals.saw(piece.first_line + piece.count - 1, _text(piece.data[last:-1]))
        if piece.context:
            self.decided_to = piece.first_line + piece.count - 1
            return due
        self.lines_read += piece.count
        if self.pending:
            self.pending[1] = now
        elif self.scanner.prefilter.positions(piece.data + piece.partial, 0, len(piece.data) + len(piece.partial)):
            self.pending = [now, now]
        return due

    def _trim(self) -> None:
        excess = len(self.window) - WINDOW_BYTES
        if excess > 0:
            cut = self.window.find(b"\n", excess) + 1 or len(self.window)
            self.window_first += self.window.count(b"\n", 0, cut)
            del self.window[:cut]

    def _window(self, unfinished: bool = True):
        """The window (and the unfinished line after it) as a source numbered as in the file."""
        data = bytes(self.window) + (self.follower.unfinished if unfinished else b"")
        return from_flat(data, self.source, first_line=self.window_first)

    def _decide(self, unfinished: bool = True) -> list[tuple[str, ScanResult]]:
        """Diagnose the window; report what cites a line no earlier decision read. ``unfinished``:
        with the unfinished line (not while a piece is half taken)."""
        result = pipeline.run(self._window(unfinished), self.scanner, self.options.min_confidence, classifier="off")
        self.pending = None  # only now: a Ctrl-C inside the run leaves the failure to ``drain``
        new = tuple(d for d in result.diagnoses if any(e.line > self.decided_to for e in d.evidence))
        self.decided_to = max(self.decided_to, self.window_first + self.window.count(b"\n") - 1)
        if not new:
            return []
        self.arrivals.explained()
        return [("failure", dataclasses.replace(result, diagnoses=new))]

    def _stalled(self, stall: Stall) -> ScanResult:
        return pipeline.run_stalled(self._window(), self.scanner, stall, self.job_pid)

    def close(self) -> None:
        self.follower.close()


def _poll(state: Watch, job: Job, clock: Callable[[], float],
          sleep: Callable[[float], None]) -> tuple[float, list[tuple[str, ScanResult]]]:
    """One poll: when, and the reports due. Once the job's processes have gone, the last: what is
    left is read after one settle time (its last writes land: a reader of its pipe, ``tee``,
    writes after it) and ``state.ended`` says ``exited``, unless a new writer took over, or the
    children the job left running wrote since (``Job.taken_over``)."""
    now = clock()
    main = job.main
    state.job_pid = main.pid if main is not None else None
    if not job.gone():
        return now, state.tick(now)
    sleep(state.options.settle)
    now = clock()
    if job.taken_over():
        return now, state.tick(now)
    state.ended = "exited"
    return now, state.drain(now)


def watch(path: str, options: Options, report: Callable[[Event], None], say: Callable[[str], None],
          clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """Follow ``path`` until a report (or, with ``keep_going``, until ``timeout`` or Ctrl-C), until
    the silence after a line that says the run finished, or until the process ``options.pid`` (or
    the file's writers) has gone (the rest of the file read once it settled, and reported):
    ``report`` gets each, ``say`` each thing that happened to the file or its writers. SourceError
    for a file that cannot be read or is no text log; UsageError for ``-`` (a pipe has no file to
    follow) and a ``pid`` that runs no process."""
    if path == "-":
        raise UsageError("watch follows a file by its name; write the output to one (... | tee job.log) and "
                         "watch that")
    if options.pid is not None:
        check_pid(options.pid)
    state = Watch(path, options, say)
    finder = Finder(path) if options.pid is None and options.writers and Finder.possible() else None
    job = Job(options.pid, finder, say, options.interval, clock)
    start = clock()
    reports, reason = 0, "interrupted"

    def outcome(why: str) -> Outcome:
        finish = state.arrivals.finish if why == "finished" else None
        return Outcome(path, why, reports, clock() - start, state.lines_read, state.follower.lines, options.pid,
                       finish.line if finish is not None else None, job.writers,
                       job.orphans if why == "exited" else (), job.relays if why == "exited" else ())

    due: list[tuple[str, ScanResult]] = []  # decided, not yet reported (a Ctrl-C may land between)
    try:
        while True:
            now, due = _poll(state, job, clock, sleep)
            if not state.ended and options.timeout is not None and now - start >= options.timeout:
                state.ended = "timeout"
                due += state.drain(now)  # a failure still settling is decided now, not dropped
            while due:
                kind, result = due[0]
                report(Event(kind, result, now - start, state.wall()))
                due.pop(0)
                reports += 1
                if not (options.keep_going or state.ended):
                    return outcome("found")
            if state.ended:
                reason = state.ended
                break
            left = options.interval if options.timeout is None else start + options.timeout - now
            sleep(max(0.0, min(options.interval, left)))
    except KeyboardInterrupt:
        reason = "interrupted"
        try:  # what was decided and not yet reported, then a failure printed last or still
            now = clock()  # settling, decided now, as at the timeout
            left = due + state.drain(now)
            for kind, result in left if options.keep_going else left[:1]:
                report(Event(kind, result, now - start, state.wall()))
                reports += 1
        except KeyboardInterrupt:
            pass  # a second Ctrl-C: stop at once
    finally:
        state.close()
    return outcome(reason)
