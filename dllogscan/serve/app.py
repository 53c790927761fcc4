"""The triage page's FastAPI app: ``POST /api/diagnose`` and the static page. Nothing pasted is
stored or executed: the body is read into memory (capped), decompressed (capped again),
flattened once, diagnosed, and dropped. ``guard.py`` decides who may ask."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.requests import ClientDisconnect

from ..pipeline import runner as pipeline
from ..sources import streams as sources
from ..normalize.lines import printable_line
from ..normalize.encoding import as_utf8
from ..sources.documents import MAX_DOCUMENT_BYTES, flatten_bytes, json_values_over
from ..core import classes
from ..core.errors import SourceError
from ..core.utf8 import to_utf8
from ..report.redact import Redactor
from ..report.markdown import to_markdown
from .guard import DEFAULT_MAX_CONCURRENT, DEFAULT_READ_TIMEOUT, Guard, Refused, allowed_hosts

STATIC = Path(__file__).resolve().parent / "static"
CONTEXT_LINES = 3
MAX_CONTEXT_CHARS = 500
READ_STEP = 1 << 20
#: what a JSON body may hold beyond its text's ``max_bytes`` (the keys, escapes of a few characters);
#: also the most values outside strings it may hold: more is padding, which costs 50 to 200 bytes a
#: value to decode (20 MiB of ``{},`` took 525-535 MB)
JSON_ROOM = 4096
#: what a cross-site page may send without asking first (CORS-safelisted), so never accepted
SIMPLE_TYPES = ("", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data")
JSON_BODY_ERROR = "the body must be JSON: {\"text\": \"...\"}"
REDACT_ERROR = "redact must be true or false (in the query: redact=1 or redact=0)"
#: the query's words for redact (absent: false); any other is refused, never read as one of them
REDACT_QUERY = {"1": True, "true": True, "0": False, "false": False}


class TooLarge(Exception):
    pass


class BadUpload(Exception):
    """An upload that cannot be read at all (a corrupt compressed stream): HTTP 400."""


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


def _decoded(data: bytes, cap: int) -> tuple[bytes, str | None]:
    """``(bytes, error)``: an upload decompressed (gzip, bzip2, xz; every layer of one compressed
    again) and capped. A stream cut short keeps what came before it, with the reason (as
    ``dllogscan FILE`` does); one that yields nothing is a BadUpload, one that outgrows the cap
    TooLarge."""
    parts: list[bytes] = []
    size, error = 0, None
    with sources.from_bytes(data, "upload").open() as stream:
        while size <= cap:
            try:
                piece = stream.read(min(READ_STEP, cap + 1 - size))
            except SourceError:  # a compression bomb, stopped by its ratio
                raise TooLarge from None
            except sources.STREAM_ERRORS as exc:
                error = sources.describe_read_error(exc)
                break
            if not piece:
                break
            parts.append(piece)
            size += len(piece)
    if size > cap:
        raise TooLarge
    if error and not size:
        raise BadUpload(f"upload: {error}")
    return b"".join(parts), error and f"paste: {error}; scanned what came before"


def context_lines(data: bytes, wanted: Sequence[int]) -> dict[int, str]:
    """The text of lines ``wanted`` (1-based, ascending) of ``data``, numbered as the scanner
    numbers them (by ``\n``), found by counting newlines in C: no list of every line is built."""
    out: dict[int, str] = {}
    line, pos = 1, 0  # pos: where line ``line`` starts
    for n in wanted:
        while line < n:
            block_end = min(len(data), pos + READ_STEP)
            newlines = data.count(b"\n", pos, block_end)
            if line + newlines < n and block_end < len(data):
                line, pos = line + newlines, block_end
                continue
            while line < n:  # the line starts in this block
                nl = data.find(b"\n", pos)
                if nl == -1:
                    return out
                line, pos = line + 1, nl + 1
        end = data.find(b"\n", pos, pos + 4 * MAX_CONTEXT_CHARS + 8)
        raw = data[pos: end if end != -1 else pos + 4 * MAX_CONTEXT_CHARS]
        if raw or end != -1 or pos < len(data):
            out[n] = raw.decode("utf-8", errors="replace").rstrip("\r")[:MAX_CONTEXT_CHARS]
    return out


def diagnose(data: bytes, signatures: Sequence[str], redact: bool, cap: int) -> dict[str, Any]:
    """The one-source contract object for ``data``, plus the markdown reply and the evidence in context."""
    decoded, error = _decoded(data, cap)
    del data
    flat, kind = flatten_bytes(as_utf8(decoded))
    del decoded
    result = pipeline.run(sources.from_flat(flat, "paste", kind), pipeline.get_scanner(signatures))
    if error and not result.error:
        result = dataclasses.replace(result, error=error)
    redactor = Redactor() if redact else None
    if redactor:
        result = redactor.result(result)
    out = result.to_dict()
    out["markdown"] = to_markdown([result])
    out["context"] = []
    for d in result.diagnoses:
        marked = {e.line for e in d.evidence}
        wanted = sorted({n for e in d.evidence for n in range(e.line - CONTEXT_LINES, e.line + CONTEXT_LINES + 1)
                         if n >= 1})
        pairs = [(n, printable_line(text)[:MAX_CONTEXT_CHARS]) for n, text in context_lines(flat, wanted).items()]
        shown = redactor.lines(pairs) if redactor else [text for _, text in pairs]
        out["context"].append([{"line": n, "text": text, "evidence": n in marked}
                               for (n, _), text in zip(pairs, shown)])
    return out


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def create_app(signatures: Sequence[str] = (), max_bytes: int = MAX_DOCUMENT_BYTES,
               host: str = "127.0.0.1", allow_hosts: Sequence[str] = (),
               max_concurrent: int = DEFAULT_MAX_CONCURRENT, read_timeout: float = DEFAULT_READ_TIMEOUT) -> Guard:
    """The app behind its guard; ``max_bytes`` caps every request body (HTTP 413 past it), which
    must arrive within ``read_timeout`` seconds (HTTP 408 past it); the bodies on their way share
    ``max_concurrent`` bodies' worth of bytes; ``host`` is the address it is bound to (with
    ``allow_hosts``: the Host names it answers to)."""
    signatures = [str(s) for s in signatures]
    pipeline.get_scanner(signatures)  # fail at start, not on the first request
    app = FastAPI(title="dllogscan triage", docs_url=None, redoc_url=None, openapi_url=None)
    too_large = JSONResponse({"error": f"request too large: the limit is {max_bytes} bytes"}, status_code=413)

    async def body(request: Request, cap: int) -> bytes | JSONResponse:
        """The body (``read_capped``), or the answer that refuses it."""
        try:
            return await read_capped(request, cap)
        except TooLarge:
            return too_large
        except Refused as exc:  # the guard's: too slow (408), no room (503)
            return JSONResponse({"error": exc.error}, status_code=exc.status, headers=exc.headers)
        except ClientDisconnect:  # nobody left to tell; uvicorn drops the answer
            return JSONResponse({"error": "the client closed the connection mid-request"}, status_code=400)

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/classes")
    def api_classes() -> JSONResponse:
        """Class letter -> the name reports give it (``data/classes.toml``), for the page's headings."""
        return JSONResponse({c.letter: c.name for c in classes.all_classes()})

    @app.post("/api/diagnose")
    async def api_diagnose(request: Request) -> JSONResponse:
        """Body ``{"text": "...", "redact": false}`` -> the diagnosis object, ``source`` = ``paste``."""
        if _media_type(request) != "application/json":
            return JSONResponse({"error": "send the body as Content-Type: application/json"}, status_code=415)
        data = await body(request, max_bytes + JSON_ROOM)
        if isinstance(data, JSONResponse):
            return data
        if json_values_over(data, JSON_ROOM):  # padding (see JSON_ROOM)
            return JSONResponse({"error": JSON_BODY_ERROR}, status_code=400)
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
            return JSONResponse({"error": JSON_BODY_ERROR}, status_code=400)
        del data
        if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
            return JSONResponse({"error": JSON_BODY_ERROR}, status_code=400)
        redact = doc.get("redact", False)
        if not isinstance(redact, bool):  # "false" or "yes" read as a truth value would guess
            return JSONResponse({"error": REDACT_ERROR}, status_code=400)
        data = to_utf8(doc.pop("text"))
        del doc
        if len(data) > max_bytes:
            return too_large
        return await _answer(data, redact)

    @app.post("/api/diagnose-file")
    async def api_diagnose_file(request: Request) -> JSONResponse:
        """Raw file bytes (a dropped log, gzip/bzip2/xz too) -> the same object."""
        if _media_type(request) in SIMPLE_TYPES:
            return JSONResponse({"error": "send the file as Content-Type: application/octet-stream"},
                                status_code=415)
        redact = REDACT_QUERY.get(request.query_params.get("redact", "0").lower())
        if redact is None:
            return JSONResponse({"error": REDACT_ERROR}, status_code=400)
        data = await body(request, max_bytes)
        return data if isinstance(data, JSONResponse) else await _answer(data, redact)

    async def _answer(data: bytes, redact: bool) -> JSONResponse:
        try:
            out = await run_in_threadpool(diagnose, data, signatures, redact, max_bytes)
        except TooLarge:
            return too_large
        except BadUpload as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(out)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return Guard(app, allowed_hosts(host, allow_hosts), max_concurrent, read_timeout,
                 max_buffered=max_concurrent * (max_bytes + JSON_ROOM))
