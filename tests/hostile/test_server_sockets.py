"""The triage server on a real socket against slow and silent clients: a request must arrive whole
within the read deadline (headers, then body) or be told 408, so a client trickling bytes cannot
keep a slot, or a connection, from everyone else; and connections past a cap are refused at once,
so a flood of them cannot use up the server's open files."""
from __future__ import annotations

import contextlib
import http.client
import json
import logging
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator

import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")
import uvicorn  # noqa: E402

from dllogscan.serve.app import create_app  # noqa: E402
from dllogscan.serve.deadline import server_config  # noqa: E402
from dllogscan.serve.limits import ACCEPT_TURNS, RESERVED_FILES, fitted  # noqa: E402

BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n"
BODY = json.dumps({"text": BUS}).encode()


@contextlib.contextmanager
def serving(max_connections: int = 64, **options: object) -> Iterator[int]:
    """The page's server (``create_app(**options)``, the CLI's uvicorn settings) in a thread on a
    free port; yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_app(**options)  # type: ignore[arg-type]
    server = uvicorn.Server(server_config(app, "127.0.0.1", 0, max_connections))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def head(port: int, length: int = len(BODY)) -> bytes:
    return (f"POST /api/diagnose HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def post(port: int, body: bytes = BODY) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/api/diagnose", body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def trickle(sock: socket.socket, pieces: Iterator[bytes], every: float = 0.2) -> bytes:
    """Send one piece every ``every`` seconds until the server answers (or closes); its answer,
    read to the end (b"" if it sent none before the pieces ran out)."""
    for piece in pieces:
        if select.select([sock], [], [], every)[0]:
            break
        try:
            sock.sendall(piece)
        except OSError:
            break
    else:
        return b""
    answer = b""
    with contextlib.suppress(OSError):  # a reset after the answer: keep what came
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def first_answer_within(port: int, seconds: float) -> tuple[int, float]:
    """Post a whole request, again after each 503 (as Retry-After asks, sooner): the first other
    status and how long it took."""
    start = time.monotonic()
    while True:
        status, _ = post(port)
        waited = time.monotonic() - start
        if status != 503 or waited > seconds:
            return status, waited
        time.sleep(0.2)


def test_a_trickled_body_is_cut_off_and_its_slot_freed():
    """Before: the one slot stayed with a client sending a byte every 0.2 s, and every other
    request was a 503 for as long as it went on (the whole 20 s here)."""
    with serving(max_concurrent=1, read_timeout=1) as port, socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(head(port, 4096) + b'{"text": ')
        answers: list[bytes] = []
        thread = threading.Thread(target=lambda: answers.append(trickle(slow, iter([b" "] * 150))))
        thread.start()
        time.sleep(0.3)  # the trickler holds the slot
        status, waited = first_answer_within(port, 20)
        thread.join(40)
    assert status == 200 and waited < 20, (status, waited)
    assert answers[0].startswith(b"HTTP/1.1 408 ") and b"connection: close" in answers[0].lower()
    assert json.loads(answers[0].partition(b"\r\n\r\n")[2]) == {
        "error": "request timeout: the request did not arrive whole within 1 s (--read-timeout)"}


@contextlib.contextmanager
def tricklers(port: int, n: int, length: int = 4096) -> Iterator[None]:
    """``n`` clients sending a body of ``length`` bytes one byte every 0.2 s, hung up on exit."""
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
    threads = [threading.Thread(target=trickle, args=(s, iter([b" "] * 300))) for s in socks]
    for s, t in zip(socks, threads):
        s.sendall(head(port, length) + b'{"text": ')
        t.start()
    try:
        yield
    finally:
        for s, t in zip(socks, threads):
            s.shutdown(socket.SHUT_RDWR)
            t.join(30)
            s.close()


def test_trickling_clients_hold_no_slot():
    """A slot is taken once a body is whole. Before: two clients trickling bodies held both
    slots until the read deadline (30 s here), every other request a 503 meanwhile; a client
    reconnecting after each 408 held them for good (4 such: no answer in 20 s at 2 s)."""
    with serving(max_concurrent=2, read_timeout=30) as port, tricklers(port, 2):
        time.sleep(0.3)
        status, waited = first_answer_within(port, 20)
    assert status == 200 and waited < 20, (status, waited)


def test_bodies_on_their_way_share_a_byte_budget():
    """Bodies still arriving hold at most ``max_concurrent`` bodies' worth of bytes together
    (here 1 x 20 000 + 4096): one more that would pass it is a 503, a small one still fits."""
    with serving(max_bytes=20_000, max_concurrent=1, read_timeout=30) as port, \
            socket.create_connection(("127.0.0.1", port)) as half:
        half.sendall(head(port, 20_000) + b'{"text": "' + b"x" * 15_000)
        big = json.dumps({"text": "y" * 10_000}).encode()
        start = time.monotonic()
        while True:  # until the server has read the first body's 15 000 bytes
            status, doc = post(port, big)
            if status == 503 or time.monotonic() - start > 20:
                break
        assert status == 503 and "the requests on their way hold" in doc["error"], (status, doc)
        assert post(port)[0] == 200
        half.shutdown(socket.SHUT_RDWR)


def test_trickled_headers_are_cut_off():
    """Before: a header line every 0.2 s kept the connection (and its socket) open without end;
    uvicorn times only a connection that sends nothing after an answer."""
    with serving(read_timeout=1) as port, socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(head(port).split(b"\r\n")[0] + b"\r\n")
        start = time.monotonic()
        answer = trickle(slow, (b"X-Slow: %d\r\n" % i for i in range(150)))
        took = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 408 ") and b"did not arrive whole within 1 s" in answer
    assert b"content-security-policy" in answer and took < 25


def test_a_body_still_coming_after_its_answer_is_cut_off():
    """A request answered without its body being read (415) while the client keeps sending it:
    the connection is closed after the deadline. Before: uvicorn restarted its keep-alive timer on
    every byte, and the connection was still open when the test's 30 s of bytes ran out."""
    with serving(read_timeout=1) as port, socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(f"POST /api/diagnose HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: text/plain\r\n"
                     f"Content-Length: 4096\r\n\r\n".encode())
        start = time.monotonic()
        answer = slow.recv(65536)
        rest = trickle(slow, iter([b" "] * 150))
        took = time.monotonic() - start
    assert answer.startswith(b"HTTP/1.1 415 ") and b"HTTP/1.1" not in rest and took < 25, took


