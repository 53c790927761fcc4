"""Stacks of stuck workers: faulthandler on SIGUSR1 (set up in worker_init_fn) or py-spy,
the source line of each frame, and the likely cause named from the stack text."""
from __future__ import annotations

import faulthandler
import linecache
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

DUMP_SIGNAL = signal.SIGUSR1
FRAME_RE = re.compile(r'^(\s*)File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)\s*$')
#: (label, class, regex over an annotated stack) in order of precedence
CAUSES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("a CUDA call", "D", re.compile(r"torch/cuda|\bcuda\(|\.to\(['\"]cuda|_lazy_init", re.I)),
    ("an HDF5 call", "E", re.compile(r"h5py|hdf5", re.I)),
    ("an lmdb call", "E", re.compile(r"\blmdb\b", re.I)),
    ("an Event or Condition wait", "E", re.compile(r'threading\.py", line \d+ in wait\b')),
    ("a lock acquire", "E", re.compile(r"\bacquire\b|\bwith\s+\w*lock\w*\s*:|_acquireLock|\block\b", re.I)),
    ("a queue get", "E", re.compile(r"queues\.py.*\bget\b|\bin get\b|_try_get_data|\bpoll\b|\brecv", re.I)),
)
WHY = {
    "a CUDA call": "CUDA cannot be re-initialised in a forked worker: move it out, or use spawn",
    "an HDF5 call": "h5py handles opened before the fork are not fork-safe: open the file per worker",
    "an lmdb call": "an lmdb environment opened before the fork: open it per worker in worker_init_fn",
    "an Event or Condition wait": "the worker waits for a set() or notify() that no thread in it will send: "
                                  "the parent's threads do not exist in a forked worker",
    "a lock acquire": "a lock held by another thread when the worker forked is never released in it",
    "a queue get": "the process waits for data that never comes",
}


def dump_file(folder: str | os.PathLike[str], pid: int) -> Path:
    return Path(folder) / f"stack-{pid}.txt"


def dump_on_request(folder: str | os.PathLike[str]) -> None:
    """This process writes its stacks to ``dump_file`` on ``DUMP_SIGNAL`` (``request``); the file
    is kept open for the process's life."""
    fh = open(dump_file(folder, os.getpid()), "w")
    faulthandler.register(DUMP_SIGNAL, file=fh, all_threads=True, chain=False)


class StackDumpInit:
    """A picklable ``worker_init_fn`` that makes the worker dump its stacks to a file on
    SIGUSR1, then calls the user's own ``worker_init_fn``."""

    def __init__(self, folder: str, inner: Callable[[int], Any] | None = None) -> None:
        self.folder, self.inner = folder, inner

    def __call__(self, worker_id: int) -> None:
        dump_on_request(self.folder)
        if self.inner is not None:
            self.inner(worker_id)


def py_spy(pid: int, timeout: float = 10.0) -> str | None:
    exe = shutil.which("py-spy")
    if not exe:
        return None
    try:
        proc = subprocess.run([exe, "dump", "--pid", str(pid)], capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout or None


def request(pids: list[int], folder: str | os.PathLike[str] | None, wait: float = 1.0) -> dict[int, str]:
    """Ask each pid for its stacks (faulthandler file, else py-spy); pid -> annotated text."""
    sent = []
    for pid in pids:
        if folder is not None and dump_file(folder, pid).exists():
            try:
                os.kill(pid, DUMP_SIGNAL)
                sent.append(pid)
            except OSError:
                pass
    deadline = time.monotonic() + wait
    out: dict[int, str] = {}
    while sent and time.monotonic() < deadline:
        time.sleep(0.05)
        if all(dump_file(folder, p).stat().st_size for p in sent):  # type: ignore[arg-type]
            break
    for pid in pids:
        text = dump_file(folder, pid).read_text(errors="replace") if folder is not None and pid in sent else ""
        text = text or py_spy(pid) or ""
        if text:
            out[pid] = annotate(text)
    return out


def annotate(stack: str) -> str:
    """Add each frame's source line under it (faulthandler prints file and line only)."""
    lines = []
    for line in stack.splitlines():
        lines.append(line)
        m = FRAME_RE.match(line)
        if m:
            src = linecache.getline(m.group("file"), int(m.group("line"))).strip()
            if src:
                lines.append(f"{m.group(1)}    {src}")
    return "\n".join(lines)


def innermost_frames(stack: str, n: int = 4) -> str:
    """The last frames of the current thread (faulthandler: most recent call first)."""
    block = re.split(r"\n(?=Thread 0x|Current thread)", stack)
    current = next((b for b in block if b.startswith("Current thread")), block[0])
    frames = current.splitlines()[1:]
    return "\n".join(frames[: n * 2])


#: the innermost Python frame blocked on a ``with NAME:`` line: its ``__enter__`` is C code that
#: waits, a lock's acquire (a Python ``__enter__`` would be a frame of its own)
BLOCKED_WITH_RE = re.compile(r"^\s*with\s+[\w.]+\s*(:|as\b)")


def likely_cause(stack: str) -> tuple[str, str, str] | None:
    """(cause, class, the frame that shows it) named from a stack's innermost frames."""
    inner = innermost_frames(stack)
    for label, cls, pattern in CAUSES:
        for line in inner.splitlines():
            if pattern.search(line):
                if label == "an Event or Condition wait":  # threading.py's frame: show its caller's
                    return label, cls, _caller_of_threading(inner) or line.strip()
                return label, cls, line.strip()
    first = inner.splitlines()[1:2]  # the innermost frame's source line
    if first and BLOCKED_WITH_RE.match(first[0]):
        return "a lock acquire", "E", first[0].strip()
    return None


def _caller_of_threading(inner: str) -> str | None:
    """The source line of the innermost frame outside threading.py."""
    lines = inner.splitlines()
    for i, line in enumerate(lines):
        m = FRAME_RE.match(line)
        if m and not m.group("file").endswith("threading.py"):
            return lines[i + 1].strip() if i + 1 < len(lines) and not FRAME_RE.match(lines[i + 1]) else line.strip()
    return None


def stuck_at(stack: str) -> str | None:
    """``file.py:LINE in func: source`` of the innermost frame of a stack, or None."""
    lines = innermost_frames(stack, 1).splitlines()
    m = FRAME_RE.match(lines[0]) if lines else None
    if not m:
        return None
    where = f"{os.path.basename(m.group('file'))}:{m.group('line')} in {m.group('func')}"
    return f"{where}: {lines[1].strip()}" if len(lines) > 1 and not FRAME_RE.match(lines[1]) else where
