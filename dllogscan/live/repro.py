"""The reproduction ladder: the user's dataset at num_workers 0, 1, N, each rung in a fresh
subprocess, its output diagnosed by the scanner; then the field guide's conclusion."""
from __future__ import annotations

import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..pipeline import runner as pipeline
from ..sources import streams as sources
from ..core.errors import UsageError
from ..core.models import Diagnosis, Evidence
from ..scan.scanner import Scanner
from . import stacks
from .shards import Yielded, loader_of  # noqa: F401 (loader_of: part of this module's interface)
from .child import IMPORT_ERROR, LOADER_FILE, OK_MARK
from .sample_hang import read_held
from .supervise import LOG_FILE, run_child, waiting_text

TAIL_LINES = 40
#: a traceback frame line: it says where, not what went wrong
FRAME_RE = re.compile(r'^\s*File "')


@dataclass
class Rung:
    """One rung: how it ended, what the scanner made of its output, what was measured."""

    workers: int
    result: str  # pass | fail | hang | skipped
    seconds: float = 0.0
    output: str = ""
    diagnosis: Diagnosis | None = None
    worker_peak: dict[str, int] = field(default_factory=dict)
    stacks: dict[int, str] = field(default_factory=dict)
    cause: tuple[str, str, str] | None = None
    exit_code: int | None = None
    main_pid: int | None = None
    yielded: Yielded | None = None  # what its loader yielded; None when it wrote no counts
    loader: dict[str, Any] | None = None  # what its loader was (``loader.describe_all``); None: never built
    held: dict[str, Any] | None = None  # what the process held before its first batch (``sample_hang.held_now``)
    #: a hang: what it was waiting for when cut ("batch", "factory"; None: torch's import) and how
    #: long (``waiting_since``), and the batches it had loaded
    waiting_for: str | None = None
    waited: float = 0.0
    batches: int = 0

    @property
    def cls(self) -> str | None:
        """The scanner's class for the output; for a hang without one, the stack's (else E)."""
        if self.diagnosis:
            return self.diagnosis.cls
        if self.result == "hang":
            return self.cause[1] if self.cause else "E"
        return None

    @property
    def subclass(self) -> str | None:
        if self.diagnosis:
            return self.diagnosis.subclass
        if self.result == "hang":
            return "hang" if self.cls == "E" else "cuda-fork"
        return None

    def evidence(self) -> str:
        if self.result == "hang" and self.cause and not self.diagnosis:
            return f"stuck in {self.cause[0]}: {self.cause[2]}"[:100]
        if self.result == "hang" and not self.diagnosis:
            # the output's last line is the rung's own banner or a stray print: no evidence of a hang
            workers = [t for p, t in self.stacks.items() if p != self.main_pid] or list(self.stacks.values())
            where = next(filter(None, map(stacks.stuck_at, workers)), None)
            return waiting_text(self.waiting_for, self.waited, self.seconds, self.batches) + \
                (f"; stuck at {where}" if where else "")
        lines = [ln for ln in self.output.splitlines() if ln.strip()]
        last = lines[-1] if lines and self.result != "pass" else ""
        if self.diagnosis and self.diagnosis.evidence:
            first = self.diagnosis.evidence[0]
            # a frame (fetch.py at num_workers=0) or the source line under one (worker_init_fn's call)
            # names no error: the exception line does
            return last if self._says_where(first) and last and not FRAME_RE.match(last) else first.text
        return last

    def _says_where(self, evidence: Evidence) -> bool:
        """Whether a cited line is a traceback frame or the source line printed under one."""
        if FRAME_RE.match(evidence.text):
            return True
        lines = self.output.splitlines()
        return (2 <= evidence.line <= len(lines) and lines[evidence.line - 1].strip() == evidence.text.strip()
                and bool(FRAME_RE.match(lines[evidence.line - 2])))

    def to_dict(self) -> dict[str, Any]:
        return {"workers": self.workers, "result": self.result, "class": self.cls,
                "subclass": self.subclass, "evidence": self.evidence(), "seconds": round(self.seconds, 2),
                "exit_code": self.exit_code, "worker_peak": self.worker_peak,
                "waiting_for": self.waiting_for, "waited": round(self.waited, 2),
                "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None,
                "stacks": {str(k): v for k, v in self.stacks.items()},
                "output_tail": "\n".join(self.output.splitlines()[-TAIL_LINES:]),
                "yielded": self.yielded.summary() if self.yielded else None}