def page_headers(answer: bytes) -> dict[str, str]:
    """The headers of a raw answer that every answer of the page carries, by lower-case name."""
    lines = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")[1:]
    headers = dict((k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in lines))
    return {k: headers.get(k, "") for k in ("content-security-policy", "x-content-type-options", "x-frame-options",
                                              "cache-control", "connection", "content-type")}


def test_a_connection_that_sends_nothing_is_closed():
    with serving(read_timeout=1) as port, socket.create_connection(("127.0.0.1", port)) as idle:
        answer = trickle(idle, iter([b""] * 150))
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert page_headers(answer)["cache-control"] == "no-store"  # before: none


@pytest.mark.parametrize("pieces", [
    [b"GARBAGE\r\n\r\n"],
    [b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nNo colon here\r\n\r\n"],
    [b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: "] + [b"a" * 4096] * 40,  # past h11's 16 KiB
], ids=["request-line", "header", "headers-too-long"])
def test_what_is_no_http_is_answered_with_the_page_headers(pieces):
    """h11 refuses these before the app (and its guard) sees anything. Before: uvicorn's own
    ``400 Invalid HTTP request received.`` as text/plain, with none of the page's headers."""
    with serving(read_timeout=30) as port, socket.create_connection(("127.0.0.1", port)) as bad:
        answer = trickle(bad, iter([*pieces, *[b""] * 150]))
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    headers = page_headers(answer)
    assert "frame-ancestors 'none'" in headers["content-security-policy"], headers
    assert (headers["x-content-type-options"], headers["x-frame-options"], headers["cache-control"],
            headers["connection"], headers["content-type"]) == ("nosniff", "DENY", "no-store", "close",
                                                                 "application/json"), headers
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"].startswith("invalid HTTP request")


def test_a_websocket_upgrade_is_a_plain_request_to_the_guard():
    """The page has no WebSocket. Before, where ``websockets`` is installed (uvicorn[standard]):
    uvicorn's WebSocket layer took the request past the guard's Host check and refused it with a
    bare 403 (none of the page's headers)."""
    with serving() as port, socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                  b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        answer = trickle(s, iter([b""] * 150))
    assert answer.startswith(b"HTTP/1.1 400 ") and b"unexpected Host header" in answer, answer[:300]
    assert page_headers(answer)["x-content-type-options"] == "nosniff"


def test_a_client_that_never_reads_its_answer_holds_no_slot():
    with serving(max_concurrent=1, read_timeout=1) as port, socket.create_connection(("127.0.0.1", port)) as deaf:
        deaf.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        deaf.sendall(head(port) + BODY)
        status, waited = first_answer_within(port, 20)
    assert status == 200 and waited < 20, (status, waited)


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_an_upgrade_request_logs_no_advice_to_install_websockets():
    """Before: each upgrade request logged 'Unsupported upgrade request.' and uvicorn's advice to
    install 'uvicorn[standard]', wrong for a page that has no WebSocket by choice."""
    kept = Kept()
    with serving() as port:
        logging.getLogger("uvicorn.error").addHandler(kept)
        try:
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\n"
                          "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".encode())
                answer = trickle(s, iter([b""] * 150))
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(b"GARBAGE\r\n\r\n")
                trickle(s, iter([b""] * 150))
        finally:
            logging.getLogger("uvicorn.error").removeHandler(kept)
    assert answer.startswith(b"HTTP/1.1 200 "), answer[:300]
    assert [r.getMessage() for r in kept.records] == ["Invalid HTTP request received."]


def test_a_client_that_leaves_mid_body_leaves_no_traceback():
    """Before: each one logged 'Exception in ASGI application' and 60 lines of traceback ending in
    starlette's ClientDisconnect."""
    kept = Kept()
    with serving(read_timeout=5) as port:
        logging.getLogger("uvicorn.error").addHandler(kept)
        try:
            for _ in range(3):
                with socket.create_connection(("127.0.0.1", port)) as gone:
                    gone.sendall(head(port) + BODY[:10])
                    time.sleep(0.2)
            assert post(port)[0] == 200
        finally:
            logging.getLogger("uvicorn.error").removeHandler(kept)
    assert [r.getMessage() for r in kept.records if r.levelno >= logging.WARNING] == []


def test_a_request_in_time_is_answered_on_a_kept_alive_connection():
    """The header timer restarts after each answer: a second request on the connection, sent
    later than the deadline after the first one began, is answered."""
    with serving(read_timeout=1) as port:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for _ in range(2):
            conn.request("POST", "/api/diagnose", BODY, {"Content-Type": "application/json"})
            r = conn.getresponse()
            assert r.status == 200 and json.loads(r.read())["diagnoses"][0]["class"] == "A"
            time.sleep(0.6)
        conn.close()


def test_static_files_stay_in_their_folder():
    """Raw request targets (a client library would normalise them): every way out is a 404."""
    targets = ["/static/../app.py", "/static/..%2fapp.py", "/static/%2e%2e/guard.py", "/static/%2e%2e%2fapp.py",
               "/static/..%5capp.py", "/static//etc/passwd", "/static/app.js%00.png", "/static/%c0%ae%c0%ae/app.py",
               "/static/..%2f..%2f..%2f..%2fetc%2fpasswd"]
    with serving() as port:
        for target in targets:
            with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
                s.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
                answer = trickle(s, iter([b""] * 150))
            assert answer.startswith(b"HTTP/1.1 404 "), (target, answer[:200])
            assert b"import" not in answer and b"root:" not in answer


def answered(port: int, within: float = 20) -> tuple[int, float]:
    """GET / until it is answered other than 503 (a connection refused, or reset as it is refused,
    is no answer yet): its status, and how long that took."""
    start = time.monotonic()
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/")
            status = conn.getresponse().status
        except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
            status = 503
        finally:
            conn.close()
        waited = time.monotonic() - start
        if status != 503 or waited > within:
            return status, waited
        time.sleep(0.1)


def test_connections_past_the_cap_are_refused_at_once_and_served_when_they_go():
    """Before: no cap; each connection kept its socket until its read deadline."""
    with serving(max_connections=3, read_timeout=30) as port, contextlib.ExitStack() as stack:
        idle = [stack.enter_context(socket.create_connection(("127.0.0.1", port))) for _ in range(3)]
        with socket.create_connection(("127.0.0.1", port)) as late:
            start = time.monotonic()
            answer = trickle(late, iter([b""] * 150))
            took = time.monotonic() - start
        assert answer.startswith(b"HTTP/1.1 503 ") and took < 20, (answer[:200], took)
        headers = page_headers(answer)
        assert (headers["x-content-type-options"], headers["cache-control"], headers["connection"]) == (
            "nosniff", "no-store", "close") and "frame-ancestors 'none'" in headers["content-security-policy"]
        assert b"\r\nretry-after: 1\r\n" in answer.lower()
        assert json.loads(answer.partition(b"\r\n\r\n")[2]) == {
            "error": "busy: 3 connections are open (--max-connections); try again"}
        idle[0].close()
        assert answered(port)[0] == 200


def test_the_cap_and_the_backlog_fit_the_open_file_limit():
    """Held connections (two files each), the connections of ``ACCEPT_TURNS`` accepts not yet
    refused and the process's own files stay within ``ulimit -n``."""
    assert fitted(64, None) == (64, 128) and fitted(64, 20_000) == (64, 128) and fitted(5, 1024) == (5, 62)
    for files in range(RESERVED_FILES + ACCEPT_TURNS + 2, 3000):
        cap, backlog = fitted(64, files)
        assert cap >= 1 and backlog >= 1 and RESERVED_FILES + ACCEPT_TURNS * backlog + 2 * cap <= files, files


def limited_files(n: int):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))


