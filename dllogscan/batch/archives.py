"""Read archive members as streams, never extracting to disk, within explicit limits.

``.tar`` (plain, gzip, bzip2, xz) is read in stream mode (gzip inflated by ``tarstream.py``,
the rest by ``r|*``), ``.zip`` member by member; an archive inside an archive is opened the same
way down to ``Limits.depth``. A corrupt or truncated archive, an oversized member or a compression
bomb yields an error for that name and never an exception. The bomb ratio is taken over the whole
archive, nested archives included (``Tally``): what all levels inflated against the compressed
bytes of the outermost one, so neither a bomb split over many members nor one split over nested
archives escapes it.
"""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile
import zlib
from contextlib import contextmanager
from datetime import datetime
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator

from ..sources.archives import ZipSpent, open_zip, zip_name
from ..sources.streams import MAX_INFLATE_RATIO, STREAM_ERRORS, CutShort, LimitedReader, PeekedStream
from . import tarstream, ziplocal

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
ZIP_SUFFIXES = (".zip",)
ARCHIVE_ERRORS = STREAM_ERRORS + (tarfile.TarError, zipfile.BadZipFile, zlib.error, NotImplementedError,
                                  RuntimeError)


@dataclass(frozen=True)
class Limits:
    """Archive safety limits (bytes are decompressed bytes)."""

    member_bytes: int = 1 << 30
    total_bytes: int = 64 << 30
    members: int = 1_000_000
    depth: int = 3
    nested_zip_bytes: int = 256 << 20
    ratio: int = MAX_INFLATE_RATIO
    ratio_floor: int = 64 << 20


@dataclass
class Member:
    """One member, open for reading now (the next member is not readable before it is done)."""

    name: str
    stream: BinaryIO | None
    size: int
    mtime: float | None = None
    error: str | None = None


@dataclass
class Tally:
    """Bytes inflated so far by every level of one archive, and how many compressed bytes of the
    outermost level were read for them (the first level to run sets ``consumed``)."""

    inflated: int = 0
    consumed: Callable[[], int] | None = None

    def add(self, size: int, limits: Limits) -> bool:
        """Count a member of ``size``; False when the archive as a whole looks like a bomb."""
        self.inflated += size
        consumed = max(self.consumed() if self.consumed else 0, 1)
        return not (self.inflated > limits.ratio_floor and self.inflated > limits.ratio * consumed)


BOMB_ERROR = "archive decompresses more than {}x its size (a compression bomb?); rest not read"
LINK_TAIL = " (links are not followed); not scanned"  # a link's row: its target is read as itself, so nothing is lost


def is_link(error: str | None) -> bool:
    """Whether a row's ``error`` says the source was a link (counted neither as read nor as lost)."""
    return bool(error) and error.endswith(LINK_TAIL)  # type: ignore[union-attr]


def _not_regular(info: tarfile.TarInfo) -> str:
    """Why a tar member that holds no file of its own is not scanned."""
    if info.issym():
        return f"is a symbolic link to {info.linkname}{LINK_TAIL}"
    if info.islnk():
        return f"is a hard link to {info.linkname}, scanned under that name{LINK_TAIL}"
    what = "a FIFO entry" if info.isfifo() else "a device entry" if info.isdev() else \
        f"an entry of tar type {info.type.decode('latin-1')!r}"
    return f"is {what}, not a regular file; not scanned"


def archive_kind(name: str) -> str | None:
    low = name.lower()
    if low.endswith(TAR_SUFFIXES):
        return "tar"
    if low.endswith(ZIP_SUFFIXES):
        return "zip"
    return None


