"""Paste-in triage: read a paste (terminal or pipe), diagnose it, optionally redact the result."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from .pipeline import runner as pipeline
from .sources import streams as sources
from .sources.documents import MAX_DOCUMENT_BYTES
from .core.models import ScanResult

PASTE_LIMIT = MAX_DOCUMENT_BYTES
PROMPT = ("Paste the log, traceback or issue text, then press Ctrl-D on an empty line "
          "(Ctrl-Z Enter on Windows).\n")


def read_paste(signatures: Sequence[str] = (), engine: str = "auto", max_bytes: int | None = None,
               min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, prompt: bool | None = None) -> ScanResult:
    """Diagnose standard input as a paste named ``paste``, capped at ``max_bytes`` (default 20 MiB):
    a prompt goes to stderr when stdin is a terminal; a longer stream is cut with a clear error."""
    if prompt if prompt is not None else sys.stdin is not None and sys.stdin.isatty():
        sys.stderr.write(PROMPT)
        sys.stderr.flush()
    source = sources.from_stdin(limit=max_bytes or PASTE_LIMIT, name="paste")
    return pipeline.run(source, pipeline.get_scanner(signatures, engine), min_confidence)


def diagnose_bytes(data: bytes, signatures: Sequence[str] = (), engine: str = "auto",
                   min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE, name: str = "paste") -> ScanResult:
    """Diagnose text already in memory (the triage page's request), documents flattened."""
    return pipeline.run(sources.from_bytes(data, name), pipeline.get_scanner(signatures, engine), min_confidence)


def scan_one(target: str, signatures: Sequence[str], engine: str, max_bytes: int | None,
             min_confidence: float = pipeline.DEFAULT_MIN_CONFIDENCE) -> ScanResult:
    """A path, or ``-`` / ``paste`` for standard input."""
    if target in ("-", "paste"):
        return read_paste(signatures, engine, max_bytes, min_confidence)
    from .api import scan

    return scan(Path(target), signatures=signatures, engine=engine, min_confidence=min_confidence,
                max_bytes=max_bytes)
