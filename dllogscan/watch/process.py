"""Whether the job's process still runs, for ``watch --pid``: ``os.kill(pid, 0)`` asks the kernel
(no psutil), ``/proc/PID/stat`` tells a zombie where there is a ``/proc`` (Linux)."""
from __future__ import annotations

import os

from ..core.errors import UsageError

#: states of ``/proc/PID/stat`` that are a process gone: a zombie (exited, its parent has not
#: reaped it yet) and a dead one
GONE_STATES = (b"Z", b"X")


def _state(pid: int) -> bytes:
    """The state letter of ``/proc/PID/stat``; empty where there is none (no ``/proc``: macOS)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return b""
    return stat[stat.rfind(b")") + 2:][:1]  # after the name, which may hold ") " itself


def alive(pid: int) -> bool:
    """True while ``pid`` runs: it exists (another user's too: PermissionError says so) and is no
    zombie."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        pass
    return _state(pid) not in GONE_STATES


def check_pid(pid: int) -> int:
    """``pid`` when it names a running process; UsageError otherwise, and on Windows, where
    ``os.kill(pid, 0)`` would end the process instead of asking about it."""
    if os.name == "nt":
        raise UsageError("--pid needs a POSIX system (Linux, macOS); on Windows, stop watch with Ctrl-C")
    if pid < 1 or not alive(pid):
        raise UsageError(f"--pid {pid}: no such process is running")
    return pid
