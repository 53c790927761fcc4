"""Several texts of one job or pod -> one ``ScanResult``, joined as ``dllogscan batch`` joins
cross-file evidence.

Each part (the job's stdout and stderr, the node's kernel log for the job's window, a pod's
previous and current logs, its status) is scanned by the batch's own worker; the batch's
``CrossFile`` pass then upgrades a log's ``exited unexpectedly`` to B / oom where another part
proves it (the kernel killed that pid, Slurm's ``oom-kill event``, a pod ``OOMKilled``). The
parts share the ``node`` and ``job`` given in ``meta``, which is what links them.

The joined result is named ``source``; its diagnoses come from every part, the best of each
class and subclass first; a diagnosis from one of several logs names it in ``facts["log"]``
(evidence line numbers are that file's). ``lines`` counts the log parts only, so a job whose logs
could not be read at all is an input that cannot be read (exit 2), whatever the kernel said.
"""
from __future__ import annotations

import dataclasses
import io
import os
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Sequence

from ..sources import streams as sources
from ..advise.fixes import advise
from ..batch.crossfile import CrossFile, pending
from ..batch.worker import Config, Record, database, scan_stream
from ..core.errors import SourceError
from ..core.models import Diagnosis, ScanResult
from ..core.printable import escape
from ..core.utf8 import to_utf8
from .append import open_checked

LOG, CONTEXT = "log", "context"
#: cluster facts that also go into each diagnosis (fix templates use ``{job_id}`` and ``{node}``)
SHARED_FACTS = ("job_id", "node", "pod", "namespace", "container")


@dataclass(frozen=True)
class Part:
    """One named input of a job or pod. ``opener`` is None when it could not be had; ``note``
    then says why (an error for a log part, a fact for a context part)."""

    name: str
    opener: Callable[[], BinaryIO] | None
    role: str = LOG
    note: str | None = None


def file_part(path: str, max_bytes: int | None = None) -> Part:
    """A log file on disk (compressed ones too), read in bounded chunks. A path the job named that
    is there but is no regular file (a FIFO, a device) is not read: nothing would end it."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        regular = True  # missing or unreadable: the scan says so in its own words
    if not regular:
        return missing_part(path, f"not read: {escape(path)} is not a regular file")
    return Part(path, sources.from_path(path, limit=max_bytes).open)


def owned_file_part(path: str, owner: int | None, max_bytes: int | None = None) -> Part:
    """A log file the job named, read as root reads it (``append.open_checked``): only an existing
    regular file of the job's user ``owner``, reached through no link; else not read, saying why."""
    fd, why = open_checked(path, os.O_RDONLY, owner)
    if fd is None:
        return missing_part(path, f"not read: {escape(path)}: {why}")
    os.close(fd)

    def raw() -> BinaryIO:
        fd, why = open_checked(path, os.O_RDONLY, owner)  # again: it may have changed since
        if fd is None:
            raise SourceError(f"{escape(path)}: not read: {why}")
        return os.fdopen(fd, "rb", buffering=0)
    return Part(path, sources.from_stream(raw, escape(path), max_bytes).open)


def text_part(name: str, text: str, role: str = CONTEXT) -> Part:
    """Text already in memory (a tool's output)."""
    data = to_utf8(text)
    return Part(name, lambda: io.BytesIO(data), role)


def spooled_part(name: str, spool: Any, role: str = LOG) -> Part:
    """A tool's output kept in a named temporary file (``tools.run_tool_to_file``), read from there;
    the file lives as long as the part."""
    return Part(name, lambda: open(spool.name, "rb"), role)


def missing_part(name: str, why: str, role: str = LOG) -> Part:
    return Part(name, None, role, why)


def _scan(parts: Sequence[Part], meta: dict[str, str], config: Config) -> list[tuple[Part, Record]]:
    out = []
    for part in parts:
        if part.opener is None:
            continue
        rec = scan_stream(part.name, None, part.opener, config, None)
        # a cause without a pid (Slurm's oom-kill event, a pod's OOMKilled) belongs to this job
        events = tuple(ev if ev.pid or ev.process or ev.job else dataclasses.replace(ev, job=meta.get("job"))
                       for ev in rec.events)
        out.append((part, dataclasses.replace(rec, meta={**rec.meta, **meta}, events=events)))
    cross = CrossFile(database(config))
    for _, rec in out:
        cross.add(rec)
    return [(part, cross.resolve(rec) if pending(rec) else rec) for part, rec in out]


def _best(diagnoses: list[Diagnosis]) -> tuple[Diagnosis, ...]:
    best: dict[tuple[str, str | None], Diagnosis] = {}
    for d in diagnoses:
        key = (d.cls, d.subclass)
        if key not in best or d.confidence > best[key].confidence:
            best[key] = d
    return tuple(sorted(best.values(), key=lambda d: -d.confidence))


def join(parts: Sequence[Part], source: str, meta: dict[str, str], facts: dict[str, str],
         config: Config) -> ScanResult:
    """Scan every part, join their evidence, and return one result named ``source`` whose
    ``facts`` hold ``facts`` (the cluster's) plus what the logs revealed."""
    scanned = _scan(parts, meta, config)
    db = database(config)
    logs = [p for p in parts if p.role == LOG]
    errors = [p.note for p in logs if p.opener is None and p.note]
    log_facts: dict[str, str] = {}
    lines = size = 0
    for part, rec in scanned:
        if part.role == LOG:
            r = rec.result
            lines, size = lines + r.lines, size + r.bytes_read
            log_facts.update(r.facts)
            if r.error:
                errors.append(r.error)
    shared = {k: v for k, v in facts.items() if k in SHARED_FACTS}
    diagnoses: list[Diagnosis] = []
    for part, rec in scanned:
        for d in rec.result.diagnoses:
            named = {"log": part.name} if len(logs) > 1 or part.role != LOG else {}
            merged = {**log_facts, **d.facts, **shared, **named}
            diagnoses.append(advise(dataclasses.replace(d, facts=merged, fixes=()), db))
    all_facts = {**log_facts, **facts}
    return ScanResult(source=source, diagnoses=_best(diagnoses), error="; ".join(errors) or None,
                      lines=lines, bytes_read=size, facts=all_facts)
