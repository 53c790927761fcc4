"""The Python API: ``dllogscan.scan(path_or_text)`` returns what ``dllogscan FILE`` prints.

``scan_text`` and ``scan_file`` say which one they were given and never guess: a service that
diagnoses text it received uses ``scan_text``, so no text is ever opened as a path. ``scan``
guesses (an existing file's name is read as that file; anything else is text; a file object,
binary or text, is read as a stream) and never raises for what it is given: what it cannot read,
or cannot take, comes back with ``error`` set. An option no call can mean (``engine="foo"``,
``min_confidence=5``) is the caller's mistake: ValueError, before anything is read; an option of
the wrong type (``name=5``, ``signatures=5``) TypeError."""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import BinaryIO, Iterable, TextIO

from .pipeline import runner as pipeline
from .sources import streams as sources
from .core.models import ScanResult
from .core.names import printable
from .core.utf8 import to_utf8

TextOrPath = str | bytes | bytearray | memoryview | os.PathLike | BinaryIO | TextIO
BYTES_LIKE = (bytes, bytearray, memoryview)
PATH_TYPES = (str, bytes, os.PathLike)
TAKES = "give a path, '-', the log's text (str, bytes) or a file object"


def _names_a_file(item: str) -> bool:
    """Whether ``item`` is the name of an existing file (a text too long for a file name, or
    one with a NUL byte, is not; nor is ``""``, which ``Path`` reads as the current folder)."""
    if not item or "\n" in item or len(item) >= 4096:
        return False
    try:
        return Path(item).exists()
    except (OSError, ValueError):
        return False


class _Borrowed(io.RawIOBase):
    """The caller's file object, read through and left open (it is the caller's to close); a
    text stream's ``str`` comes out as UTF-8 (``to_utf8``), never more bytes than asked for."""

    def __init__(self, inner: BinaryIO | TextIO) -> None:
        self.inner = inner
        self.pending = b""

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            data, self.pending = self.pending + self._next(-1), b""
            return data
        if not self.pending:
            self.pending = self._next(size)
        data, self.pending = self.pending[:size], self.pending[size:]
        return data

    def _next(self, size: int) -> bytes:
        try:
            data = self.inner.read(size)
        except UnicodeDecodeError as exc:  # a text stream opened in an encoding its file is not in
            raise OSError(f"not text in {getattr(self.inner, 'encoding', 'its encoding')} ({exc.reason}): "
                          "open the file in binary mode") from None
        if isinstance(data, str):
            return to_utf8(data)
        if not isinstance(data, BYTES_LIKE):
            raise OSError(f"read() gave {type(data).__name__}, not bytes or str")
        return bytes(data)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _stream_name(stream: object) -> str:
    """A file object's ``name`` when it is one (``open(path, "rb")``), else ``stream``."""
    name = getattr(stream, "name", None)
    return name if isinstance(name, str) else "stream"


def _from_stream(stream: BinaryIO | TextIO, name: str, max_bytes: int | None) -> sources.Source:
    """A file object (binary or text), decompressed like a file and read as a stream, at most ``max_bytes``
    (default: standard input's bound); it is left open."""
    return sources.from_stream(lambda: _Borrowed(stream), name,  # type: ignore[arg-type, return-value]
                               max_bytes or sources.DEFAULT_STDIN_LIMIT)


def _from_path(path: str | bytes | os.PathLike, max_bytes: int | None) -> sources.Source:
    """``sources.from_path``; a path no file can have (a NUL byte in it) is a SourceError too."""
    try:
        return sources.from_path(path, limit=max_bytes)  # type: ignore[arg-type]
    except ValueError as exc:
        name = printable(os.fsdecode(path).replace("\0", "\\x00"))  # printable keeps a NUL
        raise sources.SourceError(f"{name}: cannot read: {exc}") from None


def as_source(item: TextOrPath, name: str | None, max_bytes: int | None) -> sources.Source:
    """The source ``scan`` reads: bytes-like objects and ``str`` text in memory, a ``PathLike``
    or the name of an existing file from disk, ``"-"`` standard input, a file object (binary or
    text) as a stream. SourceError for anything else."""
    if isinstance(item, BYTES_LIKE):
        return sources.from_bytes(bytes(item), name or "text")
    if isinstance(item, os.PathLike):
        return _from_path(item, max_bytes)
    if isinstance(item, str):
        if item == "-":
            return sources.from_stdin(limit=max_bytes or sources.DEFAULT_STDIN_LIMIT)
        if _names_a_file(item):
            return _from_path(item, max_bytes)
        return sources.from_text(item, name or "text")
    if callable(getattr(item, "read", None)):
        return _from_stream(item, name or _stream_name(item), max_bytes)  # type: ignore[arg-type]
    raise sources.SourceError(f"cannot scan {_a(item)}: {TAKES}")


