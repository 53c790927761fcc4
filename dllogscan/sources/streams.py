"""Open what the user has (a path, standard input, a string) as a bounded binary stream."""
from __future__ import annotations

import io
import lzma
import os
import sys
import zlib
from dataclasses import dataclass
from stat import S_ISDIR
from typing import BinaryIO, Callable

from ..core.errors import SourceError
from ..core.names import printable
from ..core.utf8 import to_utf8

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
#: the compressions a file is inflated from, by their magic bytes
COMPRESSIONS = {GZIP_MAGIC: "gzip", BZ2_MAGIC: "bzip2", XZ_MAGIC: "xz"}
ZIP_MAGIC = b"PK\x03\x04"
DEFAULT_STDIN_LIMIT = 512 * 1024 * 1024
MAX_INFLATE_RATIO = 200
INFLATE_RATIO_FLOOR = 256 * 1024 * 1024
#: how many compressions deep a file is inflated (a ``.log.gz.gz`` is two)
COMPRESSION_LAYERS = 3
#: errors a decompressor raises mid-stream on a corrupt or truncated file (gzip raises
#: zlib.error, not an OSError, for a corrupt deflate block)
STREAM_ERRORS = (OSError, EOFError, lzma.LZMAError, ValueError, zlib.error)


@dataclass(frozen=True)
class Source:
    """A named input and a way to open it as bytes."""

    name: str
    opener: Callable[[], BinaryIO]
    size: int | None = None
    limit: int | None = None
    #: bytes already decompressed and flattened (``from_flat``): read as they are
    as_is: bool = False
    document: str | None = None
    #: the number of its first line: 1, or more for a window of a longer file (``watch``)
    first_line: int = 1

    def open(self) -> BinaryIO:
        return self.opener()


class LimitedReader(io.RawIOBase):
    """Reads at most ``limit`` bytes; past it, ``cut`` is set and reading stops."""

    def __init__(self, inner: BinaryIO, limit: int | None, what: str) -> None:
        self.inner, self.limit, self.what, self.count, self.cut = inner, limit, what, 0, False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.limit is not None:
            left = self.limit - self.count
            if left <= 0:
                self.cut = self.cut or bool(self.inner.read(1))
                return b""
            size = left if size < 0 else min(size, left)
        data = self.inner.read(size)
        self.count += len(data)
        return data

    def readinto(self, b) -> int:  # pragma: no cover - read() is what the scanner uses
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.inner.close()
        super().close()


class TrailingGarbage(OSError):
    """Bytes after a complete gzip member that start no other member (``zcat``: "trailing
    garbage ignored"): what came before was read whole."""


class CutShort(OSError):
    """A stream that ends early, its bytes up to there delivered (a member an archive ends inside);
    its text says where it ended."""


def _after_members(exc: BaseException, count: int) -> BaseException:
    """``exc``, or TrailingGarbage where gzip found no member header after ``count`` bytes (the
    first header's magic was checked before the GzipFile was made, so only a later one fails so)."""
    if count and isinstance(exc, OSError) and str(exc).startswith("Not a gzipped file"):
        return TrailingGarbage(str(exc))
    return exc


