"""What a watch reports and how: each event as ``dllogscan FILE`` prints a result (the rich report,
or one JSON object a line: the contract's fields plus ``event``, ``time`` and ``watched_s``), and
the summary at the end."""
from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

from ..core.models import ScanResult
from ..core.printable import escape
from ..correlate.cadence import duration
from .process import Process
from .writers import listing

#: the formats a watch writes: the report, or JSON lines (``json`` is a synonym: one object an event)
FORMATS = ("text", "json", "jsonl")


@dataclass(frozen=True)
class Event:
    """A report: ``failure`` (a failure text was printed) or ``stall`` (progress stopped)."""

    kind: str
    result: ScanResult
    seconds: float  # into the watch
    wall: float  # seconds since 1970

    def headline(self) -> str:
        clock = time.strftime("%H:%M:%S", time.localtime(self.wall))
        top = self.result.diagnoses[0] if self.result.diagnoses else None
        what = ("progress stopped" if self.kind == "stall" else "DataLoader failure printed") + (
            f" (line {top.evidence[0].line})" if top is not None and top.evidence else "")
        return f"dllogscan watch: {what} at {clock}, {duration(self.seconds)} into the watch"

    def to_dict(self) -> dict[str, Any]:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.wall))
        return {"event": self.kind, "time": stamp, "watched_s": round(self.seconds, 1), **self.result.to_dict()}


@dataclass(frozen=True)
class Outcome:
    """How a watch ended: ``found`` (a report ended it), ``timeout``, ``interrupted`` (Ctrl-C,
    SIGTERM), ``exited`` (the process ``pid``, or the file's ``writers``, have gone) or
    ``finished`` (a silence after the line ``finish_line``, which says the run finished).
    ``orphans``: the writers left running by an ``exited`` job (``writers.py``), among ``writers``;
    ``relays``: those that passed the job's output on into the log (``tee``), whose life did not count."""

    source: str
    reason: str
    reports: int
    seconds: float
    lines_read: int
    last_line: int
    pid: int | None = None
    finish_line: int | None = None
    writers: tuple[Process, ...] = ()
    orphans: tuple[Process, ...] = ()
    relays: tuple[Process, ...] = ()

    def why(self) -> str:
        """The reason in the summary's words."""
        if self.reason == "exited" and self.writers:
            ended = [p for p in self.writers if p not in self.orphans and p not in self.relays]
            one = len(self.orphans) == 1
            held = f"the pipe into {listing(self.relays)}" if self.relays else "the log"
            left = (f", leaving orphaned {'child' if one else 'children'} {listing(self.orphans)} that still "
                    f"{'holds' if one else 'hold'} {held} ({'a leaked worker' if one else 'leaked workers'}?)"
                    if self.orphans else "")
            return f"writer{'s' * (len(ended) > 1)} {listing(ended)} exited{left}"
        if self.reason == "exited":
            return f"process {self.pid} exited"
        if self.reason == "finished":
            return f"the run finished at line {self.finish_line}"
        return "timeout" if self.reason == "timeout" else "stopped"

    def summary(self) -> str:
        found = "nothing found" if not self.reports else f"{self.reports} report{'s' * (self.reports > 1)}"
        lines = f"{self.lines_read} new line{'s' * (self.lines_read != 1)}"
        return (f"dllogscan watch: {escape(self.source)}: {found} in {duration(self.seconds)} "
                f"({self.why()}; {lines} read, up to line {self.last_line})")

    def to_dict(self) -> dict[str, Any]:
        known: dict[str, Any] = {key: value for key, value in (("pid", self.pid), ("finish_line", self.finish_line))
                                 if value is not None}
        for key, processes in (("writers", self.writers), ("orphans", self.orphans), ("relays", self.relays)):
            if processes:
                known[key] = [{"pid": p.pid, "name": p.name} for p in processes]
        return {"event": "end", "reason": self.reason, "reports": self.reports, "watched_s": round(self.seconds, 1),
                "lines_read": self.lines_read, **known,
                **ScanResult(source=self.source, lines=self.last_line).to_dict()}


class Reporter:
    """Writes events and the summary to standard output in ``fmt`` (one of ``FORMATS``), each
    flushed at once: a watch is read as it happens, often through a pipe."""

    def __init__(self, fmt: str, stream: TextIO | None = None) -> None:
        self.fmt, self.stream = fmt, stream

    @property
    def out(self) -> TextIO:
        return self.stream or sys.stdout

    def event(self, event: Event) -> None:
        if self.fmt == "text":
            from ..report.terminal import print_results
            from rich.console import Console

            self.out.write(event.headline() + "\n")
            print_results([event.result], Console(file=self.out, highlight=False))
        else:
            self.out.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self.out.flush()

    def end(self, outcome: Outcome) -> None:
        self.out.write((outcome.summary() if self.fmt == "text" else json.dumps(outcome.to_dict())) + "\n")
        self.out.flush()
