"""The triage page's FastAPI app: ``POST /api/diagnose`` and the static page. Nothing pasted is
stored or executed: the body is read into memory (capped), diagnosed, and dropped."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from .. import pipeline, sources
from ..api import scan_text
from ..normalize import printable_line
from ..textcodec import as_utf8
from ..documents import MAX_DOCUMENT_BYTES, flatten_bytes
from ..redact import Redactor
from ..report.markdown import to_markdown

STATIC = Path(__file__).resolve().parent / "static"
CONTEXT_LINES = 3
MAX_CONTEXT_CHARS = 500


class TooLarge(Exception):
    pass


async def read_capped(request: Request, cap: int) -> bytes:
    """The request body, refused past ``cap`` bytes (declared length first, then actual bytes)."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise TooLarge
    parts, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise TooLarge
        parts.append(chunk)
    return b"".join(parts)


def _decoded(data: bytes, cap: int) -> bytes:
    """Decompressed (gzip, bzip2, xz) and capped, for an uploaded file."""
    with sources.from_bytes(data, "paste").open() as stream:
        out = stream.read(cap + 1)
    if len(out) > cap:
        raise TooLarge
    return out


def diagnose(data: bytes, signatures: Sequence[str], redact: bool, cap: int) -> dict[str, Any]:
    """The one-source contract object for ``data``, plus the markdown reply and the evidence in context."""
    flat, kind = flatten_bytes(as_utf8(_decoded(data, cap)))
    result = scan_text(flat, signatures=signatures, name="paste")
    if kind:
        result = dataclasses.replace(result, document=kind)
    lines = flat.decode("utf-8", errors="replace").splitlines()
    redactor = Redactor() if redact else None
    if redactor:
        result = redactor.result(result)
    out = result.to_dict()
    out["markdown"] = to_markdown([result])
    out["context"] = []
    for d in result.diagnoses:
        marked = {e.line for e in d.evidence}
        wanted = sorted({n for e in d.evidence for n in range(e.line - CONTEXT_LINES, e.line + CONTEXT_LINES + 1)
                         if 1 <= n <= len(lines)})
        block = []
        for n in wanted:
            text = printable_line(lines[n - 1])[:MAX_CONTEXT_CHARS]
            block.append({"line": n, "text": redactor.text(text) if redactor else text, "evidence": n in marked})
        out["context"].append(block)
    return out


def create_app(signatures: Sequence[str] = (), max_bytes: int = MAX_DOCUMENT_BYTES) -> FastAPI:
    """The app; ``max_bytes`` caps every request body (HTTP 413 past it)."""
    signatures = [str(s) for s in signatures]
    pipeline.get_scanner(signatures)  # fail at start, not on the first request
    app = FastAPI(title="dllogscan triage", docs_url=None, redoc_url=None, openapi_url=None)
    too_large = JSONResponse({"error": f"request too large: the limit is {max_bytes} bytes"}, status_code=413)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.post("/api/diagnose")
    async def api_diagnose(request: Request) -> JSONResponse:
        """Body ``{"text": "...", "redact": false}`` -> the diagnosis object, ``source`` = ``paste``."""
        try:
            body = await read_capped(request, max_bytes + 4096)
            doc = json.loads(body)
        except TooLarge:
            return too_large
        except ValueError:
            return JSONResponse({"error": "the body must be JSON: {\"text\": \"...\"}"}, status_code=400)
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
            return JSONResponse({"error": "the body must be JSON: {\"text\": \"...\"}"}, status_code=400)
        data = doc["text"].encode("utf-8", errors="replace")
        if len(data) > max_bytes:
            return too_large
        return await _answer(data, bool(doc.get("redact")))

    @app.post("/api/diagnose-file")
    async def api_diagnose_file(request: Request) -> JSONResponse:
        """Raw file bytes (a dropped log, gzip/bzip2/xz too) -> the same object."""
        try:
            data = await read_capped(request, max_bytes)
        except TooLarge:
            return too_large
        return await _answer(data, request.query_params.get("redact") == "1")

    async def _answer(data: bytes, redact: bool) -> JSONResponse:
        try:
            out = await run_in_threadpool(diagnose, data, signatures, redact, max_bytes)
        except TooLarge:
            return too_large
        return JSONResponse(out)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