class RatioGuard(io.RawIOBase):
    """Reads a decompressor in small steps so that the bytes before a corrupt or truncated
    spot are kept (the error surfaces on the next read), and stops one whose output outgrows
    its input by more than MAX_INFLATE_RATIO (a compression bomb)."""

    STEP = 256 * 1024

    def __init__(self, inner: BinaryIO, compressed: BinaryIO, name: str,
                 below: KeepReadError | None = None) -> None:
        self.inner, self.compressed, self.name, self.count = inner, compressed, name, 0
        self.pending: BaseException | None = None
        #: the layer this one inflates, its error held (not raised inside the decoder's
        #: BufferedReader, which would drop what it had gathered): the cause of this layer's end
        self.below = below
        # read1, not read: GzipFile/BZ2File/LZMAFile.read(n) gathers several decoder steps in a
        # BufferedReader and drops all of them when one raises (a cut .gz lost its last 256 KiB,
        # a small one everything); read1 makes one step, and a step that raises has produced
        # nothing (the decoders return what they have before asking for more input)
        self._step = getattr(inner, "read1", inner.read)

    def readable(self) -> bool:
        return True

    def _check_ratio(self) -> None:
        if self.count > INFLATE_RATIO_FLOOR:
            consumed = max(self.compressed.tell(), 1)
            if self.count > consumed * MAX_INFLATE_RATIO:
                raise SourceError(
                    f"{self.name}: decompresses more than {MAX_INFLATE_RATIO}x its size "
                    f"(a compression bomb?); stopped after {self.count >> 20} MiB")

    def read(self, size: int = -1) -> bytes:
        if self.pending is not None:
            exc, self.pending = self.pending, None
            raise exc
        parts: list[bytes] = []
        got = 0
        while size < 0 or got < size:
            want = self.STEP if size < 0 else min(self.STEP, size - got)
            try:
                piece = self._step(want)
                if not piece and self.below is not None and self.below.error is not None:
                    raise self.below.error  # this layer ended where the one below failed
            except (SourceError, *STREAM_ERRORS) as exc:
                exc = self._cause(exc)
                if not parts:
                    raise exc from None
                self.pending = exc
                break
            if not piece:
                break
            parts.append(piece)
            got += len(piece)
            self.count += len(piece)
            self._check_ratio()
        return b"".join(parts)

    def _cause(self, exc: BaseException) -> BaseException:
        """Why reading stopped: the layer below's error where it has one (a cut outer .gz is
        also a cut inner stream), else ``exc`` (trailing garbage named as such)."""
        if self.below is not None and self.below.error is not None:
            return self.below.error
        return _after_members(exc, self.count)

    def close(self) -> None:
        self.inner.close()
        super().close()


def _decompressing(raw: BinaryIO, name: str, layer: int = 1, outer: BinaryIO | None = None,
                   below: KeepReadError | None = None) -> BinaryIO:
    """Wrap ``raw`` in the decompressor its magic bytes name (gzip, bzip2, xz), else as is; what
    it inflates to is unwrapped again while that is compressed too (a rotated ``.gz`` compressed
    again, a gzipped ``.xz``), up to COMPRESSION_LAYERS, each layer's ratio guard measured against
    the bytes read from ``outer``, the file itself, so nesting cannot hide a bomb. ``below``: the
    layer ``raw`` comes from, its read error held until this layer has returned what it could."""
    held = None
    if isinstance(raw, io.BufferedReader):
        buffered = raw
    elif isinstance(raw, io.FileIO):  # a file or stdin: its reads fail, if ever, at the first
        buffered = io.BufferedReader(raw)
    else:  # a member of an archive, a replay of one: its error waits until its bytes are read
        held = KeepReadError(raw)  # type: ignore[arg-type]
        buffered = io.BufferedReader(held)  # type: ignore[arg-type]
    head = buffered.peek(6)[:6]
    if held is not None and held.error is not None and not head:
        raise held.error  # the first read failed: nothing was read to keep
    if head.startswith(GZIP_MAGIC):
        import gzip  # noqa: PLC0415 - decompressors load only for compressed input

        inner: BinaryIO = gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[assignment]
    elif head.startswith(BZ2_MAGIC):
        import bz2  # noqa: PLC0415

        inner = bz2.BZ2File(buffered, mode="rb")  # type: ignore[assignment]
    elif head.startswith(XZ_MAGIC):
        inner = lzma.LZMAFile(buffered, mode="rb")  # type: ignore[assignment]
    else:
        return buffered if held is None else HeldError(buffered, held)  # type: ignore[return-value]
    guard = RatioGuard(inner, outer or buffered, name, below or held)
    if layer >= COMPRESSION_LAYERS:
        return guard  # type: ignore[return-value]
    try:
        first = guard.read(6)  # a later error waits in the guard until these bytes are read
    except STREAM_ERRORS as exc:
        return PeekedStream(b"", guard, exc)  # type: ignore[arg-type, return-value]
    ahead = PeekedStream(first, guard)  # type: ignore[arg-type]
    if first.startswith(tuple(COMPRESSIONS)):
        held = KeepReadError(ahead)  # type: ignore[arg-type]
        return _decompressing(held, name, layer + 1, outer or buffered, held)  # type: ignore[arg-type]
    return ahead  # type: ignore[return-value]


