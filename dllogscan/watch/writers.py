"""The processes on this machine that hold the watched file open for writing, found in ``/proc``
(Linux), for ``watch`` without ``--pid``: the job, whose end ends the watch as ``--pid``'s does.

Rules:
- a writer is a process, not this one, with a descriptor (``/proc/PID/fd/N``) that resolves to the
  file's device and inode (``os.stat`` follows the link: a renamed file, or one watched through a
  symlink, still matches; paths are never compared as text) and whose ``/proc/PID/fdinfo/N``
  ``flags`` open it write-only or read-write. A process that cannot be read (another user's, one
  that ended meanwhile) is skipped. A job on another node (NFS, a Slurm log written elsewhere)
  has none here, and the watch goes on as without them;
- the cost is one ``stat`` per descriptor open on the machine, 4 to 16 us: 2 to 8 ms a pass over
  80 to 90 processes where it was measured (README, "Watch a running job"). A pass reads the
  processes listed when it began until its time budget is spent, and the next one goes on where
  it stopped: ``START_BUDGET_S`` at start, at a poll ``POLL_BUDGET_S`` or ``POLL_SHARE`` of the
  interval, the less. However many processes the machine runs, no poll is
  slowed by more than about 20 ms, nor the watch's time spent on passes by more than 2 %; a
  machine that needs more takes several polls for a pass;
- when: at start; at each poll while none is known (a job started after the watch, a file created
  later) or a pass is under way; once some are known, a new pass every ``RELOOK_POLLS`` polls (a
  second job appending to the same log, DataLoader workers forked once the job runs: found within
  seconds, for a tenth of the cost); once the job has ended, one last pass after the ``settle``
  time, as at start (the next command of a script that appends to the same log takes over, and so
  does a job that a wrapper restarted by then; a slower restart is taken for the end: ``--pid``
  the wrapper's). A known writer costs a poll one ``process.alive`` (about 20 us);
- the job's writers: a writer sighted is taken for the job's when, an ``interval`` or more later,
  it still runs and holds the file, or when it has exited and the file gained more than one line
  after it was sighted (a job that failed at once; the lines are the file's, whoever wrote them).
  One that exits, or lets the file go, with one line or none (``echo line >> train.log`` from
  another shell) is forgotten: its end is not the job's, and the watch goes on as before it;
- a relay (``data/relays.toml``: ``tee``, ``ts``, ``grep`` ... by name, its standard input a pipe)
  passes the job's output on into the file: the processes that hold that pipe open for writing are
  looked for as the file's writers are (the same passes, told apart the same way), and once some
  are the job's the relay's own life no longer counts: it lasts as long as anything holds the pipe,
  a leaked worker included;
- the end: every process of the job has exited, or those left are orphans: a writer whose parent,
  when it was sighted, was a writer that has exited since (the kernel gave it to init or to a
  subreaper), or a writer such an orphan started; a DataLoader worker that outlived its main
  process, the inherited log still open. The job has ended, the orphans named (a leak to look
  into), unless the file grows in the ``settle`` time after: then they are the job's, and their
  own exit ends it. A job that starts its successor and exits (a launcher) is taken for ended if
  the successor writes nothing for that ``settle`` time (``--pid`` then).
"""
from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable

from ..core.paths import DATA_DIR, data_document
from ..core.printable import escape
from .process import PROC, Process, alive, identify

RELAYS = DATA_DIR / "relays.toml"

START_BUDGET_S = 1.0
#: a poll's part of a pass: at most this long, and this share of the interval between polls
POLL_BUDGET_S = 0.02
POLL_SHARE = 0.02
#: once writers are known, a new pass begins every this many polls
RELOOK_POLLS = 10
#: the most bytes read to count the lines a writer that has exited left
COUNT_BYTES = 1 << 16
#: the most writers a line names (DataLoader workers inherit the job's standard output)
NAMED = 8


def listing(processes: Iterable[Process], most: int = NAMED) -> str:
    """``4242 (pt_main_thread), 4250 (pt_data_worker)``: the first ``most``, then how many more."""
    every = list(processes)
    head = ", ".join(p.label() for p in every[:most])
    return head + (f" and {len(every) - most} more" if len(every) > most else "")


@lru_cache(maxsize=1)
def relay_names() -> frozenset[str]:
    """The command names of programs that pass a job's output on into the log (``RELAYS``)."""
    return frozenset(data_document(RELAYS)["names"])


def _flags(fdinfo: str) -> int | None:
    """The ``flags:`` of an fdinfo file (octal), None where it cannot be read."""
    try:
        with open(fdinfo, "rb") as fh:
            text = fh.read(4096)
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(b"flags:"):
            try:
                return int(line[6:].strip(), 8)
            except ValueError:
                return None
    return None


