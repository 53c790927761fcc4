"""One archive, read once in this process while other processes scan its members.

A ``.tar.gz`` is one gzip stream, so one reader decompresses it; the members it reads are handed
to the pool in batches (``BATCH_BYTES`` or ``BATCH_MEMBERS``, whichever comes first) as bytes,
and their rows come back batch by batch while the next members are read: an archive of 300 000
members never holds its rows in memory. A member over ``SHIP_BYTES`` (or over the member limit)
is scanned here, streaming, as a single-process batch would. A member whose read fails midway
ships the bytes read and the error, and its worker sees the same bytes and then the same error.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Iterator

from ..sources import streams as sources
from .archives import Member, archive_kind, iter_archive
from .worker import Config, Record, error_record, member_record, scan_stream

SHIP_BYTES = 8 << 20
BATCH_BYTES = 8 << 20
BATCH_MEMBERS = 256


class Replay(io.RawIOBase):
    """A member's bytes read back, then the error its read ended with (if any)."""

    def __init__(self, data: bytes, error: BaseException | None) -> None:
        self._data, self._pos, self._error = data, 0, error

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._pos >= len(self._data):
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            return 0
        n = min(len(buffer), len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos: self._pos + n]
        self._pos += n
        return n


@dataclass(frozen=True)
class Shipped:
    """One member's bytes on their way to a worker."""

    path: str
    name: str
    mtime: float | None
    data: bytes
    error: BaseException | None = None

    def open(self):
        return sources._decompressing(Replay(self.data, self.error), self.name)  # noqa: SLF001


def scan_shipped(batch: list[Shipped], config: Config) -> list[Record]:
    """A worker's task: one record per shipped member."""
    return [scan_stream(m.path, m.name, m.open, config, m.mtime) for m in batch]


def _read(member: Member) -> tuple[bytes, BaseException | None]:
    parts: list[bytes] = []
    try:
        while True:
            piece = member.stream.read(1 << 20)  # type: ignore[union-attr]
            if not piece:
                return b"".join(parts), None
            parts.append(piece)
    except Exception as exc:  # noqa: BLE001 - the worker replays it where the scan would have met it
        return b"".join(parts), exc


def batches(path: str, config: Config) -> Iterator[list[Shipped] | Record]:
    """Batches of members to ship, and the records made here (errors, large members)."""
    try:
        raw = open(path, "rb")
    except OSError as exc:
        yield error_record(path, None, f"cannot read: {exc.strerror or exc}")
        return
    ship_limit = min(SHIP_BYTES, config.limits.member_bytes)
    batch: list[Shipped] = []
    size = 0
    with raw:
        for member in iter_archive(raw, archive_kind(path) or "tar", "", config.limits):  # type: ignore[arg-type]
            if member.error or member.stream is None or member.size > ship_limit:
                yield member_record(path, member, config)
                continue
            data, error = _read(member)
            batch.append(Shipped(path, member.name, member.mtime, data, error))
            size += len(data)
            if size >= BATCH_BYTES or len(batch) >= BATCH_MEMBERS:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch
