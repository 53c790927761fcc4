"""What a zip's central directory says, read so that it cannot mislead: member names as their
bytes spell them, and the compressed bytes really behind the members read (for the bomb ratio).

``batch/archives.py`` reads zips member by member; these are the facts it takes from ``zipfile``.
"""
from __future__ import annotations

import io
import os
import struct
import zipfile
from typing import BinaryIO

#: general-purpose flag bit 11: the name and comment are UTF-8 (APPNOTE 4.4.4)
UTF8_FLAG = 0x800
CENTRAL, LOCAL = b"PK\x01\x02", b"PK\x03\x04"
CENTRAL_SIZE, LOCAL_SIZE = 46, 30


def open_zip(raw: BinaryIO) -> zipfile.ZipFile:
    """``zipfile.ZipFile(raw)``, but a name flagged UTF-8 whose bytes are not UTF-8 does not
    make the whole archive unreadable: zipfile decodes such names strictly, so one bad name lost
    every member. Then the archive is read again with those entries' flag cleared as they are read
    (``_NamesMended``): their names come out as ``zip_name`` reads an unflagged name, bad bytes
    escaped, and every member is read."""
    try:
        return zipfile.ZipFile(raw)
    except UnicodeDecodeError:
        raw.seek(0)
        return zipfile.ZipFile(_NamesMended(raw))  # type: ignore[arg-type]


class _NamesMended:
    """A zip file read through, with the UTF-8 flag cleared on the central-directory entries whose
    name is not UTF-8 and on their local headers. zipfile reads the central directory in one read
    and each local header in one read of 30 bytes, so only the first read that starts with a
    directory entry and the reads of the mended entries' local headers are changed, record by
    record by their own lengths: a member's data is never touched."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.mended: set[int] = set()  # local-header offsets of the entries mended
        self.directory_read = False

    def read(self, n: int = -1) -> bytes:
        at = self.raw.tell()
        data = self.raw.read(n)
        if not self.directory_read and data.startswith(CENTRAL):
            self.directory_read = True  # once: a member's data may hold such bytes too
            return self._central(bytearray(data))
        if at in self.mended and data.startswith(LOCAL) and len(data) >= LOCAL_SIZE:
            flags = bytearray(data)
            struct.pack_into("<H", flags, 6, struct.unpack_from("<H", flags, 6)[0] & ~UTF8_FLAG)
            return bytes(flags)
        return data

    def _central(self, data: bytearray) -> bytes:
        pos = 0
        while data.startswith(CENTRAL, pos) and pos + CENTRAL_SIZE <= len(data):
            flags, = struct.unpack_from("<H", data, pos + 8)
            name_len, extra_len, comment_len = struct.unpack_from("<3H", data, pos + 28)
            offset, = struct.unpack_from("<L", data, pos + 42)
            name = bytes(data[pos + CENTRAL_SIZE:pos + CENTRAL_SIZE + name_len])
            if flags & UTF8_FLAG and not _is_utf8(name):
                struct.pack_into("<H", data, pos + 8, flags & ~UTF8_FLAG)
                self.mended.add(offset)
            pos += CENTRAL_SIZE + name_len + extra_len + comment_len
        return bytes(data)

    def seek(self, *args) -> int:
        return self.raw.seek(*args)

    def tell(self) -> int:
        return self.raw.tell()

    def seekable(self) -> bool:
        return True


def _is_utf8(name: bytes) -> bool:
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def zip_name(info: zipfile.ZipInfo, metadata_encoding: str | None = None) -> str:
    """The member's name decoded from its bytes as a tar's names are (UTF-8, a byte that is not
    UTF-8 kept as a lone surrogate, which ``core.names.printable`` shows as ``\\xff``).
    ``metadata_encoding``: the one the ZipFile was opened with, if any (its reading is kept).

    zipfile decodes a name without the UTF-8 flag as cp437, the format's old default, though
    Info-ZIP's ``zip`` writes the file system's bytes there and sets no flag: ``jöb.log`` came
    out ``j├╢b.log`` and ``bad\\xff.log`` as ``bad\\xa0.log``. cp437 maps all 256 bytes one to
    one, so encoding ``orig_filename`` back gives the bytes of the directory entry."""
    if info.flag_bits & UTF8_FLAG or metadata_encoding is not None:
        return info.filename
    try:
        raw = info.orig_filename.encode("cp437")
    except UnicodeEncodeError:  # a ZipInfo made by hand, not read from a directory
        return info.filename
    return _sanitized(raw.decode("utf-8", "surrogateescape"))


def local_name(raw: bytes) -> str:
    """A name as a local file header spells it (a zip read without its central directory): read
    as ``zip_name`` reads a name's bytes, flagged UTF-8 or not."""
    return _sanitized(raw.decode("utf-8", "surrogateescape"))


def _sanitized(name: str) -> str:
    """What zipfile does to every name: cut at a NUL, and ``/`` as the only separator."""
    name = name.split("\x00", 1)[0]
    return name.replace(os.sep, "/") if os.sep != "/" else name


def stream_size(stream: BinaryIO) -> int | None:
    """The size of a seekable ``stream``, its position kept; None when it cannot seek."""
    try:
        here = stream.tell()
        end = stream.seek(0, io.SEEK_END)
        stream.seek(here)
    except (OSError, ValueError, AttributeError):
        return None
    return end


class ZipSpent:
    """The compressed bytes behind the members of a zip read so far, for the archive's bomb
    ratio: the sum of their compressed sizes, never more than the archive itself holds.

    Central-directory entries may all point at the same compressed data (an overlapping-entry
    zip bomb): summed, 1 092 entries of one 2.8 MB member counted 3 GB compressed against the
    68 GB they inflate, under the 200x ratio, though the file is 3 MB."""

    def __init__(self, stream: BinaryIO) -> None:
        self.size = stream_size(stream)
        self.compressed = 0

    def add(self, info: zipfile.ZipInfo) -> None:
        self.compressed += info.compress_size

    def __call__(self) -> int:
        return self.compressed if self.size is None else min(self.compressed, self.size)