class Finder:
    """Passes over ``proc`` for the writers of ``path``, each resumable (the rules above)."""

    def __init__(self, path: str, proc: Path = PROC, own: int | None = None,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.path, self.proc, self.clock = path, proc, clock
        self.own = str(os.getpid() if own is None else own)
        self.left: list[str] = []  # the pids the pass has still to read, the next last
        self.key = (0, 0)  # the file's device and inode when the pass began
        self.pipes: dict[int, tuple[int, int]] = {}  # a relay's pid -> the pipe it reads, its writers looked for

    @staticmethod
    def possible(proc: Path = PROC) -> bool:
        """Whether this system has a ``/proc`` to look in."""
        return os.path.isdir(os.path.join(proc, "self", "fd"))

    def look(self, budget: float, anew: bool = False) -> list[Process]:
        """Go on with the pass (begin one where none is under way, or ``anew``) for about
        ``budget`` seconds, at least one process: the writers it found meanwhile."""
        deadline, found = self.clock() + budget, []
        if (anew or not self.left) and not self._begin():
            return []
        while self.left:
            pid = self.left.pop()
            if self._writes(pid):
                found.append(identify(int(pid), self.proc))
            if self.clock() >= deadline:
                break
        return found

    def _begin(self) -> bool:
        try:
            st = os.stat(self.path)
            pids = [name for name in os.listdir(self.proc) if name.isdigit() and name != self.own]
        except OSError:
            return False  # no file yet, or no /proc
        self.key = (st.st_dev, st.st_ino)
        self.left = sorted(pids, key=int, reverse=True)
        return True

    def where(self) -> tuple[int, int, int] | None:
        """The file's device, inode and size now; None where it cannot be read."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_dev, st.st_ino, st.st_size

    def holds(self, pid: int, pipes: bool = True) -> bool:
        """Whether ``pid`` holds the file (as it is now), or (``pipes``) a relay's pipe, open for writing."""
        now = self.where()
        return now is not None and self._writes(str(pid), now[:2], pipes)

    def relay(self, process: Process) -> bool:
        """Whether ``process`` is a relay (``RELAYS``) reading a pipe, whose writers are then looked
        for with the file's."""
        if process.name not in relay_names():
            return False
        try:
            st = os.stat(f"{self.proc}/{process.pid}/fd/0")
        except OSError:
            return False
        if not stat.S_ISFIFO(st.st_mode):
            return False
        self.pipes[process.pid] = (st.st_dev, st.st_ino)
        return True

    def _writes(self, pid: str, key: tuple[int, int] | None = None, pipes: bool = True) -> bool:
        """Whether ``pid`` holds the file (``key``: the one the pass began on) or (``pipes``) a
        relay's pipe open for writing; False where it cannot be read."""
        keys = {key or self.key, *(self.pipes.values() if pipes else ())}
        fds = f"{self.proc}/{pid}/fd"
        try:
            names = os.listdir(fds)
        except OSError:
            return False
        for name in names:
            try:
                st = os.stat(f"{fds}/{name}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in keys:
                flags = _flags(f"{self.proc}/{pid}/fdinfo/{name}")
                if flags is not None and flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                    return True
        return False


def lines_since(path: str, mark: tuple[int, int, int] | None, most: int = 2) -> int:
    """How many lines (up to ``most``) the file gained after ``mark`` (``Finder.where``), in its
    next ``COUNT_BYTES``: 0 where it was replaced, truncated or cannot be read."""
    try:
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            if mark is None or (st.st_dev, st.st_ino) != mark[:2] or st.st_size < mark[2]:
                return 0
            fh.seek(mark[2])
            return min(fh.read(COUNT_BYTES).count(b"\n"), most)
    except OSError:
        return 0


@dataclass(frozen=True)
class Sighting:
    """A writer seen, not yet told apart: when, and where the file ended then."""

    process: Process
    at: float
    mark: tuple[int, int, int] | None


class Job:
    """The processes whose end ends the watch: ``--pid``'s, or the file's writers (``finder`` None:
    not looked for), told apart and looked for as the rules above say at polls ``interval`` seconds
    apart. ``say`` is told of each taken for the job's, and of orphans that write on."""

    def __init__(self, pid: int | None, finder: Finder | None, say: Callable[[str], None],
                 interval: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.finder, self.say, self.interval, self.clock = finder, say, interval, clock
        self.budget = min(POLL_BUDGET_S, POLL_SHARE * interval)
        self.proc = PROC if finder is None else finder.proc
        self.processes: list[Process] = [] if pid is None else [identify(pid, self.proc)]
        self.sighted: list[Sighting] = []
        self.polls = 0
        #: once the job has ended: its writers that still run, all children it left behind
        self.orphans: tuple[Process, ...] = ()
        self.adopted: set[int] = set()  # orphans that wrote after the job ended: the job's own
        self.mark: tuple[int, int, int] | None = None  # where the file ended when orphans were left
        self._look(START_BUDGET_S)

    @property
    def writers(self) -> tuple[Process, ...]:
        return tuple(self.processes) if self.finder is not None else ()

    @property
    def main(self) -> Process | None:
        """The job's own process, the one to dump while it hangs: the ``--pid`` given, else the
        first writer (relays aside) whose parent is none of the writers (its workers, which
        inherit its output, are its children); None while no writer is known."""
        if self.finder is None:
            return self.processes[0] if self.processes else None
        relays = {p.pid for p in self.relays}
        own = [p for p in self.processes if p.pid not in relays]
        pids = {p.pid for p in own}
        return next((p for p in own if p.parent not in pids), None)

    @property
    def relays(self) -> tuple[Process, ...]:
        """The writers that pass on the output of others of the job (a ``tee`` whose upstream was
        found), whose own life then does not count."""
        pipes = self.finder.pipes if self.finder is not None else {}
        if all(p.pid in pipes for p in self.processes):
            return ()  # no upstream found (another user's, or gone before it was seen): the relay is the job
        return tuple(p for p in self.processes if p.pid in pipes)

    def _look(self, budget: float, anew: bool = False) -> bool:
        """A pass's next part; whether it sighted a writer neither known nor sighted yet."""
        if self.finder is None:
            return False
        known = self.processes + [s.process for s in self.sighted]
        new = [p for p in self.finder.look(budget, anew) if p not in known]
        if new:
            at, mark = self.clock(), self.finder.where()
            self.sighted += [Sighting(p, at, mark) for p in new]
        return bool(new)

    def _tell_apart(self, now: float) -> None:
        """Take for the job's each sighted writer that still holds the file an ``interval`` or more
        after it was sighted, or that has exited once the file gained more than one line after it
        was; forget the others that have gone or let the file go."""
        assert self.finder is not None
        taken, waiting = [], []
        for seen in self.sighted:
            p = seen.process
            running = alive(p.pid, p.start, self.proc)
            if running and self.finder.holds(p.pid):
                (taken if now - seen.at >= self.interval else waiting).append(p)
            elif not running and lines_since(self.finder.path, seen.mark) > 1:
                taken.append(p)
        self.sighted = [s for s in self.sighted if s.process in waiting]
        if taken:
            self.processes += taken
            relays = [p for p in self.processes if p.pid in self.finder.pipes]
            piped = relays and not any(p in relays or self.finder.holds(p.pid, pipes=False) for p in taken)
            self.say(f"writers of {escape(self.finder.path)}{' through ' + listing(relays) if piped else ''}: "
                     f"{listing(taken)}; the watch ends when they have exited (--no-writers: not)")
            if [p for p in taken if self.finder.relay(p)]:  # the job is upstream: look for it now
                self._look(self.budget, anew=True)

    def _orphaned(self, running: list[Process]) -> tuple[Process, ...]:
        """Those of ``running`` whose parent, when they were seen, was a writer that has gone since
        (the kernel gave them to init or a subreaper), or one of these: the children a job left."""
        ended = {p.pid for p in self.processes if p not in running}
        left = [p for p in running if p.pid not in self.adopted]
        orphans: list[Process] = []
        while more := [p for p in left if p.parent in ended and p not in orphans]:
            orphans += more
            ended |= {p.pid for p in more}
        return tuple(orphans)

    def gone(self) -> bool:
        """A poll: whether the job has ended, all its processes gone but orphans (``orphans``).
        False while none is known, or a writer sighted is still to be told apart."""
        if self.sighted:
            self._tell_apart(self.clock())
        self.polls += 1
        if not self.processes or self.polls % RELOOK_POLLS == 0 or (self.finder is not None and self.finder.left):
            self._look(self.budget)
        if not self.processes or self.sighted:
            return False
        relays = self.relays
        running = [p for p in self.processes if p not in relays and alive(p.pid, p.start, self.proc)]
        self.orphans = self._orphaned(running) if self.finder is not None else ()
        if self.orphans and len(self.orphans) == len(running):
            self.mark = self.finder.where() if self.finder is not None else None
        return len(self.orphans) == len(running)

    def taken_over(self) -> bool:
        """Once the job has ended: whether it goes on, as a last whole pass sights a new writer (to be
        told apart at the next polls), or the orphans it left wrote to the file since (they are the
        job's then, and their end ends it)."""
        if self._look(START_BUDGET_S, anew=True):
            return True
        if not self.orphans or self.finder is None or self.finder.where() == self.mark:
            return False
        self.say(f"{listing(self.orphans)}, left running when their parent exited, wrote to "
                 f"{escape(self.finder.path)} since: the watch ends when they have exited")
        self.adopted |= {p.pid for p in self.orphans}
        self.orphans = ()
        return True
