"""The Python API: ``dllogscan.scan(path_or_text)`` returns what ``dllogscan FILE`` prints."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from . import pipeline, sources
from .models import ScanResult

TextOrPath = str | bytes | os.PathLike


def as_source(item: TextOrPath, name: str | None, max_bytes: int | None) -> sources.Source:
    if isinstance(item, bytes):
        return sources.from_bytes(item, name or "text")
    if isinstance(item, os.PathLike):
        return sources.from_path(item, limit=max_bytes)
    if item == "-":
        return sources.from_stdin(limit=max_bytes or sources.DEFAULT_STDIN_LIMIT)
    if "\n" not in item and len(item) < 4096 and Path(item).exists():
        return sources.from_path(item, limit=max_bytes)
    return sources.from_text(item, name or "text")


def scan(path_or_text: TextOrPath, *, signatures: Iterable[str] = (), engine: str = "auto",
         min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str | None = None,
         max_bytes: int | None = None, classifier: str = "auto") -> ScanResult:
    """Diagnose one log: a path (``str`` naming an existing file, or ``PathLike``), ``"-"`` for
    standard input, or the log's text itself. A source that cannot be read comes back with
    ``error`` set and no diagnoses; it never raises for bad input. ``classifier``: ``auto``
    (when no signature decides), ``on`` or ``off``."""
    try:
        source = as_source(path_or_text, name, max_bytes)
    except sources.SourceError as exc:
        return ScanResult(source=str(path_or_text)[:200], error=str(exc))
    scanner = pipeline.get_scanner(signatures, engine)
    result = pipeline.run(source, scanner, min_confidence, classifier)
    return pipeline.with_source_name(result, name) if name else result
