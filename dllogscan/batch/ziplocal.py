"""A zip whose central directory is gone, read member by member from its local file headers.

``zipfile`` finds a zip's members through the central directory at its end, so a zip cut short
anywhere before that end is "not a zip file" and every member is lost. Each member's data is
also preceded by a local file header (APPNOTE 4.3.7: signature ``PK\\3\\4``, flags, method, CRC,
compressed and uncompressed sizes, name, extra field); this reads those in order, as a stream.
Deflated members are inflated by zlib and stored ones passed through; a member whose sizes the
header leaves to a data descriptor after its data (flag bit 3) ends where its deflate data ends,
and a stored one written so, whose end cannot be found, ends the read. The member the archive
ends inside gives its bytes, then ``CutShort``; a member read to its end whose CRC-32 (the
header's, or its data descriptor's) does not match what it gave gives its bytes, then
``BadCrc``, and the next member is read. The archive's limits hold as ``archives.py``
applies them to a whole zip: sizes a header states are checked before reading, and every byte
inflated counts in the archive's bomb ratio (``Tally``) as it comes out.
"""
from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, BinaryIO, Iterator

from ..sources.archives import LOCAL, local_name
from ..sources.streams import CutShort

if TYPE_CHECKING:
    from .archives import Limits, Tally

HEADER = struct.Struct("<4sHHHHHIIIHH")
STORED, DEFLATED = 0, 8
DESCRIPTOR_FLAG, ENCRYPTED_FLAG = 0x8, 0x1
DESCRIPTOR = b"PK\x07\x08"
ENDS = (b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06")  # the central directory or its end: no more members
ZIP64_EXTRA = 0x0001
PIECE = 64 << 10
BAD_CRC = "the member's CRC-32 does not match its data (the data is corrupt)"


class ArchiveBomb(OSError):
    """The archive inflated more than its limits allow while a member was read."""


class BadCrc(CutShort):
    """A member read to its end whose bytes do not have the CRC-32 its header or data descriptor
    states: corrupt data that still inflated. Its end was found, so the next member can be read."""


@dataclass
class LocalHeader:
    """What one local file header says of its member."""

    name: str
    flags: int
    method: int
    compressed: int
    size: int
    mtime: float | None
    zip64: bool
    crc: int = 0  # as the header states it; a data descriptor's instead where ``sized`` is False

    @property
    def sized(self) -> bool:
        """Whether the header states the sizes (else a data descriptor after the data does)."""
        return not self.flags & DESCRIPTOR_FLAG


class Source:
    """The archive's bytes in order; what a member's inflater did not take is put back, so that
    ``consumed`` counts the compressed bytes really behind what was inflated (the bomb ratio)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw, self.back, self.taken = raw, b"", 0

    def read(self, n: int) -> bytes:
        """Up to ``n`` bytes; fewer only where the archive ends."""
        data, self.back = self.back[:n], self.back[n:]
        while len(data) < n:
            more = self.raw.read(n - len(data))
            if not more:
                break
            self.taken += len(more)
            data += more
        return data

    def unread(self, data: bytes) -> None:
        self.back = data + self.back

    def consumed(self) -> int:
        return self.taken - len(self.back)

    def skip(self, n: int) -> bool:
        """Read past ``n`` bytes; False where the archive ends first."""
        while n > 0:
            got = len(self.read(min(n, PIECE)))
            if not got:
                return False
            n -= got
        return True


def read_header(src: Source) -> LocalHeader | None:
    """The next member's local header; None where the members end (the central directory, or
    the archive's end); ValueError where neither is there, or the header is cut."""
    head = src.read(HEADER.size)
    if not head or head[:4] in ENDS:
        return None
    if len(head) < HEADER.size or head[:4] != LOCAL:
        raise ValueError("the archive ends inside a local header" if LOCAL.startswith(head[:4]) and len(head) < HEADER.size
                         else "no local file header where the next member should start")
    _, _, flags, method, time, date, crc, compressed, size, name_len, extra_len = HEADER.unpack(head)
    raw_name, extra = src.read(name_len), src.read(extra_len)
    if len(raw_name) < name_len or len(extra) < extra_len:
        raise ValueError("the archive ends inside a local header")
    zip64 = _zip64_sizes(extra)
    if zip64 is not None and (size == 0xFFFFFFFF or compressed == 0xFFFFFFFF):
        size, compressed = zip64
    name = local_name(raw_name)
    return LocalHeader(name, flags, method, compressed, size, _dos_time(date, time), zip64 is not None, crc)


def _zip64_sizes(extra: bytes) -> tuple[int, int] | None:
    """The uncompressed and compressed sizes of a zip64 extra field (APPNOTE 4.5.3), if any."""
    pos = 0
    while pos + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, pos)
        if kind == ZIP64_EXTRA and length >= 16:
            return struct.unpack_from("<QQ", extra, pos + 4)  # type: ignore[return-value]
        pos += 4 + length
    return None


