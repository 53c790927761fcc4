"""Scan one large plain file on several cores, with exactly the single-process result.

The streaming scanner's rounds sit on a fixed grid: round ``k`` reads bytes ``[k*CHUNK,
(k+1)*CHUNK)`` and its data starts where round ``k-1`` left its lookbehind, a place that depends
only on the file's bytes. So a worker can start at any round ``k``: it rebuilds round ``k-1``'s
carry from the file, replays round ``k-1`` dry (to know which lines that round already matched)
and scans rounds ``k``.. with the very data windows the single pass would use. Worker ``i``
numbers lines from its own start; the parent shifts them by the lines of the rounds before,
concatenates the hits in order and keeps the first ``MAX_HITS_PER_SIGNATURE`` per signature (one
for a fact read once, ``matcher.cap``).

Only an uncompressed, regular, unlimited file above ``MIN_BYTES`` is split, in the main thread
of a non-daemon process; ``DLLOGSCAN_JOBS=1`` turns it off. Any worker failure means one plain
single-process scan instead.
"""
from __future__ import annotations

import dataclasses
import io
import os
import threading
from typing import TYPE_CHECKING, BinaryIO

from . import limits
from .matcher import cap
from .output import RoundState, ScanOutput
from ..sources.streams import LimitedReader, PeekedStream

if TYPE_CHECKING:
    from .scanner import Scanner
    from ..signatures.database import Database

MIN_BYTES = 256 << 20
ENV = "DLLOGSCAN_JOBS"


def _pickle():
    import pickle  # noqa: PLC0415 - only a split scan pickles; a plain run never loads it

    return pickle


def jobs() -> int:
    """Worker count: ``DLLOGSCAN_JOBS`` when set (1 = never split), else the usable cores."""
    try:
        return max(1, int(os.environ[ENV]))
    except (KeyError, ValueError):
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def plain_file(stream: BinaryIO) -> tuple[int, int] | None:
    """``(fd, size)`` when ``stream`` is a regular uncompressed file read from its start, with no
    byte limit short of its end, and nothing read yet but the sniffed head; else None."""
    if not isinstance(stream, PeekedStream) or not isinstance(stream.inner, LimitedReader):
        return None
    reader = stream.inner
    buffered = reader.inner  # sources._decompressing: a BufferedReader over the file when plain
    raw = getattr(buffered, "raw", None)
    if not isinstance(buffered, io.BufferedReader) or not isinstance(raw, io.FileIO) or raw.closed:
        return None
    try:
        st = os.fstat(raw.fileno())
        pos = buffered.tell()
    except OSError:
        return None
    import stat  # noqa: PLC0415

    if not stat.S_ISREG(st.st_mode) or pos != len(stream.head) or reader.count != pos:
        return None
    if reader.limit is not None and reader.limit < st.st_size:
        return None
    return raw.fileno(), st.st_size


