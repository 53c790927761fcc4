"""The triage server against hostile requests: one decompression and one cap, Host and Origin
checked, JSON only as JSON, a concurrency cap, memory near the body size, and a clear 4xx (never
a 500) for corrupt uploads and deeply nested JSON."""
from __future__ import annotations

import asyncio
import bz2
import contextlib
import gzip
import json
import lzma
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from dllogscan.serve.app import context_lines, create_app  # noqa: E402
from dllogscan.serve.guard import Guard, allowed_hosts, host_name  # noqa: E402

BASE = "http://127.0.0.1:8765"
JSON = {"Content-Type": "application/json"}
FILE = {"Content-Type": "application/octet-stream"}
BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n"
CAP = 20 * 1024 * 1024


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), base_url=BASE)


def test_gzip_of_gzip_is_capped_once_on_what_comes_out(client):
    """512 bytes of gzip-of-gzip once scanned 32 MiB past the 20 MiB cap; its layers are read
    now, and the cap stops what the last one gives."""
    inner = gzip.compress(b"a\n" * (16 << 20), 9)
    outer = gzip.compress(inner, 9)
    assert len(outer) < 64 << 10
    start = time.perf_counter()
    r = client.post("/api/diagnose-file", content=outer, headers=FILE)
    assert time.perf_counter() - start < 2
    assert r.status_code == 413 and "too large" in r.json()["error"]


def test_a_log_compressed_twice_is_read(client):
    r = client.post("/api/diagnose-file", content=gzip.compress(gzip.compress(BUS.encode())), headers=FILE)
    assert r.status_code == 200 and r.json()["diagnoses"][0]["class"] == "A"


