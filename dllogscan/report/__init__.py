"""Report, the last stage: output formats, one module each (``render(results, fmt)`` returns the
text to print), and what makes output safe to post: ``redact`` (with ``credentials``).

May import: ``core``, ``advise``.
"""
from __future__ import annotations

from typing import Sequence

from ..core.models import ScanResult

TEXT_FORMATS = ("text", "json", "jsonl", "md", "csv", "github")
FILE_FORMATS = ("parquet",)
FORMATS = TEXT_FORMATS + FILE_FORMATS
#: The format a file's extension names (``--out`` in every command; batch writes the table ones).
SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".md": "md", ".csv": "csv",
            ".parquet": "parquet", ".pq": "parquet"}


def render(results: Sequence[ScanResult], fmt: str, **options: object) -> str:
    """Render results as text in one of TEXT_FORMATS (``text`` is plain, uncoloured)."""
    if fmt == "json":
        from .json_out import to_json
        return to_json(results)
    if fmt == "jsonl":
        from .json_out import to_jsonl
        return to_jsonl(results)
    if fmt == "md":
        from .markdown import to_markdown
        return to_markdown(results, **options)  # type: ignore[arg-type]
    if fmt == "csv":
        from .table import to_csv
        return to_csv(results)
    if fmt == "github":
        from .github import to_github
        return to_github(results)
    if fmt == "text":
        from .terminal import to_text
        return to_text(results)
    raise ValueError(f"unknown text format {fmt!r}; choose one of {', '.join(FORMATS)}")
