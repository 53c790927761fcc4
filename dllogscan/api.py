"""The Python API: ``dllogscan.scan(path_or_text)`` returns what ``dllogscan FILE`` prints.

``scan_text`` and ``scan_file`` say which one they were given and never guess: a service that
diagnoses text it received uses ``scan_text``, so no text is ever opened as a path. ``scan``
guesses (an existing file's name is read as that file; anything else is text) and never raises
for what it is given."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from .pipeline import runner as pipeline
from .sources import streams as sources
from .core.models import ScanResult
from .core.utf8 import to_utf8

TextOrPath = str | bytes | os.PathLike


def _names_a_file(item: str) -> bool:
    """Whether ``item`` is the name of an existing file (a text too long for a file name, or
    one with a NUL byte, is not)."""
    if "\n" in item or len(item) >= 4096:
        return False
    try:
        return Path(item).exists()
    except (OSError, ValueError):
        return False


def as_source(item: TextOrPath, name: str | None, max_bytes: int | None) -> sources.Source:
    """The source ``scan`` reads: bytes and ``str`` text in memory, a ``PathLike`` or the name of
    an existing file from disk, ``"-"`` standard input."""
    if isinstance(item, bytes):
        return sources.from_bytes(item, name or "text")
    if isinstance(item, os.PathLike):
        return sources.from_path(item, limit=max_bytes)
    if item == "-":
        return sources.from_stdin(limit=max_bytes or sources.DEFAULT_STDIN_LIMIT)
    if _names_a_file(item):
        return sources.from_path(item, limit=max_bytes)
    return sources.from_text(item, name or "text")


def _diagnose(make_source, label: str, signatures: Iterable[str], engine: str, min_confidence: float,
              name: str | None, classifier: str) -> ScanResult:
    """Open the source ``make_source()`` builds and run the pipeline; a source that cannot be
    opened becomes a result with ``error`` set."""
    try:
        source = make_source()
    except sources.SourceError as exc:
        return ScanResult(source=label[:200], error=str(exc))
    result = pipeline.run(source, pipeline.get_scanner(signatures, engine), min_confidence, classifier)
    return pipeline.with_source_name(result, name) if name else result


def scan(path_or_text: TextOrPath, *, signatures: Iterable[str] = (), engine: str = "auto",
         min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str | None = None,
         max_bytes: int | None = None, classifier: str = "auto") -> ScanResult:
    """Diagnose one log: a path (``str`` naming an existing file, or ``PathLike``), ``"-"`` for
    standard input, or the log's text itself. A source that cannot be read comes back with
    ``error`` set and no diagnoses; it never raises for bad input. ``classifier``: ``auto``
    (when no signature decides), ``on`` or ``off``. Use ``scan_text`` or ``scan_file`` when you
    know which you have."""
    return _diagnose(lambda: as_source(path_or_text, name, max_bytes), str(path_or_text), signatures, engine,
                     min_confidence, name, classifier)


def scan_text(text: str | bytes, *, signatures: Iterable[str] = (), engine: str = "auto",
              min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str = "text",
              classifier: str = "auto") -> ScanResult:
    """Diagnose ``text`` (a log, a paste, an issue export; ``str`` or ``bytes``), never read as
    a path whatever it says. ``source`` in the result is ``name``."""
    data = text if isinstance(text, bytes) else to_utf8(text)
    return _diagnose(lambda: sources.from_bytes(data, name), name, signatures, engine, min_confidence, None,
                     classifier)


def scan_file(path: str | os.PathLike, *, signatures: Iterable[str] = (), engine: str = "auto",
              min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str | None = None,
              max_bytes: int | None = None, classifier: str = "auto") -> ScanResult:
    """Diagnose the file at ``path`` (gzip, bzip2, xz too); a missing or unreadable file comes
    back with ``error`` set, never as text."""
    return _diagnose(lambda: sources.from_path(path, limit=max_bytes), str(path), signatures, engine,
                     min_confidence, name, classifier)