def _dos_time(date: int, time: int) -> float | None:
    try:
        return datetime((date >> 9) + 1980, (date >> 5) & 0xF, date & 0x1F,
                        time >> 11, (time >> 5) & 0x3F, (time & 0x1F) * 2).timestamp()
    except (ValueError, OverflowError):
        return None


class LocalMember(io.RawIOBase):
    """One member's bytes, inflated as they are read; ``finish`` reads past what is left of it.
    Every byte inflated counts in ``tally``; past the archive's ratio, ``ArchiveBomb(bomb)``."""

    def __init__(self, src: Source, header: LocalHeader, limits: "Limits", tally: "Tally", bomb: str) -> None:
        self.src, self.header, self.limits, self.tally, self.bomb = src, header, limits, tally, bomb
        self.left = header.compressed if header.sized else None  # compressed bytes still to read
        self.inflater = zlib.decompressobj(-zlib.MAX_WBITS) if header.method == DEFLATED else None
        self.done = False
        self.broken: BaseException | None = None  # what ended it before its end: the rest cannot be found
        self.pending: BaseException | None = None  # that, still to be raised to the reader
        self.crc, self.checked = 0, False  # the CRC-32 of the bytes given; whether it was compared
        self.trailer: BaseException | None = None  # a data descriptor cut short, raised by ``finish``

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        """``size`` bytes (all of them when negative), fewer only at the member's end; what ended
        it early is raised on the read after the bytes it delivered."""
        if self.pending is not None:
            error, self.pending = self.pending, None
            raise error
        parts, got = [], 0
        while not self.done and self.broken is None and (size is None or size < 0 or got < size):
            try:
                piece = self._piece(PIECE * 16 if size is None or size < 0 else size - got)
            except BadCrc as exc:  # the member ended: the bytes stand, its error follows them
                if not parts:
                    raise
                self.pending = exc
                break
            except (zlib.error, CutShort, ArchiveBomb) as exc:
                self.broken = exc
                if not parts:
                    raise
                self.pending = exc
                break
            parts.append(piece)
            got += len(piece)
        return b"".join(parts)

    def _piece(self, want: int) -> bytes:
        data = self._inflate(want) if self.inflater is not None else self._stored(want)
        if data and not self.tally.add(len(data), self.limits):
            raise ArchiveBomb(self.bomb)
        self.crc = zlib.crc32(data, self.crc)
        if self.done and not self.checked:
            self._check(data)
        return data

    def _check(self, data: bytes) -> None:
        """At the member's end, its CRC-32 against the header's or the data descriptor's."""
        self.checked = True
        stated = self.header.crc
        if not self.header.sized:
            try:
                stated = self._descriptor()
            except CutShort as exc:  # the members after it cannot be found: ``finish`` says so
                self.trailer = exc
                return
        if stated != self.crc:
            if data:  # the bytes of this read first, the error on the next
                self.pending = BadCrc(BAD_CRC)
            else:
                raise BadCrc(BAD_CRC)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _input(self) -> bytes:
        n = PIECE if self.left is None else min(PIECE, self.left)
        data = self.src.read(n) if n else b""
        if self.left is not None:
            self.left -= len(data)
        return data

    def _unread(self, data: bytes) -> None:
        self.src.unread(data)
        if self.left is not None:
            self.left += len(data)

    def _stored(self, want: int) -> bytes:
        n = min(want, self.left or 0)
        data = self.src.read(n) if n else b""
        self.left = (self.left or 0) - len(data)
        if len(data) < n:
            raise CutShort("the archive ends inside this member")
        if not self.left:
            self.done = True
        return data

    def _inflate(self, want: int) -> bytes:
        inflater = self.inflater
        while True:
            data = self._input()
            if not data:
                if self.left == 0:
                    raise zlib.error("the member's deflate data ends before its end marker")
                raise CutShort("the archive ends inside this member")
            out = inflater.decompress(data, want)  # type: ignore[union-attr]
            if inflater.eof:  # type: ignore[union-attr]
                # past the end: unused_data (unconsumed_tail may hold the same bytes again)
                self._unread(inflater.unused_data)  # type: ignore[union-attr]
                self.done = True
                if self.left and not self.src.skip(self.left):  # stated bytes past deflate's end
                    raise CutShort("the archive ends inside this member")
                self.left = 0 if self.left is not None else None
            else:
                self._unread(inflater.unconsumed_tail)  # type: ignore[union-attr]
            if out or self.done:
                return out

    def finish(self) -> None:
        """Read past the rest of the member and its data descriptor, to the next header.
        Raises what ended it (a cut, a corruption, a bomb): the members after it cannot be found."""
        if self.broken is not None:
            raise self.broken
        if not self.done and self.left is not None:  # its size is stated: skipped, not inflated
            if not self.src.skip(self.left):
                raise CutShort("the archive ends inside this member")
            self.left, self.done = 0, True
        try:
            while not self.done:  # deflate data of unstated size: inflated to its end marker
                self._piece(PIECE * 16)
        except BadCrc:  # its row was given before its end was read; the next member is found
            pass
        if self.trailer is not None:  # the data descriptor, read at the end of the data (``_check``)
            raise self.trailer

    def _descriptor(self) -> int:
        """Read past the data descriptor, CRC and both sizes (8 bytes each in zip64), after a
        signature that a writer may leave out; its CRC."""
        body = 20 if self.header.zip64 else 12
        head = self.src.read(4)
        signed = head == DESCRIPTOR
        rest = self.src.read(body if signed else body - 4)
        if len(head) < 4 or len(rest) < (body if signed else body - 4):
            raise CutShort("the archive ends inside this member's data descriptor")
        return struct.unpack_from("<I", rest if signed else head)[0]


