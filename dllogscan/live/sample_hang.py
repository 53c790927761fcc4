"""Why ``doctor --sample`` hung (data: ``dllogscan/data/sample_hangs.toml``, whose header is the
rulebook): the cause named from the stuck thread's innermost frames, or none where they show none;
the other threads of the process and where they stood; what the process held where a loader with
workers would fork them. The sample loads at num_workers=0, so the guide's fork causes are said
not to be why it hung, and what it held is named apart, as hazards for the user's own workers."""
from __future__ import annotations

import json
import os
import re
import sys
import sysconfig
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.paths import DATA_DIR, data_document, data_pattern
from .stacks import FRAME_RE, innermost_frames, stuck_at

DATA = DATA_DIR / "sample_hangs.toml"
#: written by the sample's process where the workers would fork (``held_now``)
HELD_FILE = "held.json"
#: how many of the stuck thread's innermost frames name its cause; how many other threads are named
FRAMES, OTHERS = 4, 4
THREAD_RE = re.compile(r"^(?:Current thread|Thread) (0x[0-9a-f]+)", re.I)
TASKS = Path("/proc/self/task")


@dataclass(frozen=True)
class Stuck:
    name: str
    frame: Any  # compiled patterns: any frame's line, the innermost frame's (or None)
    innermost: Any
    says: str
    check: str

    def shows(self, line: str, innermost: bool) -> bool:
        return bool(self.frame.search(line) or (innermost and self.innermost and self.innermost.search(line)))


@lru_cache(maxsize=1)
def table() -> tuple[dict[str, Any], tuple[Stuck, ...]]:
    """The data file, and its ``[[stuck]]`` entries with their patterns compiled."""
    doc = data_document(DATA)
    stuck = tuple(Stuck(e["name"], data_pattern(DATA, f"stuck {e['name']}", e["frame"]),
                        data_pattern(DATA, f"stuck {e['name']}, innermost", e["innermost"]) if "innermost" in e
                        else None,
                        e["says"], e["check"]) for e in doc["stuck"])
    return doc, stuck


def tasks() -> int | None:
    """How many threads this process runs, native ones included (Linux); None where unknown."""
    try:
        return len(os.listdir(TASKS))
    except OSError:
        return None


def held_now(folder: str, tasks_before: int | None) -> None:
    """Write ``HELD_FILE``: the ``[[held]]`` modules loaded, the files open with their suffixes,
    the other Python threads (ident -> name) and the native threads started since ``tasks_before``."""
    doc, _ = table()
    suffixes = tuple(s for e in doc["held"] for s in e.get("suffixes", []))
    files = []
    try:
        for fd in os.listdir("/proc/self/fd"):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.lower().endswith(suffixes):
                files.append(target)
    except OSError:
        pass
    me = threading.get_ident()
    python = {f"0x{t.ident:016x}": t.name for t in threading.enumerate() if t.ident not in (me, None)}
    now = tasks()
    native = max(now - tasks_before - len(python), 0) if now is not None and tasks_before is not None else 0
    held = {"modules": [e["module"] for e in doc["held"] if e["module"] in sys.modules],
            "files": sorted(set(files)), "threads": python, "native_threads": native}
    Path(folder, HELD_FILE).write_text(json.dumps(held))


def read_held(folder: str) -> dict[str, Any] | None:
    """What ``held_now`` wrote, or None (the factory never returned)."""
    try:
        return json.loads(Path(folder, HELD_FILE).read_text())
    except (OSError, ValueError):
        return None


def other_threads(stack: str, names: dict[str, str]) -> list[str]:
    """``refresher at mydata.py:51 in _hold: time.sleep(3600)`` for each thread of the dump
    but the current one (named where ``names`` knows its ident)."""
    out = []
    for block in re.split(r"\n(?=Thread 0x)", stack):
        m = THREAD_RE.match(block)
        if not m or block.startswith("Current thread"):
            continue
        ident = f"0x{int(m.group(1), 16):016x}"
        where = stuck_at("Current thread\n" + block.split("\n", 1)[-1]) or "no Python frame"
        out.append(f"{names.get(ident, ident)} at {where}")
    return out


def hazards(held: dict[str, Any] | None) -> list[str]:
    """The fork hazards of the guide's class E that the process held where workers would fork."""
    if not held:
        return []
    doc, _ = table()
    said = []
    for e in doc["held"]:
        open_files = [f for f in held["files"] if f.lower().endswith(tuple(e.get("suffixes", [])))]
        if e["module"] in held["modules"] or (e.get("suffixes") and open_files):
            said.append(e["hazard"] + (f": {', '.join(open_files[:3])}" if open_files else ""))
    names, native = list(held["threads"].values()), held.get("native_threads", 0)
    if names or native:
        running = [f"{len(names)} Python ({', '.join(names[:OTHERS])})"] * bool(names) + \
                  [f"{native} native, started by the factory (OpenMP/BLAS pools, a library's own)"] * bool(native)
        said.append(f"{doc['threads']}: {' and '.join(running)}")
    return said


def _frames(stack: str) -> list[list[str]]:
    """The current thread's innermost ``FRAMES`` frames, each its lines (the ``File`` line, its source)."""
    frames: list[list[str]] = []
    for line in innermost_frames(stack, FRAMES).splitlines():
        if FRAME_RE.match(line) or not frames:
            frames.append([line])
        else:
            frames[-1].append(line)
    return frames[:FRAMES]


def _shown(frames: list[list[str]], k: int) -> str:
    """Where frame ``k`` stands (``file.py:LINE in func: source``), or its first caller outside
    Python's own library (a wait in threading.py: the dataset's line that waits)."""
    stdlib = sysconfig.get_paths()["stdlib"]
    m = FRAME_RE.match(frames[k][0])
    if m and m.group("file").startswith(stdlib):
        k = next((j for j in range(k, len(frames)) if not frames[j][0].strip().startswith(f'File "{stdlib}')), k)
    return stuck_at("Current thread\n" + "\n".join(frames[k])) or frames[k][0].strip()


def explain(stack: str, held: dict[str, Any] | None) -> dict[str, Any]:
    """The cause of a sample hang: ``cause`` (a ``[[stuck]]`` name, None where the stack names
    none), ``says``, ``evidence`` (the frame line that showed it, or where it stood), ``check``,
    ``threads`` (the others), ``no_fork`` and ``hazards`` (what it held where workers would fork)."""
    doc, stuck = table()
    frames = _frames(stack)
    found = next(((s, _shown(frames, k)) for k, frame in enumerate(frames) for line in frame
                  for s in stuck if s.shows(line, k == 0)), None)
    threads = other_threads(stack, (held or {}).get("threads", {}))
    if found:
        entry, evidence = found
        out = {"cause": entry.name, "says": entry.says, "evidence": evidence, "check": entry.check}
    else:
        where = stuck_at(stack) or ("no Python frame" if stack else "no stack could be dumped")
        out = {"cause": None, "says": doc["unknown"], "evidence": where,
               "check": doc["unknown_check"]}
    return {**out, "threads": threads[:OTHERS], "no_fork": doc["no_fork"], "hazards": hazards(held)}