def _a(item: object) -> str:
    """What ``item`` is, in words: ``None``, ``an int``, ``a generator``."""
    if item is None:
        return "None"
    kind = type(item).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _label(item: object) -> str:
    """How a result that could not be read names ``item``."""
    if isinstance(item, (str, os.PathLike)):
        return str(item)[:200]
    return _stream_name(item) if callable(getattr(item, "read", None)) else type(item).__name__


def _diagnose(make_source, label: str, signatures: Iterable[str], engine: str, min_confidence: float,
              name: str | None, classifier: str, max_bytes: int | None = None) -> ScanResult:
    """Open the source ``make_source()`` builds and run the pipeline; a source that cannot be
    opened becomes a result with ``error`` set."""
    pipeline.check_options(engine, min_confidence, classifier, max_bytes)
    files = pipeline.signature_files(signatures)
    _check_name(name)
    try:
        source = make_source()
    except sources.SourceError as exc:
        return ScanResult(source=label[:200], error=str(exc))
    result = pipeline.run(source, pipeline.get_scanner(files, engine), min_confidence, classifier)
    return pipeline.with_source_name(result, name) if name else result


def _check_name(name: object) -> None:
    """TypeError for a ``name=`` that is neither ``str`` nor ``None``."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name: give the source's name as str, not {type(name).__name__}")


def scan(path_or_text: TextOrPath, *, signatures: Iterable[str] = (), engine: str = "auto",
         min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str | None = None,
         max_bytes: int | None = None, classifier: str = "auto") -> ScanResult:
    """Diagnose one log: a path (``str`` naming an existing file, or ``PathLike``), ``"-"`` for
    standard input, the log's text itself (``str``, or ``bytes``, ``bytearray``, ``memoryview``),
    or a file object (binary, or text: read as a stream, at most ``max_bytes`` or 512 MiB, and left
    open). ``signatures``: a signature file's path, or an iterable of them.
    A source that cannot be read, or a value of another type, comes back with ``error`` set and
    no diagnoses; it never raises for bad input (ValueError for an option value no call can mean).
    ``engine``: the prefilter (auto, hyperscan, ahocorasick, python). ``classifier``: ``auto``
    (when no signature decides), ``weak``, ``on`` or ``off``. Use ``scan_text`` or ``scan_file`` when you know which you have."""
    return _diagnose(lambda: as_source(path_or_text, name, max_bytes), _label(path_or_text), signatures, engine,
                     min_confidence, name, classifier, max_bytes)


def scan_text(text: str | bytes | bytearray | memoryview, *, signatures: Iterable[str] = (), engine: str = "auto",
              min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str = "text",
              classifier: str = "auto") -> ScanResult:
    """Diagnose ``text`` (a log, a paste, an issue export; ``str`` or bytes-like), never read as
    a path whatever it says. ``source`` in the result is ``name`` (``None``: ``text``). TypeError
    for anything else."""
    if isinstance(text, BYTES_LIKE):
        data = bytes(text)
    elif isinstance(text, str):
        data = to_utf8(text)
    else:
        raise TypeError(f"scan_text takes str or bytes-like text, not {type(text).__name__}")
    _check_name(name)
    name = name or "text"
    return _diagnose(lambda: sources.from_bytes(data, name), name, signatures, engine, min_confidence, None,
                     classifier)


def scan_file(path: str | os.PathLike, *, signatures: Iterable[str] = (), engine: str = "auto",
              min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str | None = None,
              max_bytes: int | None = None, classifier: str = "auto") -> ScanResult:
    """Diagnose the file at ``path`` (gzip, bzip2, xz too); a missing or unreadable file, or a
    name no file can have, comes back with ``error`` set, never as text. TypeError for what is
    not a path (an ``int`` would be read as a file descriptor)."""
    if not isinstance(path, PATH_TYPES):
        raise TypeError(f"scan_file takes a path (str, bytes or os.PathLike), not {type(path).__name__}")
    return _diagnose(lambda: _from_path(path, max_bytes), _label(path), signatures, engine, min_confidence, name,
                     classifier, max_bytes)
