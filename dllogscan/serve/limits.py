"""How many connections the page holds open at once, and how many it accepts in one go.

Each connection is a socket, so a file descriptor. Without a cap, clients that open connections
and send nothing use up the process's open files until their read deadlines pass: asyncio's
``accept`` then fails (``EMFILE``), logs a traceback for every try, and a real request waits
in the listen queue. With one, the connections past ``max_connections`` are answered 503 and
closed at once (``deadline.py``), so they hold no descriptor.

asyncio accepts up to ``backlog`` connections per turn of the event loop, and a connection is
refused a few turns after it was accepted: the cap and the backlog are both chosen to fit the
open-file limit (``ulimit -n``) with room for the process's own files and one file each
connection may be sending (a static file).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UsageError

DEFAULT_MAX_CONNECTIONS = 64
#: the listen queue when the open-file limit has room for it (uvicorn's default is 2048)
DEFAULT_BACKLOG = 128
#: the process's own descriptors: standard streams, the event loop, listening sockets, spare
RESERVED_FILES = 32
#: turns of the event loop whose accepted connections may all be open before the first is refused
ACCEPT_TURNS = 4


@dataclass
class Connections:
    """The connections one server holds open, against its cap."""
    cap: int
    open: int = 0


def open_file_limit() -> int | None:
    """The process's soft limit on open files, or None where it has none or it cannot be read."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def fitted(max_connections: int, files: int | None) -> tuple[int, int]:
    """``(cap, backlog)``: at most ``max_connections`` and ``DEFAULT_BACKLOG``, fewer where ``files``
    open files (None: no limit) would not hold the process's own, ``ACCEPT_TURNS`` backlogs of
    connections not yet refused, and two files for each connection held. UsageError where it
    holds not even one."""
    if files is None:
        return max_connections, DEFAULT_BACKLOG
    room = files - RESERVED_FILES
    backlog = max(1, min(DEFAULT_BACKLOG, room // (4 * ACCEPT_TURNS)))
    cap = min(max_connections, (room - ACCEPT_TURNS * backlog) // 2)
    if cap < 1:
        raise UsageError(f"the open-file limit ({files}, ulimit -n) leaves no room for connections: "
                         f"raise it to {RESERVED_FILES + ACCEPT_TURNS + 2} or more")
    return cap, backlog