def from_path(path: str | os.PathLike[str], limit: int | None = None, st: os.stat_result | None = None) -> Source:
    """A file on disk, decompressed on the fly when gzip, bzip2 or xz (``st``: its ``os.stat``
    when the caller has made it already, as a batch worker has)."""
    name = printable(str(path))  # a name that is not UTF-8 is shown escaped; ``path`` opens it
    try:
        st = st or os.stat(path)
    except FileNotFoundError:
        raise SourceError(f"{name}: no such file") from None
    except OSError as exc:
        raise SourceError(f"{name}: cannot read: {exc.strerror or exc}") from None
    if S_ISDIR(st.st_mode):  # the stat above, not a second one
        raise SourceError(f"{name}: is a directory (use `dllogscan batch {name}`)")

    def opener() -> BinaryIO:
        try:
            raw = open(path, "rb", buffering=0)
        except OSError as exc:
            raise SourceError(f"{name}: cannot read: {exc.strerror or exc}") from None
        return LimitedReader(_opened(raw, name), limit, name)  # type: ignore[return-value]

    return Source(name=name, opener=opener, size=st.st_size, limit=limit)


def _opened(raw: BinaryIO, name: str) -> BinaryIO:
    """``_decompressing(raw)``; an I/O error on that first read (``/proc/self/mem``, a failing
    network filesystem) closes ``raw`` and becomes a SourceError naming the input."""
    try:
        return _decompressing(raw, name)
    except OSError as exc:
        raw.close()
        raise SourceError(f"{name}: cannot read: {exc.strerror or exc}") from None


def from_stream(open_raw: Callable[[], BinaryIO], name: str, limit: int | None) -> Source:
    """A stream read once, as it comes (``open_raw`` gives it when the source is opened):
    decompressed like a file, capped at ``limit`` bytes so an endless one cannot run forever."""

    def opener() -> BinaryIO:
        return LimitedReader(_opened(open_raw(), name), limit, name)  # type: ignore[return-value]

    return Source(name=name, opener=opener, limit=limit)


def from_stdin(limit: int | None = DEFAULT_STDIN_LIMIT, name: str = "-") -> Source:
    """Standard input (``from_stream``)."""
    def raw() -> BinaryIO:
        if sys.stdin is None:  # ``dllogscan - <&-``: file descriptor 0 is closed
            raise SourceError(f"{name}: standard input is closed")
        return sys.stdin.buffer.raw  # type: ignore[return-value]

    return from_stream(raw, name, limit)


def from_bytes(data: bytes, name: str = "text") -> Source:
    """In-memory input (the Python API's text, a paste, an archive member already read)."""
    return Source(name=name, opener=lambda: _decompressing(io.BytesIO(data), name), size=len(data))


def from_flat(data: bytes, name: str, document: str | None = None, first_line: int = 1) -> Source:
    """Bytes already decompressed and flattened (``document``: the kind they were flattened
    from), to be scanned as they are: never decompressed or flattened a second time.
    ``first_line``: the number their first line has in the whole input."""
    return Source(name=name, opener=lambda: io.BytesIO(data), size=len(data), as_is=True, document=document,
                  first_line=first_line)


def from_text(text: str, name: str = "text") -> Source:
    return from_bytes(to_utf8(text), name)


