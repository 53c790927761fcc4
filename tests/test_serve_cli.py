"""``dllogscan serve`` as a user starts it: where the page is, and one line when it cannot listen."""
from __future__ import annotations

import resource
import select
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("uvicorn", reason="the serve extra is not installed")


def _serve(*args: str, timeout: float = 60, files: int | None = None) -> subprocess.CompletedProcess:
    """``dllogscan serve ARGS`` run to its end (with ``files`` as its ``ulimit -n`` where given)."""
    limit = None if files is None else (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (files, files)))
    return subprocess.run([sys.executable, "-m", "dllogscan", "serve", *args], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit)


def test_a_port_in_use_is_one_error_line():
    """Before: uvicorn's ``ERROR:    [Errno 98] error while attempting to bind ...`` and exit 3
    (which means "part of the input could not be read")."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _serve("--port", str(port))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}: ")
    assert "in use" in proc.stderr


@pytest.mark.parametrize("port", ["0", "99999", "-1"])
def test_a_port_out_of_range_is_one_error_line(port):
    """Before: 99999 was a 90-line traceback ending in ``OverflowError: bind(): port must be
    0-65535.`` and exit 1 (which means "a failure was diagnosed")."""
    proc = _serve("--port", port)
    assert (proc.returncode, proc.stderr) == (2, f"Error: --port must be between 1 and 65535 (got {port})\n")


def test_a_host_that_names_no_address_is_one_error_line():
    proc = _serve("--host", "no-such-host.invalid")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("Error: cannot listen on no-such-host.invalid:8765: ")


def test_the_page_is_named_when_it_starts():
    """Before: nothing was printed (uvicorn's own lines are kept to warnings), so a user had to
    know the default address from the README."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dllogscan", "serve", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        first = proc.stderr.readline() if ready else ""  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert first == f"dllogscan serve: the triage page is at http://127.0.0.1:{port}/ (Ctrl-C stops it)\n"


@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_a_read_timeout_that_is_no_duration_is_one_error_line(value):
    proc = _serve("--read-timeout", value)
    assert (proc.returncode, proc.stderr) == (
        2, f"Error: --read-timeout takes a duration such as 90s, 30m or 2h (got {value!r})\n")


@pytest.mark.parametrize("value", ["0", "-3"])
def test_max_connections_below_one_is_one_error_line(value):
    proc = _serve("--max-connections", value)
    assert (proc.returncode, proc.stderr) == (2, f"Error: --max-connections must be at least 1 (got {value})\n")


def test_an_open_file_limit_that_holds_no_connection_is_one_error_line():
    """A cap that fits ``ulimit -n`` is none at all here: refused before listening."""
    proc = _serve(files=36)
    assert (proc.returncode, proc.stderr) == (2, "Error: the open-file limit (36, ulimit -n) leaves no room for "
                                                 "connections: raise it to 38 or more\n")


def _connect(port: int, within: float = 60) -> socket.socket:
    """A connection to the page, once it listens (its address is printed just before)."""
    deadline = time.monotonic() + within
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_the_read_timeout_reaches_the_server():
    """A client still inside its headers after ``--read-timeout`` is told 408 and let go. Before:
    uvicorn never timed it (the option did not exist)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "dllogscan", "serve", "--port", str(port), "--read-timeout", "1s"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stderr], [], [], 60)
        assert ready and proc.stderr.readline().startswith("dllogscan serve: ")  # type: ignore[union-attr]
        with _connect(port) as slow:
            slow.sendall(b"POST /api/diagnose HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            answer = slow.recv(65536)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"within 1 s" in answer
