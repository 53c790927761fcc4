"""Wire the stages for one source: open -> sniff -> scan -> correlate -> advise -> ScanResult."""
from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Iterable

from .advise import advise
from .correlate import correlate
from .documents import flatten_stream
from .errors import SourceError
from .models import ScanResult
from .scanner import Scanner
from .signatures import Database, load_database
from .sources import STREAM_ERRORS, SNIFF_BYTES, PeekedStream, Source, describe_read_error, sniff

DEFAULT_MIN_CONFIDENCE = 0.5


@lru_cache(maxsize=8)
def _cached_db(extra: tuple[str, ...]) -> Database:
    return load_database(extra)


@lru_cache(maxsize=8)
def _cached_scanner(extra: tuple[str, ...], engine: str) -> Scanner:
    return Scanner(_cached_db(extra), engine=engine)


def get_scanner(signatures: Iterable[str] = (), engine: str = "auto") -> Scanner:
    """A compiled scanner for the shipped database plus user signature files (cached)."""
    return _cached_scanner(tuple(str(s) for s in signatures), engine)


def run(source: Source, scanner: Scanner | None = None,
        min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> ScanResult:
    """Diagnose one source. Read errors become ``ScanResult.error``, never an exception."""
    scanner = scanner or get_scanner()
    try:
        stream = source.open()
    except SourceError as exc:
        return ScanResult(source=source.name, error=str(exc))
    error = None
    try:
        with stream:
            try:
                head = stream.read(SNIFF_BYTES)
            except STREAM_ERRORS as exc:
                return ScanResult(source=source.name, error=f"{source.name}: {describe_read_error(exc)}")
            reason = sniff(head)
            if reason:
                return ScanResult(source=source.name, error=f"{source.name}: {reason}; not scanned")
            head, document = flatten_stream(head, stream)
            peeked = PeekedStream(head, stream)
            out = scanner.scan(peeked)
            if out.read_error:
                error = out.read_error if out.read_error.startswith(source.name) else f"{source.name}: {out.read_error}"
            elif getattr(stream, "cut", False):
                error = f"{source.name}: input cut at {source.limit} bytes (--max-bytes); scanned what came before"
    except SourceError as exc:
        return ScanResult(source=source.name, error=str(exc))
    diagnoses, facts = correlate(out.hits, scanner.db, min_confidence)
    diagnoses = [advise(d, scanner.db) for d in diagnoses]
    return ScanResult(source=source.name, diagnoses=tuple(diagnoses), error=error, lines=out.lines,
                      bytes_read=out.bytes_read, hits=tuple(out.hits), facts=facts,
                      document=document)


def with_source_name(result: ScanResult, name: str) -> ScanResult:
    return dataclasses.replace(result, source=name)
