"""What a zip's central directory says, read so that it cannot mislead: member names as their
bytes spell them, and the compressed bytes really behind the members read (for the bomb ratio).

``batch/archives.py`` reads zips member by member; these are the facts it takes from ``zipfile``.
"""
from __future__ import annotations

import io
import os
import zipfile
from typing import BinaryIO

#: general-purpose flag bit 11: the name and comment are UTF-8 (APPNOTE 4.4.4)
UTF8_FLAG = 0x800


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
