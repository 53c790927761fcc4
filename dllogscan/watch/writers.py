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
- when: at start; at each poll while none has been found (a job started after the watch, a file
  created later); once all that were found have gone, one last pass, as at start (the next
  command of a script that appends to the same log takes over). Once some are known, no pass
  runs, and a poll asks only whether they still run (``process.alive``, about 20 us each).
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, Iterable

from ..core.printable import escape
from .process import PROC, Process, alive, identify

START_BUDGET_S = 1.0
#: a poll's part of a pass: at most this long, and this share of the interval between polls
POLL_BUDGET_S = 0.02
POLL_SHARE = 0.02
#: the most writers a line names (DataLoader workers inherit the job's standard output)
NAMED = 8


def listing(processes: Iterable[Process], most: int = NAMED) -> str:
    """``4242 (pt_main_thread), 4250 (pt_data_worker)``: the first ``most``, then how many more."""
    every = list(processes)
    head = ", ".join(p.label() for p in every[:most])
    return head + (f" and {len(every) - most} more" if len(every) > most else "")


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

    def _writes(self, pid: str) -> bool:
        """Whether ``pid`` holds the file open for writing; False where it cannot be read."""
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
            if (st.st_dev, st.st_ino) == self.key:
                flags = _flags(f"{self.proc}/{pid}/fdinfo/{name}")
                if flags is not None and flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
                    return True
        return False


class Job:
    """The processes whose end ends the watch: ``--pid``'s, or the file's writers, looked for as
    the rules above say (``finder`` None: not looked for) between polls ``interval`` seconds
    apart. ``say`` is told of each found."""

    def __init__(self, pid: int | None, finder: Finder | None, say: Callable[[str], None],
                 interval: float = 1.0) -> None:
        self.finder, self.say = finder, say
        self.budget = min(POLL_BUDGET_S, POLL_SHARE * interval)
        self.proc = PROC if finder is None else finder.proc
        self.processes: list[Process] = [] if pid is None else [identify(pid, self.proc)]
        self._look(START_BUDGET_S)

    @property
    def writers(self) -> tuple[Process, ...]:
        return tuple(self.processes) if self.finder is not None else ()

    def _look(self, budget: float, anew: bool = False) -> bool:
        """A pass's next part; whether it found a writer not known yet."""
        if self.finder is None:
            return False
        new = [p for p in self.finder.look(budget, anew) if p not in self.processes]
        if new:
            self.processes += new
            self.say(f"writers of {escape(self.finder.path)}: {listing(new)}; the watch ends when they have exited "
                     "(--no-writers: not)")
        return bool(new)

    def gone(self) -> bool:
        """Whether all the processes have gone; False while none is known (a pass goes on then)."""
        if not self.processes:
            self._look(self.budget)
            return False
        return not any(alive(p.pid, p.start, self.proc) for p in self.processes)

    def taken_over(self) -> bool:
        """Once all have gone: whether a last pass finds a new writer."""
        return self._look(START_BUDGET_S, anew=True)
