"""``dllogscan serve``: the local triage page (needs ``pip install 'dllogscan[serve]'``)."""
from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import List

import typer


def _check_listen(host: str, port: int) -> None:
    """A UsageError where the page could not listen (the port taken, a host that names no
    address here), in one line before uvicorn would print its own log lines and exit 1 or 3."""
    from ...core.errors import UsageError

    try:
        for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
                probe.bind(address)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def register(app: typer.Typer) -> None:
    @app.command(epilog="""[bold]Examples[/bold]

  dllogscan serve                        # http://127.0.0.1:8765
  dllogscan serve --port 9000 --max-bytes 5000000
  dllogscan serve --host 0.0.0.0 --allow-host gpu03.cluster   # reached as http://gpu03.cluster:8765
  dllogscan serve --read-timeout 2m      # slow links: a request may take 2 minutes to arrive
  dllogscan serve --max-connections 200  # a page many people use at once
""")
    def serve(
        host: str = typer.Option("127.0.0.1", help="Address to bind (local only by default)."),
        port: int = typer.Option(8765, help="Port to listen on."),
        max_bytes: int = typer.Option(20 * 1024 * 1024, help="Largest request accepted (HTTP 413 past it)."),
        signatures: List[Path] = typer.Option([], "--signatures", "-s", help="Extra signature file or folder."),
        allow_host: List[str] = typer.Option([], "--allow-host",
                                             help="Another name the page is reached by (the Host header); repeatable."),
        read_timeout: str = typer.Option("30s", help="How long a request's headers, then its body, may take "
                                                     "to arrive (HTTP 408 past it): 30s, 2m."),
        max_connections: int = typer.Option(64, help="Connections held open at once (HTTP 503 and closed past it; "
                                                     "fewer where the open-file limit is lower)."),
    ) -> None:
        """Serve the triage page: paste or drop a log, see the verdict, evidence, fixes and a markdown reply."""
        from ..output import fail
        from ...core.errors import DllogscanError
        from ..checks import check_at_least_one, check_duration, check_max_bytes, check_port

        try:
            check_max_bytes(max_bytes)
            check_port(port)
            seconds = check_duration("--read-timeout", read_timeout)
            check_at_least_one("--max-connections", max_connections)
        except DllogscanError as exc:
            raise fail(str(exc))

        try:
            import uvicorn

            from ...serve.app import create_app
            from ...serve.deadline import server_config
        except ImportError:
            raise fail("the triage page needs the serve extra: pip install 'dllogscan[serve]'")
        try:
            application = create_app([str(s) for s in signatures], max_bytes, host=host, allow_hosts=allow_host,
                                     read_timeout=seconds)
            config = server_config(application, host, port, max_connections)
            _check_listen(host, port)
        except DllogscanError as exc:
            raise fail(str(exc))
        shown = f"[{host}]" if ":" in host else host
        sys.stderr.write(f"dllogscan serve: the triage page is at http://{shown}:{port}/ (Ctrl-C stops it)\n")
        sys.stderr.flush()
        uvicorn.Server(config).run()