class TarMember(io.RawIOBase):
    """A regular member's bytes read straight from ``tf``'s stream: as many as the archive holds,
    then ``CutShort`` where it ends inside the member (tarfile's own reader drops the bytes of a
    read that comes up short, and the end of a cut log is where its failure is). ``tarfile``'s next
    header read then finds the stream short and raises its own "unexpected end of data"."""

    def __init__(self, tf: tarfile.TarFile, info: tarfile.TarInfo, gzip: "tarstream.GzipStream | None") -> None:
        self.stream, self.left, self.cut, self.gzip = tf.fileobj, info.size, False, gzip
        self.stream.seek(info.offset_data)  # type: ignore[union-attr]

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.cut:
            self.cut = False
            raise CutShort(self.gzip.why() if self.gzip is not None else "the archive ends inside this member")
        want = self.left if size < 0 else min(size, self.left)
        data = self.stream.read(want) if want > 0 else b""  # type: ignore[union-attr]
        self.left -= len(data)
        if len(data) < want:
            self.left, self.cut = 0, True
            if not data:
                return self.read()
        return data

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class CountingReader(io.RawIOBase):
    """Counts the compressed bytes an archive reader consumed (for the bomb ratio)."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner, self.count = inner, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        self.count += len(data)
        return data


def iter_archive(stream: BinaryIO, kind: str, prefix: str, limits: Limits, depth: int = 0,
                 tally: Tally | None = None) -> Iterator[Member]:
    """Members of the archive in ``stream`` (names prefixed with ``prefix``), nested ones opened."""
    tally = tally or Tally()
    try:
        if kind == "tar":
            yield from _iter_tar(stream, prefix, limits, depth, tally)
        else:
            yield from _iter_zip(stream, prefix, limits, depth, tally)
    except ARCHIVE_ERRORS as exc:
        yield Member(prefix[:-2] if prefix.endswith("!/") else prefix, None, 0,
                     error=f"corrupt or truncated archive: {_one_line(exc)}; members after this point not read")


def _zip_target(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    try:
        with zf.open(info) as f:
            return f.read(256).decode("utf-8", "replace").splitlines()[0] or "?"
    except (*ARCHIVE_ERRORS, IndexError):
        return "?"


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "unexpected end of data"
    return (str(exc) or type(exc).__name__).splitlines()[0][:200]


def _nested(stream: BinaryIO, name: str, size: int, limits: Limits, depth: int, tally: Tally) -> Iterator[Member]:
    kind = archive_kind(name)
    if depth + 1 > limits.depth:
        yield Member(name, None, size, error=f"nested archive deeper than {limits.depth} levels; not read")
        return
    if kind == "zip":
        if size > limits.nested_zip_bytes:
            yield Member(name, None, size, error=f"nested zip larger than {limits.nested_zip_bytes >> 20} MiB; not read")
            return
        stream = io.BytesIO(stream.read(limits.nested_zip_bytes))  # zip needs to seek
    yield from iter_archive(stream, kind or "tar", name + "!/", limits, depth + 1, tally)


def _iter_tar(raw: BinaryIO, prefix: str, limits: Limits, depth: int, tally: Tally) -> Iterator[Member]:
    counted = CountingReader(raw)
    if tally.consumed is None:
        tally.consumed = lambda: counted.count
    total = count = 0
    tf, plain = open_tar(counted)
    with tf, _told(plain):
        for info in tf:
            if info.isdir():
                continue
            count += 1
            name = prefix + info.name
            if count > limits.members:
                yield Member(name, None, info.size, error=f"archive has more than {limits.members} members; rest not read")
                return
            if not info.isfile():
                yield Member(name, None, 0, error=_not_regular(info))
                continue
            total += info.size
            if total > limits.total_bytes:
                yield Member(name, None, info.size, error=f"archive holds more than {limits.total_bytes >> 30} GiB; rest not read")
                return
            if not tally.add(info.size, limits):
                yield Member(name, None, info.size, error=BOMB_ERROR.format(limits.ratio))
                return
            stream = tf.extractfile(info) if info.sparse is not None else TarMember(tf, info, plain)
            if stream is None:
                continue
            if archive_kind(info.name):
                yield from _nested(stream, name, info.size, limits, depth, tally)
                continue
            yield Member(name, LimitedReader(stream, limits.member_bytes, name), info.size, info.mtime)  # type: ignore[arg-type]
        if plain is not None:
            plain.finish()  # the data stopped short of the archive's end: say so


@contextmanager
def _told(plain: "tarstream.GzipStream | None") -> Iterator[None]:
    """Where ``tarfile`` fails on the data a gzip stream stopped short of giving it (its next
    header found short), the stream's own failure is raised instead: bad data says so."""
    try:
        yield
    except ARCHIVE_ERRORS:
        if plain is not None:
            plain.finish()
        raise


def open_tar(raw: CountingReader) -> tuple[tarfile.TarFile, "tarstream.GzipStream | None"]:
    """A tar stream reader over ``raw``: a gzip stream is inflated by ``tarstream.GzipStream``
    (a cut archive then ends in an error, never quietly), anything else as ``r|*`` reads it; and
    the gzip stream, whose ``finish`` raises what cut it short."""
    head = raw.read(len(tarstream.GZIP_MAGIC))
    if head != tarstream.GZIP_MAGIC:
        return tarfile.open(fileobj=PeekedStream(head, raw), mode="r|*"), None
    stream = tarstream.GzipStream(raw)  # type: ignore[arg-type]
    return tarfile.open(fileobj=stream, mode="r|"), stream