@dataclass(frozen=True)
class Settings:
    factory: str
    workers: tuple[int, ...] = (0, 1, 4)
    batches: int = 8
    batch_size: int | None = None  # None: the factory's DataLoader's own, else loader.BATCH_SIZE
    timeout: float = 60.0
    spawn: bool = False
    collate: str | None = None
    worker_init: str | None = None
    pin_memory: bool = False
    nofile: int | None = None
    sharing_strategy: str | None = None


#: where torch's shared-memory segments live (``shm_open`` names: ``torch_<pid>_<n>_<n>``)
SHM_DIR = Path("/dev/shm")


def remove_shared_memory(pids: list[int], since: float, shm: Path = SHM_DIR) -> list[str]:
    """Remove the shared-memory segments the rung's processes (``pids``, all ended) left behind
    (``torch_<pid>_*`` made since ``since``): a rung killed mid-batch, or failed for want of
    /dev/shm, would otherwise leave them there, the space class A needs taken. The names removed."""
    removed = []
    for pid in set(pids):
        for path in shm.glob(f"torch_{pid}_*"):
            try:
                if path.stat().st_mtime >= since - 1:
                    path.unlink()
                    removed.append(path.name)
            except OSError:
                pass
    return removed


def _worker_pids(folder: str) -> list[int]:
    """The pids of the rung's workers, as each wrote its own to ``pids`` when it started."""
    path = Path(folder, "pids")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def run_rung(settings: Settings, workers: int, scanner: Scanner, cwd: str | None = None) -> Rung:
    """Run one rung in a fresh interpreter in its own process group (``supervise.run_child``); cut
    a hang at the timeout after asking every process for its stacks. UsageError when the factory,
    collate or worker_init function cannot be imported there, or an option cannot apply to the
    factory's loader (the child says so in ``IMPORT_ERROR``): not a rung's failure."""
    with tempfile.TemporaryDirectory(prefix="dllogscan-repro-") as folder:
        spec = {"factory": settings.factory, "num_workers": workers, "batches": settings.batches,
                "batch_size": settings.batch_size, "spawn": settings.spawn, "collate": settings.collate,
                "worker_init": settings.worker_init, "pin_memory": settings.pin_memory,
                "nofile": settings.nofile, "sharing_strategy": settings.sharing_strategy, "folder": folder}
        start, started_at = time.monotonic(), time.time()
        ended = run_child("dllogscan.live.child", spec, folder, settings.timeout, cwd, lambda: _worker_pids(folder))
        seconds = time.monotonic() - start
        remove_shared_memory([ended.pid] + _worker_pids(folder), started_at)
        output = Path(folder, LOG_FILE).read_text(errors="replace")
        unimportable = Path(folder, IMPORT_ERROR)
        if unimportable.exists():
            raise UsageError(unimportable.read_text())
        stats_file, loader_file = Path(folder, "stats.json"), Path(folder, LOADER_FILE)
        stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}
        loader = json.loads(loader_file.read_text()) if loader_file.exists() else None
        held = read_held(folder)
    rung = Rung(workers=workers, result="pass", seconds=seconds, output=output, exit_code=ended.code,
                worker_peak=stats.get("worker_peak", {}), yielded=Yielded.from_dict(stats.get("yielded")),
                loader=loader, held=held)
    result = pipeline.run(sources.from_text(output, f"rung {workers}"), scanner)
    # a rung's output is a log: only signature evidence counts, not the prose classifier's guess
    rung.diagnosis = next((d for d in result.diagnoses if d.signatures), None)
    if ended.code is None:
        rung.result = "hang"
        rung.stacks, rung.main_pid = ended.stacks, ended.pid
        rung.waiting_for, rung.waited, rung.batches = ended.waiting_for, ended.waited, stats.get("batches", 0)
        worker_stacks = [t for p, t in ended.stacks.items() if p != ended.pid] or list(ended.stacks.values())
        rung.cause = next((c for c in map(stacks.likely_cause, worker_stacks) if c), None)
    elif ended.code != 0 or OK_MARK not in output:
        rung.result = "fail"
    return rung


def ladder(settings: Settings, scanner: Scanner | None = None, cwd: str | None = None) -> list[Rung]:
    """Every rung in order; after a failure at 0 the rest are skipped (the bug is in the dataset).
    UsageError when the factory cannot be imported (``run_rung``)."""
    scanner = scanner or pipeline.get_scanner()
    rungs: list[Rung] = []
    for n in settings.workers:
        if rungs and rungs[0].workers == 0 and rungs[0].result != "pass":
            rungs.append(Rung(workers=n, result="skipped"))
            continue
        rungs.append(run_rung(settings, n, scanner, cwd))
    return rungs
