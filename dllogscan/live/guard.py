"""Guard a running job's DataLoader: diagnose a worker failure with live facts, and dump every
worker's stack when the loop has waited ``stall_after`` seconds for a batch (the time the loop
spends on a batch it has, or after its last one, is not waiting).

    with dllogscan.guard(loader, stall_after=300) as batches:
        for batch in batches:
            ...
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
import traceback
import weakref
from typing import Any, Iterator, TextIO

from ..advise.fixes import human
from . import facts as machine
from . import procinfo, stacks


class Guard:
    """Iterate ``loader`` through this object; healthy batches cost one clock read each."""

    def __init__(self, loader: Any, stall_after: float = 300.0, scanner: Any = None,
                 out: TextIO | None = None, check_every: float | None = None) -> None:
        self.loader, self.stall_after, self.scanner = loader, stall_after, scanner
        self.out = out or sys.stderr
        self.check_every = check_every or min(max(stall_after / 10, 0.05), 10.0)
        self.folder = tempfile.mkdtemp(prefix="dllogscan-guard-")
        self.pids: list[int] = []
        self.asked: float | None = None  # when the loop last asked the loader for a batch still to come
        self.stalls: list[dict[str, Any]] = []
        self.failure: Any = None
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        # the stack files' folder goes when the guard does (or at exit, for one never closed)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, ignore_errors=True)
        self._user_init = getattr(loader, "worker_init_fn", None)
        self._init: stacks.StackDumpInit | None = None
        if getattr(loader, "num_workers", 0):
            self._init = loader.worker_init_fn = stacks.StackDumpInit(self.folder, self._user_init)

    def __enter__(self) -> "Guard":
        self._watchdog = threading.Thread(target=self._watch, name="dllogscan-guard", daemon=True)
        self._watchdog.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._watchdog is not None:
            self._watchdog.join(timeout=5)
        # give the loader back as it came: a later guard (the next epoch's) would otherwise wrap
        # this one's dumper, whose folder is gone, and its stall report would find no stacks
        if self._init is not None and self.loader.worker_init_fn is self._init:
            self.loader.worker_init_fn = self._user_init
        self._cleanup()

    def __iter__(self) -> Iterator[Any]:
        self.asked = time.monotonic()
        try:
            it = iter(self.loader)
            self.pids = procinfo.worker_pids(it)
            while True:
                try:
                    batch = next(it)
                except StopIteration:
                    return
                except Exception as exc:
                    self.asked = None
                    self._report_failure(exc)
                    raise
                self.asked = None  # the loop's own work (a training step, an evaluation) is no stall
                yield batch
                self.asked = time.monotonic()
        finally:
            self.asked = None

    def _watch(self) -> None:
        reported_at = None
        while not self._stop.wait(self.check_every):
            asked = self.asked
            idle = time.monotonic() - asked if asked is not None else 0.0
            if asked is not None and idle >= self.stall_after and reported_at != asked:
                reported_at = asked
                self._report_stall(idle)

    def _report_stall(self, idle: float) -> None:
        dumps = stacks.request(self.pids, self.folder)
        causes = {pid: stacks.likely_cause(text) for pid, text in dumps.items()}
        self.stalls.append({"idle": idle, "stacks": dumps, "causes": causes})
        lines = [f"dllogscan guard: no batch for {idle:.0f} s (class E, stall); "
                 f"{len(dumps)} of {len(self.pids)} worker stacks dumped"]
        for pid, text in dumps.items():
            cause = causes[pid]
            lines.append(f"worker pid {pid}: " + (f"stuck in {cause[0]} (class {cause[1]}): {cause[2]}; "
                                                   f"{stacks.WHY[cause[0]]}"
                                                   if cause else "no known cause in its stack"))
            lines.append(stacks.innermost_frames(text, 6))
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()

    def _report_failure(self, exc: BaseException) -> None:
        from ..pipeline import runner as pipeline
        from ..sources import streams as sources
        from ..report.terminal import to_text

        text = "".join(traceback.format_exception(exc))
        result = pipeline.run(sources.from_text(text, "DataLoader failure"), self.scanner or pipeline.get_scanner())
        self.failure = result
        lines = [to_text([result]).rstrip(), "dllogscan guard: live facts"]
        shm = machine.shm()
        if shm:
            lines.append(f"  /dev/shm now: {human(shm['free'])} free of {human(shm['size'])}")
        for pid, info in procinfo.measure(self.pids).items():
            lines.append(f"  worker pid {pid}: " + (f"{human(info['rss'])} RSS, {info['fds']} open descriptors"
                                                     if info else "gone"))
        self.out.write("\n".join(lines) + "\n")
        self.out.flush()


def guard(loader: Any, stall_after: float = 300.0, **options: Any) -> Guard:
    """``with guard(loader) as batches: for batch in batches: ...``"""
    return Guard(loader, stall_after, **options)


def guarded(loader: Any, stall_after: float = 300.0, **options: Any) -> Iterator[Any]:
    """The loader's batches, guarded: ``for batch in guarded(loader): ...``"""
    with Guard(loader, stall_after, **options) as g:
        yield from g