def test_a_flood_of_idle_connections_leaves_the_server_answering():
    """``dllogscan serve`` under ``ulimit -n 64``, 80 connections that send nothing. Before: the
    server ran out of open files, asyncio logged 'socket.accept() out of system resource' with a
    traceback thousands of times a second (450 MB of log in 90 s, 200 connections), and a real
    request waited in the listen queue until read deadlines freed files (no answer in 90 s). Now:
    past the cap (12 here) a connection is told 503 at once, and served once the flood goes."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dllogscan", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limited_files(64))
    flood: list[socket.socket] = []

    def connect(_: int) -> None:
        with contextlib.suppress(OSError):
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready and proc.stderr.readline().startswith(b"dllogscan serve: ")  # type: ignore[union-attr]
        assert answered(port, within=60)[0] == 200  # it listens
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(connect, range(80)))
        assert len(flood) > 64, len(flood)
        status, waited = answered(port, within=0)  # one try
        assert status == 503 and waited < 15, (status, waited)
        for sock in flood:
            sock.close()
        status, waited = answered(port)
        assert status == 200 and proc.poll() is None, (status, waited)
    finally:
        for sock in flood:
            sock.close()
        proc.terminate()
        log = proc.communicate(timeout=30)[1]
    assert b"out of system resource" not in log and b"Traceback" not in log, log[-2000:]