def _refused(name: str, size: int, compressed: int | None, flags: int, count: int, total: int,
             limits: Limits) -> tuple[Member | None, bool]:
    """The error row of a zip member its stated sizes or flags rule out, and whether the rest of
    the archive goes unread too; (None, False) for a member to read. ``compressed`` None: unstated."""
    if count > limits.members or total > limits.total_bytes:
        return Member(name, None, size, error="archive over its member-count or size limit; rest not read"), True
    if compressed is not None and size > limits.ratio_floor and size > limits.ratio * max(compressed, 1):
        return Member(name, None, size, error=f"member decompresses more than {limits.ratio}x its size "
                                              "(a compression bomb?); not read"), False
    if flags & 0x1:
        return Member(name, None, size, error="encrypted zip member; not read"), False
    return None, False


def _iter_zip(raw: BinaryIO, prefix: str, limits: Limits, depth: int, tally: Tally) -> Iterator[Member]:
    try:
        zf = open_zip(raw)  # a bad UTF-8-flagged name costs its own member only
    except zipfile.BadZipFile as exc:
        raw.seek(0)
        yield from _iter_local_zip(raw, prefix, limits, depth, tally, _one_line(exc))
        return
    total = 0
    spent = ZipSpent(raw)  # capped at the file's size: entries may share one member's data
    if tally.consumed is None:
        tally.consumed = spent
    with zf:
        for count, info in enumerate(zf.infolist(), start=1):
            if info.is_dir():
                continue
            name = prefix + zip_name(info)  # its bytes, as a tar's names: zipfile reads cp437
            total += info.file_size
            refused, stop = _refused(name, info.file_size, info.compress_size, info.flag_bits, count, total, limits)
            if refused is not None:
                yield refused
                if stop:
                    return
                continue
            if stat.S_ISLNK(info.external_attr >> 16):  # zip -y: the member's text is the link's target
                yield Member(name, None, 0, error=f"is a symbolic link to {_zip_target(zf, info)}{LINK_TAIL}")
                continue
            spent.add(info)  # of the members read: one skipped above counts neither way
            if not tally.add(info.file_size, limits):  # a bomb split over members each under the floor
                yield Member(name, None, info.file_size, error=BOMB_ERROR.format(limits.ratio))
                return
            try:
                stream = zf.open(info)
            except ARCHIVE_ERRORS as exc:
                yield Member(name, None, info.file_size, error=f"cannot open member: {_one_line(exc)}")
                continue
            mtime = datetime(*info.date_time).timestamp() if info.date_time[0] >= 1980 else None
            with stream:
                if archive_kind(info.filename):
                    yield from _nested(stream, name, info.file_size, limits, depth, tally)  # type: ignore[arg-type]
                else:
                    yield Member(name, LimitedReader(stream, limits.member_bytes, name), info.file_size, mtime)  # type: ignore[arg-type]


def _iter_local_zip(raw: BinaryIO, prefix: str, limits: Limits, depth: int, tally: Tally,
                    reason: str) -> Iterator[Member]:
    """A zip whose central directory cannot be read (``reason``: a zip cut short at its end), its
    members read from their local headers (``ziplocal.py``) under the same limits; then the
    archive's error row, which says so. Each member the headers show gets its row, and the one
    the archive ends inside keeps what it holds, its row's error saying where it was cut."""
    total = found = 0
    archive = prefix[:-2] if prefix.endswith("!/") else prefix
    last = ""
    try:
        for count, (header, member) in enumerate(ziplocal.members(raw, limits, tally, BOMB_ERROR.format(limits.ratio)), start=1):
            found, last = count, header.name
            if header.name.endswith("/"):
                continue
            name = prefix + header.name
            total += header.size
            refused, stop = _refused(name, header.size, header.compressed if header.sized else None,
                                     header.flags, count, total, limits)
            if refused is not None or member is None:
                yield refused or Member(name, None, header.size, error=ziplocal.not_read(header))
                if stop:
                    return
                continue
            if archive_kind(header.name):  # a nested zip is read up to its cap, its size stated or not
                yield from _nested(member, name, header.size, limits, depth, tally)  # type: ignore[arg-type]
            else:
                size = header.size if header.sized else limits.member_bytes + 1  # unstated: read as a large one
                yield Member(name, LimitedReader(member, limits.member_bytes, name), size, header.mtime)  # type: ignore[arg-type]
        stopped = "the members end there"
    except ziplocal.ArchiveBomb as exc:
        yield Member(archive, None, 0, error=str(exc))
        return
    except CutShort:
        stopped = f"the archive ends inside {last}"
    except (ValueError, *ARCHIVE_ERRORS) as exc:
        stopped = _one_line(exc)
    if not found:
        yield Member(archive, None, 0, error=f"corrupt or truncated archive: {reason}; members after this point not read")
        return
    yield Member(archive, None, 0, error=f"corrupt or truncated archive: no readable central directory ({reason}); "
                                         f"{found} members read from their local headers, then {stopped}")
