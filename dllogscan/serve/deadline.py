"""The header half of the read deadline, the answers written below the app, and the uvicorn
settings the page runs with.

uvicorn times an idle keep-alive connection (5 s), but nothing once a client has sent its first
byte: one that sends a header line every few seconds holds its connection, and its socket, for
as long as it likes. ``DeadlineProtocol`` is uvicorn's h11 protocol with one timer more: a
request's headers must be complete within ``read_timeout`` seconds of the connection opening (or
of the last answer on it), else the client is told 408 and the connection closed. The body's half
is the guard's (``guard.py``), which times it from the headers on.

Some answers leave before any request reaches the app (and its guard): the 408 above, the 400 for
bytes that are no HTTP request (a malformed request line or header, headers past h11's 16 KiB),
and the 503 for a connection past the cap (``limits.py``), which is closed at once.
``raw_answer`` writes them with the headers every answer of the page carries.
"""
from __future__ import annotations

import asyncio
import json
import logging
from http import HTTPStatus
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .guard import DEFAULT_READ_TIMEOUT, SECURITY_HEADERS, Guard, read_timeout_error
from .limits import DEFAULT_MAX_CONNECTIONS, Connections, fitted, open_file_limit


#: what an answer written to the socket adds to ``SECURITY_HEADERS``: kept by no cache, and the end
#: of its connection
RAW_HEADERS = ((b"cache-control", b"no-store"), (b"connection", b"close"))
INVALID_REQUEST = "invalid HTTP request: a malformed request line or header, or headers too long"


def raw_answer(status: int, error: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> bytes:
    """A whole response with the JSON body ``{"error": error}`` (and the ``extra`` headers), written
    straight to the socket (no request was parsed to answer), after which the connection is closed."""
    body = json.dumps({"error": error}).encode()
    head = [b"HTTP/1.1 %d %s" % (status, HTTPStatus(status).phrase.encode()), b"content-type: application/json",
            b"content-length: %d" % len(body),
            *(k + b": " + v for k, v in (*RAW_HEADERS, *SECURITY_HEADERS, *extra))]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose request headers take too long, refusing
    connections past the cap, and answering what h11 cannot parse with ``raw_answer``."""

    read_timeout: float = DEFAULT_READ_TIMEOUT
    held: Connections | None = None  # the connections open against the cap (None: no cap)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timer: asyncio.TimerHandle | None = None
        self.timed_after: object = None  # the request cycle the timer was set after (None: none yet)
        self.counted = False  # whether this connection is one of ``held.open``

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        held = self.held
        if held is not None and held.open >= held.cap:
            self.transport.write(raw_answer(503, f"busy: {held.cap} connections are open (--max-connections); "
                                                 "try again", ((b"retry-after", b"1"),)))
            self.transport.close()
            return
        if held is not None:
            held.open, self.counted = held.open + 1, True
        self.start_timer()

    def on_response_complete(self) -> None:
        self.start_timer()  # before: uvicorn may start a pipelined request's cycle in there
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self.stop_timer()
        if self.counted:
            self.held.open, self.counted = self.held.open - 1, False  # type: ignore[union-attr]
        super().connection_lost(exc)

    def start_timer(self) -> None:
        self.stop_timer()
        self.timed_after = self.cycle
        self.header_timer = self.loop.call_later(self.read_timeout, self.expired)

    def stop_timer(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def expired(self) -> None:
        """No request began in time: 408 to a client that has not finished its headers, then close."""
        self.header_timer = None
        if self.cycle is not self.timed_after or self.transport.is_closing():
            return  # a request is under way (the guard times its body), or the connection is ending
        if self.conn.their_state is h11.IDLE:
            self.transport.write(raw_answer(408, read_timeout_error(self.read_timeout)))
        self.transport.close()  # else: still sending a body its answer did not read

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes h11 refuses (``msg`` is its log line), with the page's headers."""
        self.transport.write(raw_answer(400, INVALID_REQUEST))
        self.transport.close()


#: uvicorn's warnings for an upgrade request when it serves no WebSocket: the page has none by
#: choice (``ws="none"``), so its advice to install a WebSocket library would mislead
UPGRADE_WARNINGS = ("Unsupported upgrade request.", "No supported WebSocket library detected.")


class NoUpgradeAdvice(logging.Filter):
    """Drops ``UPGRADE_WARNINGS`` from uvicorn's log (an upgrade request is answered as any other)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(UPGRADE_WARNINGS)


def server_config(app: Guard, host: str, port: int, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> uvicorn.Config:
    """uvicorn's settings for ``app``: the deadline protocol with the guard's ``read_timeout`` and
    at most ``max_connections`` open (fewer where the open-file limit is lower: ``limits.fitted``,
    UsageError where it holds none), no WebSocket (an upgrade request is a plain request, so the
    guard answers it; uvicorn's WebSocket layer would refuse it with none of the page's headers),
    warnings only (less ``UPGRADE_WARNINGS``), no access log."""
    cap, backlog = fitted(max_connections, open_file_limit())
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, NoUpgradeAdvice) for f in logger.filters):
        logger.addFilter(NoUpgradeAdvice())
    protocol = type("DeadlineProtocol", (DeadlineProtocol,),
                    {"read_timeout": app.read_timeout, "held": Connections(cap)})
    return uvicorn.Config(app, host=host, port=port, http=protocol, ws="none", backlog=backlog,
                          log_level="warning", access_log=False)
