"""The decompressed stream under a ``.tar.gz``, which ends in an error where the data is cut.

``tarfile`` in stream mode (``r|gz``) decompresses by itself and stops quietly where the data
stops: an archive cut off between two members (or inside a header) loses its last members
without a word. Here the gzip stream is decompressed as ``tarfile`` would (every byte before the
cut is delivered, errors keep ``tarfile``'s texts), ``tarfile`` reads the plain tar from it, and a
stream that ends before the deflate data's last block raises "unexpected end of data": the batch
records the archive's error row.

The inflater is ``isal``'s (ISA-L, the ``fast`` extra: about 3.5x zlib's speed) when it is
installed, else zlib's; both give the same bytes and, through this module, the same errors.
Other compressions (bzip2, xz) are still read by ``tarfile`` itself.
"""
from __future__ import annotations

import io
import struct
import tarfile
import zlib
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b\x08"
RECORD = tarfile.RECORDSIZE  # what tarfile reads at a time
DRAIN_BYTES = 64 << 20  # inflated past where tarfile stopped, at most, to reach the trailer


def _inflater():
    """A raw-deflate inflater (the gzip header is read here, the trailer by ``GzipStream``)
    and the error class of its library."""
    try:
        from isal import isal_zlib  # noqa: PLC0415 - optional (the fast extra)
    except ImportError:
        return zlib.decompressobj(-zlib.MAX_WBITS), zlib.error
    return isal_zlib.decompressobj(-isal_zlib.MAX_WBITS), isal_zlib.error


def _crc32():
    """The CRC-32 of the gzip trailer: ISA-L's where installed (about 20 GB/s), else zlib's (4)."""
    try:
        from isal import isal_zlib  # noqa: PLC0415 - optional (the fast extra)
    except ImportError:
        return zlib.crc32
    return isal_zlib.crc32


def _skip_header(raw: BinaryIO) -> None:
    """Read past a gzip header whose 3 magic bytes are already read, as tarfile does (a short
    header is left to the inflater, which then finds no data)."""
    def take(n: int) -> bytes:
        return raw.read(n) or b""

    flag = take(1)
    flag = flag[0] if flag else 0
    take(6)  # mtime, extra flags, OS
    if flag & 4:  # FEXTRA
        size = take(2)
        take(size[0] + 256 * size[1] if len(size) == 2 else 0)
    for bit in (8, 16):  # FNAME, FCOMMENT: NUL-terminated
        if flag & bit:
            while (c := take(1)) and c != b"\0":
                pass
    if flag & 2:  # FHCRC
        take(2)


class GzipStream(io.RawIOBase):
    """The inflated bytes of one gzip stream read from ``raw`` (past its 3 magic bytes), as
    ``tarfile``'s own ``r|gz`` reader makes them: the header skipped, the file read in records of
    ``RECORD`` bytes, each inflated whole as raw deflate. Where the file ends before the gzip stream does, or a record holds bad
    data, the bytes inflated before are delivered and the stream then ends quietly (``tarfile``
    asks for whole records and drops those it gathered when a read raises: the last lines of a
    member the cut falls in, up to 4 MB, and until session 63 all a corrupt member had inflated);
    "unexpected end of data" or "invalid compressed data" is raised by ``finish`` (``why`` tells
    which), ``tarfile`` meanwhile finding the member it reads, or its next header, short. Bad data
    that still inflates (garbled text, a garbled header where ``tarfile`` quietly stops) is caught
    by the trailer's CRC-32, which tarfile does not check: ``finish`` reads the data to its end
    for it and raises "CRC check failed"."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        _skip_header(raw)
        self.inflater, self.errors = _inflater()
        self.crc32, self.crc, self.size = _crc32(), 0, 0  # of the bytes inflated, for the trailer
        self.pending: BaseException | None = None
        self.done = False
        self.buffer, self.pos = b"", 0  # inflated bytes, and how many of them were read

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self.buffer) - self.pos < size) and not self.done:
            data = self.raw.read(RECORD)  # an error reading the file passes as it is
            if not data:
                self.done = True
                self.pending = tarfile.ReadError("unexpected end of data")
                break
            try:
                out = self.inflater.decompress(data)
            except self.errors as exc:  # what came before is delivered, as where the data is cut
                self.done = True
                self.pending = tarfile.ReadError("invalid compressed data")
                self.pending.__cause__ = exc
                break
            self.buffer, self.pos = self.buffer[self.pos:] + out, 0
            self.crc, self.size = self.crc32(out, self.crc), self.size + len(out)
            if self.inflater.eof:  # the deflate data ended: its trailer is checked, what follows is not read
                self.done = True
                self._check_trailer()
        end = len(self.buffer) if size < 0 else self.pos + size
        out, self.pos = self.buffer[self.pos:end], min(end, len(self.buffer))
        return out

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def why(self) -> str:
        """What a member the data ended inside says: cut short, or corrupt."""
        if self.pending is not None and self.pending.__cause__ is not None:
            return "the compressed data is corrupt inside this member"  # the same text from zlib and isal
        return "the archive ends inside this member"

    def _check_trailer(self) -> None:
        """A whole trailer whose CRC-32 or length is not the data's: bad data that still
        inflated (a trailer cut short is no error: tarfile never reads it)."""
        trailer = self.inflater.unused_data[:8]
        if len(trailer) < 8:
            trailer += self.raw.read(8 - len(trailer)) or b""
        if len(trailer) == 8 and struct.unpack("<II", trailer) != (self.crc, self.size & 0xFFFFFFFF):
            self.pending = tarfile.ReadError("CRC check failed (the compressed data is corrupt)")

    def finish(self) -> None:
        """Read the data to its end (tarfile stops at the archive's end blocks, or quietly at a
        header that bad data garbled; up to ``DRAIN_BYTES`` more, so that data hidden past the
        tar's end costs no more) and raise the failure that ended it, or a CRC that does not
        match, if one did and it was not raised yet."""
        start = self.size
        while not self.done and self.size - start < DRAIN_BYTES:  # more past the tar's end: unchecked
            self.buffer, self.pos = b"", 0
            self.read(RECORD * 8)
        if self.pending is not None:
            exc, self.pending = self.pending, None
            raise exc
