"""Whether the job's process still runs, for ``watch --pid`` and the log's writers: ``os.kill(pid,
0)`` asks the kernel (no psutil), ``/proc/PID/stat`` tells a zombie, and a pid reused by a later
process, where there is a ``/proc`` (Linux)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import UsageError
from ..core.printable import escape

PROC = Path("/proc")
#: states of ``/proc/PID/stat`` that are a process gone: a zombie (exited, its parent has not
#: reaped it yet) and a dead one
GONE_STATES = (b"Z", b"X")
#: where field 22 (``starttime``) falls among the fields after the name, which start at field 3
START_FIELD = 22 - 3


@dataclass(frozen=True)
class Process:
    """A process as it was when the watch first saw it: its pid, its start time (field 22 of
    ``/proc/PID/stat``, clock ticks after boot; None without ``/proc``), its name, made safe to
    print, and its parent's pid then (field 4; None without ``/proc``; not compared)."""

    pid: int
    start: int | None = None
    name: str = ""
    parent: int | None = field(default=None, compare=False)

    def label(self) -> str:
        return f"{self.pid} ({self.name})" if self.name else str(self.pid)


def _fields(pid: int, proc: Path = PROC) -> list[bytes]:
    """The fields of ``/proc/PID/stat`` after the name, the state first; empty where there is none
    (no ``/proc``: macOS)."""
    try:
        stat = (proc / str(pid) / "stat").read_bytes()
    except OSError:
        return []
    return stat[stat.rfind(b")") + 2:].split()  # after the name, which may hold ") " itself


def _start(fields: list[bytes]) -> int | None:
    """The start time among ``_fields``; None where it is not there."""
    return int(fields[START_FIELD]) if len(fields) > START_FIELD and fields[START_FIELD].isdigit() else None


def name_of(pid: int, proc: Path = PROC) -> str:
    """Its command name (``/proc/PID/comm``, else the first word of its command line), each control
    and undecodable byte written as an escape; empty where neither can be read."""
    for part, cut in (("comm", b"\n"), ("cmdline", b"\0")):
        try:
            raw = (proc / str(pid) / part).read_bytes()[:256].split(cut, 1)[0]
        except OSError:
            continue
        if raw:
            return escape(os.path.basename(raw).decode("utf-8", "surrogateescape"))
    return ""


def identify(pid: int, proc: Path = PROC) -> Process:
    """``pid`` as it is now: its start time, name and parent."""
    fields = _fields(pid, proc)
    parent = int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None
    return Process(pid, _start(fields), name_of(pid, proc), parent)


def alive(pid: int, start: int | None = None, proc: Path = PROC) -> bool:
    """True while ``pid`` runs: it exists (another user's too: PermissionError says so), is no
    zombie and, given the ``start`` time it had, still has it (another has not taken its pid)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        pass
    fields = _fields(pid, proc)
    if not fields:
        return True  # no /proc, or one that hides others' processes: the kernel's word stands
    now = _start(fields)
    return fields[0] not in GONE_STATES and (start is None or now is None or now == start)


def check_pid(pid: int) -> int:
    """``pid`` when it names a running process; UsageError otherwise, and on Windows, where
    ``os.kill(pid, 0)`` would end the process instead of asking about it."""
    if os.name == "nt":
        raise UsageError("--pid needs a POSIX system (Linux, macOS); on Windows, stop watch with Ctrl-C")
    if pid < 1 or not alive(pid):
        raise UsageError(f"--pid {pid}: no such process is running")
    return pid
