"""Zips that ``zipfile`` does not write: central-directory entries sharing one member's data (an
overlapping-entry bomb), and names stored as raw bytes with no UTF-8 flag (Info-ZIP's ``zip``)."""
from __future__ import annotations

import io
import struct
import zipfile

EOCD = struct.Struct("<IHHHHIIH")  # end of central directory record, no comment


def log_text(size: int) -> bytes:
    """``size`` bytes of a log that deflates about 20x, as a training log does (under the 200x
    ratio per member: only the archive's ratio can stop a bomb made of it)."""
    lines = (b"step %d loss 0.%d\n" % (i, i * 7919 % 10) if i % 8 == 0 else b"loss ok\n"
             for i in range(size // 8 + 1))
    return b"".join(lines)[:size]


def overlapping_zip(name: str, data: bytes, copies: int) -> bytes:
    """One deflated member whose central-directory entry is repeated ``copies`` times (< 65 536):
    every entry points at the same local header and compressed bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(name, data)
    raw = buf.getvalue()
    sig, _, _, _, _, cd_size, cd_offset, _ = EOCD.unpack(raw[-EOCD.size:])
    directory = raw[cd_offset:cd_offset + cd_size] * copies
    return raw[:cd_offset] + directory + EOCD.pack(sig, 0, 0, copies, copies, len(directory), cd_offset, 0)


def raw_name_zip(members: dict[bytes, bytes], utf8_flag: bool = False) -> bytes:
    """A zip whose names are these bytes, flag bit 11 (UTF-8) unset, as Info-ZIP's ``zip`` stores
    a Linux file name: written under ASCII stand-ins of the same length, then swapped in. With
    ``utf8_flag`` every entry claims UTF-8 whatever its bytes (a careless or crafted writer)."""
    stand_ins = {name: chr(ord("Q") + i).encode() * len(name) for i, name in enumerate(members)}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(stand_ins[name].decode(), data)
    raw = buf.getvalue()
    for name, stand_in in stand_ins.items():
        assert raw.count(stand_in) == 2  # the local header and the central directory
        raw = raw.replace(stand_in, name)
    return _flagged_utf8(raw) if utf8_flag else raw


def _flagged_utf8(raw: bytes) -> bytes:
    """``raw`` with flag bit 11 set in every local header and central-directory entry (zipfile's
    writer sets it itself only for names that are not ASCII)."""
    data = bytearray(raw)
    for signature, at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = data.find(signature)
        while pos != -1:
            data[at + pos + 1] |= 0x08  # 0x800, little-endian: the flag word's high byte
            pos = data.find(signature, pos + 1)
    return bytes(data)