SNIFF_BYTES = 8192
BINARY_MAGIC = {
    b"\x7fELF": "an ELF binary", b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image",
    b"%PDF": "a PDF document", b"PK\x03\x04": "a zip archive (use `dllogscan batch`)",
    b"\x28\xb5\x2f\xfd": "a zstd archive", b"SQLite format 3": "an SQLite database",
    b"\x93NUMPY": "a NumPy array", b"PAR1": "a Parquet file",
    GZIP_MAGIC: f"data compressed more than {COMPRESSION_LAYERS} times",
    XZ_MAGIC: f"data compressed more than {COMPRESSION_LAYERS} times",
}
_TEXT_CONTROL_BYTES = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27))


def sniff(head: bytes) -> str | None:
    """Why the first bytes of a (decompressed) source are not a text log, or None if they are.

    A real log with a few stray NUL or control bytes is text; a file where over 30 % of the first
    8 KiB are control bytes or invalid UTF-8, or that starts with a known binary magic, is not.
    """
    for magic, what in BINARY_MAGIC.items():
        if head.startswith(magic):
            return f"looks like {what}, not a text log"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "looks like a tar archive (use `dllogscan batch`)"
    sample = head[:SNIFF_BYTES]
    if not sample:
        return None
    control = len(sample) - len(sample.translate(None, _TEXT_CONTROL_BYTES))
    # ASCII always decodes: no replacement character to count
    invalid = 0 if sample.isascii() else sample.decode("utf-8", errors="replace")[:-4].count("\ufffd")
    share = (control + invalid) / len(sample)
    if share > 0.30:
        return (f"looks binary ({100 * share:.0f}% control or non-UTF-8 bytes in the first "
                f"{len(sample)} bytes)")
    return None


class PeekedStream(io.RawIOBase):
    """A stream whose first bytes were already read for sniffing. ``pending``: a read error met
    while reading ahead, raised once the head is consumed (so the bytes before it are scanned)."""

    def __init__(self, head: bytes, inner: BinaryIO, pending: BaseException | None = None) -> None:
        self.head, self.inner, self.pending = head, inner, pending

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.pending is not None and not self.head:
            exc, self.pending = self.pending, None
            raise exc
        if self.pending is not None and (size < 0 or size >= len(self.head)):
            head, self.head = self.head, b""
            return head
        if self.head:
            if size < 0 or size >= len(self.head):
                head, self.head = self.head, b""
                try:
                    rest = self.inner.read(-1 if size < 0 else size - len(head))
                except (SourceError, *STREAM_ERRORS) as exc:  # the head is returned, the error next
                    self.pending = exc
                    return head
                return head + rest
            out, self.head = self.head[:size], self.head[size:]
            return out
        return self.inner.read(size)

    def readinto(self, buffer) -> int:  # for a BufferedReader over it (a stream compressed twice)
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.inner.close()
        super().close()


class KeepReadError(io.RawIOBase):
    """Reads ``inner`` and turns a read error into the end of the stream, kept in ``error``
    (for reading ahead: the error is raised later, where the scanner reports it)."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.error is not None:
            return b""
        try:
            return self.inner.read(size)
        except (SourceError, *STREAM_ERRORS) as exc:
            self.error = exc
            return b""

    def readinto(self, buffer) -> int:  # for a BufferedReader over it (a compressed layer inside)
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class HeldError(PeekedStream):
    """``inner``, a BufferedReader over ``held``, read to its end, then the error ``held`` kept,
    raised once: a BufferedReader whose stream raises drops the bytes it had gathered for that
    read (an archive member cut short lost its last lines, where its failure is)."""

    def __init__(self, inner: BinaryIO, held: KeepReadError) -> None:
        super().__init__(b"", inner)
        self.held, self.raised = held, False

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        if not data and self.held.error is not None and not self.raised:
            self.raised = True
            raise self.held.error
        return data


def describe_read_error(exc: BaseException) -> str:
    """One line for a decompression or read failure in the middle of a stream."""
    if isinstance(exc, EOFError):
        return "truncated compressed stream (ended before its end marker)"
    if isinstance(exc, CutShort):
        return f"{exc}; scanned what came before"
    if isinstance(exc, TrailingGarbage):
        return "trailing garbage after the compressed data (not a gzip member); not read"
    text = str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    return f"cannot read: {text}".splitlines()[0]