def not_read(header: LocalHeader) -> str:
    """Why a member that ``members`` gives no reader is not read."""
    if header.flags & ENCRYPTED_FLAG:
        return "encrypted zip member; not read"
    if header.method not in (STORED, DEFLATED):
        return f"zip member compressed with method {header.method}, read only through the central directory; not read"
    return "stored zip member whose size follows its data: its end cannot be found without the central directory; not read"


def members(raw: BinaryIO, limits: "Limits", tally: "Tally",
            bomb: str) -> Iterator[tuple[LocalHeader, LocalMember | None]]:
    """Each member's header and its reader (None for one neither stored nor deflated, or
    encrypted); once the caller is done with it, the rest of its data is read past. ``bomb``: the
    error a reader raises past the archive's ratio. Raises ValueError, or what ended a member
    (``LocalMember.finish``), where the read cannot go on."""
    src = Source(raw)
    if tally.consumed is None:
        tally.consumed = src.consumed
    while (header := read_header(src)) is not None:
        readable = header.method in (STORED, DEFLATED) and not header.flags & ENCRYPTED_FLAG
        if not header.sized and (not readable or header.method == STORED):
            yield header, None
            raise ValueError(f"the end of {header.name} cannot be found without the central directory")
        member = LocalMember(src, header, limits, tally, bomb) if readable else None
        yield header, member
        if member is not None:
            member.finish()
        elif not src.skip(header.compressed):
            raise CutShort("the archive ends inside this member")
