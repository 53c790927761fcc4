"""The unit of work a process (or a Dask worker) runs: a chunk of files or one archive in,
one compact ``Record`` per source out (hits reduced to what the cross-file pass needs)."""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import BinaryIO, Iterator

from ..pipeline import runner as pipeline
from ..sources import streams as sources
from ..core.models import ScanResult
from ..signatures.database import Database
from ..signatures.loader import load_database
from . import layouts
from .archives import LINK_TAIL, Limits, Member, archive_kind, iter_archive
from .clock import Clock
from .probe import TapReader, TimedScanner


@dataclass(frozen=True)
class Config:
    """What every worker needs to scan like the others (picklable, small)."""

    signatures: tuple[str, ...] = ()
    default_signatures: bool = True
    engine: str = "auto"
    min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE
    limits: Limits = field(default_factory=Limits)
    classifier: str = "weak"


@dataclass(frozen=True)
class Event:
    """A cause line another source may need: a kernel OOM kill, a Slurm oom-kill event."""

    signature: str
    line: int
    text: str
    pid: str | None = None
    process: str | None = None
    job: str | None = None
    time: str | None = None


@dataclass(frozen=True)
class Record:
    """One scanned source: its result (without raw hits), its metadata and its cause events."""

    result: ScanResult
    meta: dict[str, str]
    events: tuple[Event, ...] = ()


@lru_cache(maxsize=4)
def database(config: Config) -> Database:
    return load_database(config.signatures, include_default=config.default_signatures)


@lru_cache(maxsize=4)
def scanner(config: Config) -> TimedScanner:
    return TimedScanner(database(config), engine=config.engine)


def _events(result: ScanResult, db: Database, meta: dict[str, str]) -> tuple[Event, ...]:
    out = []
    for hit in result.hits:
        sig = db.by_id.get(hit.signature)
        if sig is None or sig.role != "cause" or not (sig.subclass or "").startswith("oom"):
            continue
        out.append(Event(sig.id, hit.line, hit.text, hit.facts.get("pid"), hit.facts.get("process"),
                         hit.facts.get("job_id", meta.get("job") if "pid" not in hit.facts else None),
                         hit.facts.get("time")))
    return tuple(out)


def scan_stream(name: str, member: str | None, opener, config: Config, mtime: float | None) -> Record:
    """Scan one source opened by ``opener`` (a path's or a member's stream)."""
    scan = scanner(config)
    year = datetime.fromtimestamp(mtime).year if mtime else None
    taps: list[TapReader] = []
    # one clock per log, over its head (complete by the first hit: the scanner reads 4 MB rounds)
    clock = scan.clock = Clock(lambda: taps[0].head if taps else b"", year)
    meta = layouts.from_name(member or name)

    def tapped() -> BinaryIO:
        tap = TapReader(opener())
        taps.append(tap)
        return tap  # type: ignore[return-value]

    label = f"{name}!/{member}" if member else name
    try:
        result = pipeline.run(sources.Source(label, tapped), scan, config.min_confidence,
                              config.classifier)
    except Exception as exc:  # noqa: BLE001 - a bad source is a row, never a stopped batch
        text = (str(exc) or type(exc).__name__).splitlines()[0][:200]
        result = ScanResult(source=label, error=f"{label}: cannot read: {text}")
    if taps:
        meta = layouts.merge(meta, layouts.from_content(taps[0].head, taps[0].tail, year, clock,
                                                             taps[0].whole))
    meta = layouts.folder_node(meta, member or name)
    events = _events(result, database(config), meta)  # from the hits, which the record leaves out
    return Record(ScanResult(source=name, diagnoses=result.diagnoses, error=result.error, lines=result.lines,
                             bytes_read=result.bytes_read, facts=result.facts, member=member,
                             document=result.document, notes=result.notes), meta, events)


def error_record(name: str, member: str | None, message: str) -> Record:
    label = f"{name}!/{member}" if member else name
    meta = layouts.folder_node(layouts.from_name(member or name), member or name)
    return Record(ScanResult(source=name, member=member, error=f"{label}: {message}"), meta)


def _not_regular(path: str, mode: int) -> str:
    """Why a path the walk listed is not read: a link to a directory (never followed) is a
    link's row, anything else (a FIFO, a socket, a device) an unreadable one."""
    if stat.S_ISDIR(mode):
        return f"is a link to a directory{LINK_TAIL}" if os.path.islink(path) else _unlisted(path)
    what = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")
    return f"is {what}, not a regular file; not read"


def _unlisted(path: str) -> str:
    """Why a directory the walk passed on as a row was not read: the walk could not list it
    (no permission, a name too long), and saying "is a directory" would hide that."""
    try:
        os.scandir(path).close()
    except OSError as exc:
        return f"cannot list the folder: {exc.strerror or exc}"
    return "is a directory; not read"


def _file(path: str, config: Config) -> Iterator[Record]:
    try:
        st = os.stat(path)
    except OSError as exc:
        yield error_record(path, None, f"cannot read: {exc.strerror or exc}")
        return
    if not stat.S_ISREG(st.st_mode):
        yield error_record(path, None, _not_regular(path, st.st_mode))
        return
    kind = archive_kind(path)
    if kind is None:  # read whole, as ``dllogscan FILE`` reads it (no --max-bytes here either)
        src = sources.from_path(path, st=st)
        yield scan_stream(path, None, src.open, config, st.st_mtime)
        return
    try:
        raw = open(path, "rb")
    except OSError as exc:
        yield error_record(path, None, f"cannot read: {exc.strerror or exc}")
        return
    with raw:
        for member in iter_archive(raw, kind, "", config.limits):  # type: ignore[arg-type]
            yield member_record(path, member, config)


def member_record(path: str, member: Member, config: Config) -> Record:
    """Scan one archive member as it streams past (or record why it cannot be read)."""
    if member.error or member.stream is None:
        return error_record(path, member.name or None, member.error or "not read")
    stream = member.stream
    record = scan_stream(path, member.name, lambda: sources._decompressing(stream, member.name),  # noqa: SLF001
                         config, member.mtime)
    if getattr(stream, "cut", False) and not record.result.error:
        return _cut(record, config.limits.member_bytes)
    return record


def _cut(record: Record, limit: int) -> Record:
    """``record`` of a member read only up to the batch's member limit, saying so."""
    r = record.result
    error = (f"{r.source}!/{r.member}: member cut at {limit:,} bytes (the batch's limit for one archive "
             "member, Limits.member_bytes); scanned what came before")
    return replace(record, result=replace(r, error=error))


def iter_chunk(paths: list[str], config: Config) -> Iterator[Record]:
    """Scan every path of a chunk (an archive counts as all of its members), one record at a
    time as each is done."""
    for path in paths:
        try:
            yield from _file(path, config)
        except Exception as exc:  # noqa: BLE001 - never lose the rest of the chunk
            yield error_record(path, None, f"cannot read: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}")


def process_chunk(paths: list[str], config: Config) -> list[Record]:
    """A pool task: the records of a chunk, all together."""
    return list(iter_chunk(paths, config))


def warm(config: Config) -> None:
    """Load the database and build the scanner (its prefilter) here, so that processes forked
    from this one start with both, and a prefilter that cannot be built is one error before any
    work. Patterns are left to compile on first use in each worker: the bench's job logs need
    19 of the 71 shipped ones (12 ms in each worker at once, where all 71 took 25-30 ms here
    before any worker started)."""
    scanner(config)