def try_parallel(scanner: "Scanner", stream: BinaryIO, min_bytes: int | None = None,
                 n_jobs: int | None = None) -> "ScanOutput | None":
    """The split scan of ``stream``, or None when it does not apply (the caller scans it)."""
    found = plain_file(stream)  # first: most streams are not one (a batch's never are)
    if found is None:
        return None
    n = n_jobs or jobs()
    if n < 2 or not _single_threaded() or limits.CHUNK <= limits.MAX_LINE + limits.LOOKAHEAD:
        return None
    fd, size = found
    if size < (MIN_BYTES if min_bytes is None else min_bytes):
        return None
    import multiprocessing  # noqa: PLC0415 - only for a file worth splitting

    if multiprocessing.current_process().daemon:
        return None
    full_rounds = size // limits.CHUNK
    n = min(n, full_rounds)
    if n < 2:
        return None
    bounds = [full_rounds * i // n for i in range(n)] + [None]
    try:
        return _run(scanner, fd, size, bounds)
    except Exception:  # noqa: BLE001 - any failure: the caller's single-process scan
        return None


def _single_threaded() -> bool:
    """Forking a process with other threads running can copy a lock some thread holds."""
    return threading.active_count() == 1


def _reader(fd: int, offset: int):
    pos = offset

    def read(size: int) -> bytes:
        nonlocal pos
        data = os.pread(fd, size, pos)
        pos += len(data)
        return data
    return read


def _work(scanner: "Scanner", fd: int, k0: int, k1: int | None) -> tuple[ScanOutput, int, int]:
    """Scan rounds ``[k0, k1)`` (to the end when ``k1`` is None): the output with lines numbered
    from this worker's data start, and the line numbers it gives the bytes at ``k0*CHUNK`` and
    ``k1*CHUNK``."""
    out = ScanOutput()
    st = RoundState(keep_prefix=False)
    dry = 0
    if k0 >= 1:
        dry = 1
        if k0 >= 2:  # rebuild the state round k0-1 starts from
            proc_end = (k0 - 1) * limits.CHUNK - limits.LOOKAHEAD
            keep = max(0, proc_end - limits.LOOKBEHIND)
            back = os.pread(fd, proc_end - keep, keep)
            nl = back.find(b"\n")
            keep = keep + nl + 1 if nl != -1 else keep
            st.carry = os.pread(fd, (k0 - 1) * limits.CHUNK - keep, keep)
            st.search_from, st.data_offset = proc_end - keep, keep
    read = _reader(fd, max(0, k0 - 1) * limits.CHUNK)
    rounds = None if k1 is None else k1 - k0 + dry
    if dry:  # the dry round's data ends at k0*CHUNK: its line count places the worker's start
        scanner.scan_rounds(read, out, st, rounds=1, dry=1)
        rounds = None if rounds is None else rounds - 1
    line_k0 = st.base_line + st.carry.count(b"\n")
    scanner.scan_rounds(read, out, st, rounds=rounds)
    line_k1 = st.base_line + st.carry.count(b"\n") if k1 is not None else 0
    return out, line_k0, line_k1


def _shift(pairs, by: int):
    return tuple((n + by, t) for n, t in pairs)


def _run(scanner: "Scanner", fd: int, size: int, bounds: list) -> ScanOutput:
    import multiprocessing  # noqa: PLC0415

    ctx = multiprocessing.get_context("fork")
    children = []
    for i in range(1, len(bounds) - 1):
        parent_end, child_end = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(child_end, scanner, fd, bounds[i], bounds[i + 1]), daemon=True)
        proc.start()
        child_end.close()
        children.append((proc, parent_end))
    parts = [_work(scanner, fd, bounds[0], bounds[1])]
    try:
        for proc, conn in children:
            status, payload = _pickle().loads(conn.recv_bytes())
            if status != "ok":
                raise RuntimeError(payload)
            parts.append(payload)
    finally:
        for proc, conn in children:
            conn.close()
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
    return _merge(parts, fd, size, scanner.db)


def _child(conn, scanner, fd: int, k0: int, k1: int | None) -> None:
    try:
        payload = ("ok", _work(scanner, fd, k0, k1))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which rescans
        payload = ("error", repr(exc))
    pickle = _pickle()
    conn.send_bytes(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
    conn.close()


def _merge(parts: list, fd: int, size: int, db: "Database") -> ScanOutput:
    """One ScanOutput as the single pass gives it: lines shifted, hits capped per signature (one
    for a fact read once: the first part's)."""
    out = ScanOutput(bytes_read=size, prefix=os.pread(fd, limits.KEEP_PREFIX, 0))
    line_at_start = 1  # absolute line number of the current worker's first byte
    seen: dict[str, int] = {}
    for part, line_k0, line_k1 in parts:
        if part.read_error:
            raise OSError(part.read_error)  # the caller rescans in one process and reports it
        shift = line_at_start - line_k0
        for hit in part.hits:
            seen[hit.signature] = seen.get(hit.signature, 0) + 1
            if seen[hit.signature] <= cap(db.by_id[hit.signature]):
                out.hits.append(dataclasses.replace(hit, line=hit.line + shift, before=_shift(hit.before, shift),
                                                    after=_shift(hit.after, shift)))
        out.counts.update(part.counts)
        out.folded = out.folded or part.folded
        if not out.head and part.head:
            out.head = list(_shift(part.head, shift))
        out.lines, out.tail = part.lines + shift, list(_shift(part.tail, shift))
        out.end, out.end_line = part.end, part.end_line + shift
        line_at_start += line_k1 - line_k0
    return out
