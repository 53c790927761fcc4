"""Per-process memory and descriptor counts (psutil over /proc)."""
from __future__ import annotations

from typing import Iterable


def measure(pids: Iterable[int]) -> dict[int, dict[str, int] | None]:
    """pid -> {"rss": bytes, "fds": count}, or None for a process that is gone."""
    import psutil

    out: dict[int, dict[str, int] | None] = {}
    for pid in pids:
        try:
            p = psutil.Process(pid)
            out[pid] = {"rss": p.memory_info().rss, "fds": p.num_fds()}
        except (psutil.Error, OSError):
            out[pid] = None
    return out


def worker_pids(iterator: object) -> list[int]:
    """The worker pids of a DataLoader iterator (``_workers``), when it has any."""
    pids = []
    for w in getattr(iterator, "_workers", None) or ():
        pid = getattr(w, "pid", None)
        if isinstance(pid, int):
            pids.append(pid)
    return pids