def test_a_log_in_gzip_is_still_read(client):
    r = client.post("/api/diagnose-file", content=gzip.compress(BUS.encode()), headers=FILE)
    assert r.status_code == 200 and r.json()["diagnoses"][0]["class"] == "A"


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress], ids=["gz", "bz2", "xz"])
def test_truncated_upload_keeps_what_came_before(client, compress):
    data = compress((("step %d\n" * 1) * 1 + BUS).encode() * 20_000)
    r = client.post("/api/diagnose-file", content=data[: len(data) * 2 // 3], headers=FILE)
    assert r.status_code == 200
    doc = r.json()
    assert doc["error"] and "paste:" in doc["error"] and doc["diagnoses"][0]["class"] == "A"


@pytest.mark.parametrize("data", [
    b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"garbage that is not deflate" * 10,
    b"BZh9" + b"\xff" * 200,
    b"\xfd7zXZ\x00" + b"\x00" * 200,
    gzip.compress(b"x")[:11],  # header and one byte: nothing decodable (at 12 the "x" is, and is kept)
], ids=["gz", "bz2", "xz", "gz-cut-early"])
def test_corrupt_upload_is_a_clear_400(client, data):
    r = client.post("/api/diagnose-file", content=data, headers=FILE)
    assert r.status_code == 400 and r.json()["error"].startswith("upload: ")


def test_deeply_nested_json_is_400(client):
    for body in (b"[" * 100_000, b'{"a":' * 100_000, b'{"text": "x", "redact": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"):
        r = client.post("/api/diagnose", content=body, headers=JSON)
        assert r.status_code in (200, 400), r.status_code
        if r.status_code == 400:
            assert "JSON" in r.json()["error"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example", ""])
def test_foreign_host_refused(host):
    client = TestClient(create_app(), base_url=BASE)
    r = client.post("/api/diagnose", json={"text": BUS}, headers={"Host": host})
    assert r.status_code == 400 and "Host" in r.json()["error"]
    r = client.get("/", headers={"Host": host})
    assert r.status_code == 400


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "10.1.2.3:8765", "LOCALHOST"])
def test_own_names_and_ip_literals_accepted(client, host):
    r = client.post("/api/diagnose", json={"text": BUS}, headers={"Host": host})
    assert r.status_code == 200 and r.json()["diagnoses"][0]["class"] == "A"


def test_allow_host_and_wildcard_bind():
    assert "gpu03.cluster" in allowed_hosts("0.0.0.0", ["gpu03.cluster:8765"])
    assert "gpu03.cluster" not in allowed_hosts("127.0.0.1")
    assert host_name("[::1]:8765") == "::1" and host_name("Example.org:80") == "example.org"
    client = TestClient(create_app(allow_hosts=["triage.internal"]), base_url="http://triage.internal:8765")
    assert client.post("/api/diagnose", json={"text": BUS}).status_code == 200


@pytest.mark.parametrize("headers", [
    {"Origin": "https://evil.example"},
    {"Origin": "null"},
    {"Origin": "http://127.0.0.1:9999"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
])
def test_cross_origin_posts_refused(client, headers):
    for path, body, kind in (("/api/diagnose", json.dumps({"text": BUS}).encode(), JSON), ("/api/diagnose-file", BUS.encode(), FILE)):
        r = client.post(path, content=body, headers={**kind, **headers})
        assert r.status_code == 403 and "refused" in r.json()["error"]


def test_same_origin_posts_accepted(client):
    r = client.post("/api/diagnose", json={"text": BUS},
                    headers={"Origin": BASE, "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200
    r = client.get("/", headers={"Sec-Fetch-Site": "cross-site"})  # following a link to the page is fine
    assert r.status_code == 200


@pytest.mark.parametrize("path", ["/", "/static/app.js", "/api/classes"])
def test_no_page_may_frame_it_or_load_elsewhere(client, path):
    """A page that frames the triage page could dress it up and have the user drop a log on it."""
    r = client.get(path)
    policy = r.headers.get("content-security-policy", "")
    assert r.status_code == 200 and "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert r.headers.get("x-frame-options") == "DENY" and r.headers.get("x-content-type-options") == "nosniff"
    refused = client.get(path, headers={"Host": "evil.example"})
    assert refused.status_code == 400 and "frame-ancestors 'none'" in refused.headers["content-security-policy"]


@pytest.mark.parametrize("ctype", [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
def test_simple_content_types_refused(client, ctype):
    headers = {"Content-Type": ctype} if ctype else {}
    r = client.post("/api/diagnose", content=json.dumps({"text": BUS}).encode(), headers=headers)
    assert r.status_code == 415 and "application/json" in r.json()["error"]
    r = client.post("/api/diagnose-file", content=BUS.encode(), headers=headers)
    assert r.status_code == 415 and "octet-stream" in r.json()["error"]


def test_json_with_charset_accepted(client):
    r = client.post("/api/diagnose", content=json.dumps({"text": BUS}).encode(),
                    headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 200


def test_concurrent_requests_capped():
    """Past ``max_concurrent`` requests being diagnosed (their bodies whole), one more is a 503
    before its body is read."""
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_app(scope, receive, send):
        await receive()
        started.set()
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    guard = Guard(slow_app, allowed_hosts("127.0.0.1"), max_concurrent=1)
    scope = {"type": "http", "method": "POST", "path": "/api/diagnose", "headers": [(b"host", b"127.0.0.1:8765")]}

    async def call():
        sent = []

        async def send(message):
            sent.append(message)

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        await guard(scope, receive, send)
        return sent[0]["status"], sent[-1].get("body", b"")

    async def main():
        first = asyncio.create_task(call())
        await started.wait()
        second = await call()
        release.set()
        return await first, second

    first, second = asyncio.run(main())
    assert first == (200, b"ok")
    assert second[0] == 503 and b"busy" in second[1]
    assert guard.active == 0


@pytest.mark.parametrize("fails", ["raises", "returns"])
def test_an_app_that_fails_before_answering_is_a_500_with_the_headers(fails):
    """Before: the guard let the failure through, and uvicorn wrote its own text/plain
    ``Internal Server Error`` without the page's headers."""
    async def app(scope, receive, send):
        if fails == "raises":
            raise RuntimeError("a bug")

    sent = []

    async def send(message):
        sent.append(message)

    async def main():
        scope = {"type": "http", "method": "GET", "path": "/", "headers": [(b"host", b"127.0.0.1:8765")]}
        with contextlib.suppress(RuntimeError):
            await Guard(app, allowed_hosts("127.0.0.1"))(scope, None, send)  # type: ignore[arg-type]
            return "returned"
        return "raised"

    assert asyncio.run(main()) == {"raises": "raised", "returns": "returned"}[fails]  # uvicorn still logs the error
    start, body = sent
    headers = dict(start["headers"])
    assert start["status"] == 500 and headers[b"x-content-type-options"] == b"nosniff"
    assert b"frame-ancestors 'none'" in headers[b"content-security-policy"]
    assert json.loads(body["body"])["error"].startswith("internal error")


def test_context_lines_numbered_like_the_scanner():
    data = b"a\rb\nc\x0bd\n\n" + b"x\n" * 3_000_000 + b"last"
    start = time.perf_counter()
    lines = context_lines(data, [1, 2, 3, 3_000_004, 3_000_005])
    assert time.perf_counter() - start < 1
    assert lines == {1: "a\rb", 2: "c\x0bd", 3: "", 3_000_004: "last"}


@pytest.mark.parametrize("padding", ["padding", "strings"])
def test_padding_besides_the_text_is_400_before_it_is_decoded(padding):
    """20 MiB of ``{},`` under a key the page never reads decoded into 7 million dicts, +525 MB
    of peak RSS for a 200; now the values outside strings are counted first (past ``JSON_ROOM``: 400),
    token by token: taking 20 MiB of ``"a",`` out with ``re.sub`` first held +910 MB."""
    code = Path(__file__).with_name("serve_memory.py")
    proc = subprocess.run([sys.executable, str(code), padding], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["status"] == 400 and result["extra_mb"] < 3 * result["body_mb"], result


@pytest.mark.parametrize("body, status", [
    ({"text": BUS + "{[,:" * 100_000, "redact": False}, 200),  # what a string holds is not counted
    ({"text": BUS, "client": {"name": "x", "tags": ["a", "b"]}}, 200),
    ({"text": BUS, "pad": [{}] * 5000}, 400),
])
def test_values_outside_strings_are_capped(client, body, status):
    assert client.post("/api/diagnose", json=body).status_code == status


def test_an_unclosed_run_of_escaped_quotes_is_read_once(client):
    """Skipping strings reads each byte once: 4 MB of ``\\"`` in a string never closed."""
    start = time.perf_counter()
    r = client.post("/api/diagnose", content=b'{"text": "' + b'\\"' * (2 << 20), headers=JSON)
    assert r.status_code == 400 and time.perf_counter() - start < 10


def test_memory_stays_near_the_body_size(tmp_path):
    """A 20 MiB body of '€\\n' cost +450 MB of peak RSS (every line split out for the context)."""
    code = Path(__file__).with_name("serve_memory.py")
    proc = subprocess.run([sys.executable, str(code)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["status"] == 200
    assert result["extra_mb"] < 5 * result["body_mb"], result
