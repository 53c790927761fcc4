"""A local stand-in for the GitHub REST API on 127.0.0.1: answers from a route table and
records every call (method, path, Authorization header, JSON body)."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any



class Recorder:
    """``routes[(METHOD, path-without-query)] = (status, json)``; anything else is a 404."""

    def __init__(self, routes: dict[tuple[str, str], tuple[int, Any]]) -> None:
        self.routes, self.calls = routes, []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = self.path.split("?")[0]
                recorder.calls.append({"method": self.command, "path": self.path,
                                       "auth": self.headers.get("Authorization"),
                                       "body": json.loads(raw) if raw else None})
                status, body = recorder.routes.get((self.command, path), (404, {"message": "Not Found"}))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = _answer

            def log_message(self, *args: Any) -> None:  # keep pytest's output clean
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "Recorder":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def writes(self) -> list[dict]:
        return [c for c in self.calls if c["method"] != "GET"]
