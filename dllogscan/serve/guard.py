"""Who may talk to the triage server: an ASGI middleware in front of the app.

Any web page the user visits can make the browser POST to ``127.0.0.1:8765``, and a DNS-rebinding
page can even read the answer. So, before the app sees a request:

- the ``Host`` header must name this server: the address it is bound to, ``localhost``, an IP
  literal (a rebinding page always sends its own *name*), the machine's names when bound to every
  interface, or a name given with ``--allow-host`` (else 400);
- a request that changes something (any method but GET, HEAD, OPTIONS) must come from the page
  itself: a browser's ``Sec-Fetch-Site`` must be ``same-origin`` or ``none``, and its ``Origin``,
  when sent, must be this server (else 403);
- at most ``max_concurrent`` API requests are diagnosed at once. A request takes its slot once
  its body is whole, so a client trickling a body holds none; when all are taken, one more is told
  503 with ``Retry-After`` (before its body is read if they were taken when it came). The bodies
  still arriving share ``max_buffered`` bytes (503 past it), so memory stays near
  ``max_concurrent`` bodies however many clients send at once;
- a body must arrive whole within ``read_timeout`` seconds of its headers (408 past it; the
  headers are ``deadline.py``'s). The guard's refusals while a body arrives are raised from
  ``receive`` (``Refused``), and the app answers them;
- every response says what the page may do (``SECURITY_HEADERS``): load and talk to this server
  only, never be framed by another page (a framing page could dress the page up and have the user
  drop a log on it or click its buttons), no content sniffing, no referrer. A request the app
  failed before answering is told 500 here, with them (uvicorn's own 500 would go out without).

The JSON API also requires ``Content-Type: application/json`` (in ``app.py``): a cross-site form
can only send the three CORS-safelisted types without asking first.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import socket
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterable

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_BINDS = ("", "0.0.0.0", "::")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
SAME_SITE = ("same-origin", "none")
DEFAULT_MAX_CONCURRENT = 4
DEFAULT_READ_TIMEOUT = 30.0
INTERNAL_ERROR = "internal error: the server could not answer this request (its log says why)"
SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
                                 b"form-action 'none'; object-src 'none'"),
    (b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
)


class Refused(Exception):
    """The guard's refusal of a request whose body is arriving, for the app to answer as is."""

    def __init__(self, status: int, error: str, headers: dict[str, str]) -> None:
        super().__init__(error)
        self.status, self.error, self.headers = status, error, headers


def read_timeout_error(seconds: float) -> str:
    """The 408's message, for the headers (``deadline.py``) and the body (the app) alike."""
    return f"request timeout: the request did not arrive whole within {seconds:g} s (--read-timeout)"


def host_name(value: str) -> str:
    """The host part of a ``Host`` header or an origin's netloc, lower-case, without port or
    IPv6 brackets: ``[::1]:8765`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names this server answers to when bound to ``bind`` (IP literals are always let in)."""
    names = {host_name(bind), *LOOPBACK_NAMES, *(host_name(e) for e in extra)}
    if bind in WILDCARD_BINDS:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(n for n in names if n)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def _refuse(send: Send, status: int, error: str, extra: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = json.dumps({"error": error}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *extra]})
    await send({"type": "http.response.body", "body": body})


class Headed:
    """``send`` adding ``SECURITY_HEADERS`` to the start of every response; ``finish`` sends one
    where none began."""

    def __init__(self, send: Send) -> None:
        self.send, self.started = send, False

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.started = True
            message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
        await self.send(message)

    async def finish(self, why: str | None = None) -> None:
        """A 500 where no response began: the app failed (uvicorn logs how), or returned without
        one (``why`` is logged)."""
        if not self.started:
            if why:
                logging.getLogger("uvicorn.error").error(why)
            await _refuse(self, 500, INTERNAL_ERROR)


@dataclass
class Held:
    """What one API request holds of the guard: bytes of its body, and a slot once it is whole."""
    bytes: int = 0
    slot: int = 0


class Guard:
    """The checks above, as pure ASGI (it buffers nothing; a request refused before the app is never read)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], hosts: frozenset[str],
                 max_concurrent: int = DEFAULT_MAX_CONCURRENT, read_timeout: float = DEFAULT_READ_TIMEOUT,
                 max_buffered: float = float("inf")) -> None:
        self.app, self.hosts, self.max_concurrent, self.active = app, hosts, max_concurrent, 0
        self.read_timeout, self.max_buffered, self.buffered = read_timeout, max_buffered, 0

    def busy(self, why: str = "") -> Refused:
        """The 503 for a request that finds no room (by default: every slot taken)."""
        why = why or f"{self.max_concurrent} requests are being diagnosed"
        return Refused(503, f"busy: {why}; try again", {"retry-after": "1"})

    def metered(self, receive: Receive, held: Held) -> Receive:
        """``receive`` for one API request: its body timed (408 past ``read_timeout`` from now),
        its bytes counted in ``held`` and ``buffered`` (503 past ``max_buffered``),
        and a slot taken when it is whole (503 when none is free). A disconnect passes as is."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.read_timeout

        async def receiving() -> dict[str, Any]:
            if held.slot:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise Refused(408, read_timeout_error(self.read_timeout), {"connection": "close"}) from None
            if message["type"] != "http.request":
                return message
            size = len(message.get("body", b""))
            if self.buffered + size > self.max_buffered:
                raise self.busy(f"the requests on their way hold {self.buffered} bytes already")
            self.buffered, held.bytes = self.buffered + size, held.bytes + size
            if not message.get("more_body", False):
                if self.active >= self.max_concurrent:
                    raise self.busy()
                self.active, held.slot = self.active + 1, 1
            return message
        return receiving

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """``(status, error)`` for a request that must not reach the app, or None."""
        headers = _headers(scope)
        host = headers.get("host", "")
        name = host_name(host)
        if not name or (name not in self.hosts and not _is_ip(name)):
            return 400, (f"unexpected Host header {host[:100]!r}: this server answers to "
                         f"{', '.join(sorted(self.hosts))} (add a name with --allow-host)")
        if scope.get("method", "GET") in SAFE_METHODS:
            return None
        site = headers.get("sec-fetch-site")
        if site is not None and site.lower() not in SAME_SITE:
            return 403, f"cross-site request refused (Sec-Fetch-Site: {site[:40]}): use the page this server serves"
        origin = headers.get("origin")
        if origin is not None:
            scheme, _, netloc = origin.partition("://")
            if scheme not in ("http", "https") or netloc.lower() != host.lower():
                return 403, f"cross-origin request refused (Origin: {origin[:100]}): use the page this server serves"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headed = Headed(send)
        try:
            await self.answer(scope, receive, headed)
        except Exception:
            await headed.finish()
            raise  # for uvicorn to log
        await headed.finish(f"no answer to {scope.get('method')} {scope.get('path', '')[:200]!r}: "
                            "the app returned without one")

    async def answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The checks above, then the app, for one HTTP request."""
        refused = self.refusal(scope)
        if refused:
            await _refuse(send, *refused)
            return
        if not scope.get("path", "").startswith("/api/"):
            await self.app(scope, receive, send)
            return
        if self.active >= self.max_concurrent:
            await _refuse(send, 503, self.busy().error, ((b"retry-after", b"1"),))
            return
        held = Held()
        try:
            await self.app(scope, self.metered(receive, held), send)
        finally:
            self.buffered -= held.bytes
            self.active -= held.slot
