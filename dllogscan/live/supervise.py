"""A child interpreter that runs the user's dataset code (a repro rung, doctor's ``--sample``),
given a bounded time: started in its own session, its time counted from its marks (``child``'s
``READY_FILE``, ``WAITING_FILE``, ``stats.json``), cut when it hangs after its stacks are asked for,
killed with its group whatever happens to the parent (a Ctrl-C included)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..core.processes import kill_group
from . import stacks
from .child import READY_FILE, WAITING_FILE

STARTUP = 120.0  # seconds a child may take to import torch, on top of its timeout
POLL = 0.2  # seconds between looks at a running child
LOG_FILE = "output.log"


@dataclass
class Ended:
    """How a child ended: its exit code, or None when it was cut, with what it was waiting for
    (``waiting_since``), how long, and the stacks of its processes (pid -> text)."""

    pid: int
    code: int | None
    waiting_for: str | None = None
    waited: float = 0.0
    stacks: dict[int, str] = field(default_factory=dict)


def waiting_since(folder: str) -> tuple[str | None, float]:
    """What a child cut now was waiting for, and since how many seconds, by the newest mark it left:
    a batch since its last one (``stats.json``) or since its first request (``WAITING_FILE``), the
    factory since torch was imported (``READY_FILE``); (None, 0.0): none."""
    now = time.time()
    for name, what in (("stats.json", "batch"), (WAITING_FILE, "batch"), (READY_FILE, "factory")):
        try:
            return what, max(now - Path(folder, name).stat().st_mtime, 0.0)
        except OSError:
            continue
    return None, 0.0


def waiting_text(waiting_for: str | None, waited: float, seconds: float, batches: int = 0) -> str:
    """What a cut child waited for and how long, counted from when it began to (``seconds``: the
    child's whole run, for one that never imported torch)."""
    if waiting_for == "batch":
        return f"no batch in {waited:.0f} s" + (f" after batch {batches}" if batches else "")
    if waiting_for == "factory":
        return f"the factory did not return in {waited:.0f} s"
    return f"not started in {seconds:.0f} s (importing torch)"


def wait_started(proc: subprocess.Popen, ready: Path, timeout: float) -> int | None:
    """The child's exit code, or None once it has run ``timeout`` seconds past ``ready`` (torch
    imported: a fresh interpreter's start-up on a loaded machine is not the dataset's time), or
    ``timeout + STARTUP`` seconds in all without getting there."""
    deadline, readied = time.monotonic() + timeout + STARTUP, False
    while True:
        try:
            return proc.wait(timeout=POLL)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if not readied and ready.exists():
            deadline, readied = now + timeout, True
        if now >= deadline:
            return None


def run_child(module: str, spec: dict[str, Any], folder: str, timeout: float, cwd: str | None = None,
              pids: Callable[[], list[int]] = list) -> Ended:
    """``python -m module SPEC.json`` (``spec`` written to ``folder``), its output to ``LOG_FILE``
    there and its temporary files under it, waited for as ``wait_started`` says; cut, it is asked
    for its stacks (and those of ``pids()``, its workers) and killed with its process group."""
    spec_path = Path(folder, "spec.json")
    spec_path.write_text(json.dumps(spec))
    scratch = Path(folder, "tmp")  # the child's temporary files (multiprocessing's pymp-*) go with it
    scratch.mkdir()
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1", TMPDIR=str(scratch))
    with open(Path(folder, LOG_FILE), "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", module, str(spec_path)], stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, cwd=cwd, env=env, start_new_session=True)
        try:
            code = wait_started(proc, Path(folder, READY_FILE), timeout)
            if code is not None:
                return Ended(proc.pid, code)
            waiting_for, waited = waiting_since(folder)
            dumps = stacks.request([proc.pid] + pids(), folder)
            kill_group(proc)
            return Ended(proc.pid, None, waiting_for, waited, dumps)
        except BaseException:
            # Ctrl-C (or any error) while waiting: the child runs in its own session, out of reach
            # of the terminal's SIGINT; a hung one would otherwise outlive us forever
            kill_group(proc)
            raise
