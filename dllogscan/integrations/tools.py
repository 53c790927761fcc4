"""Run a cluster tool (``scontrol``, ``sacct``, ``journalctl``, ``kubectl``) with a time limit.

A tool that is missing, times out or exits non-zero raises ``ToolError`` whose message is one
line naming the command and the tool's own first error line; the CLI prints it as
``Error: ...`` and exits 2. The tool runs in its own session: past the time limit (or on Ctrl-C)
its whole process group is killed, so nothing it started (a wrapper's ``sleep``, an ssh) outlives it.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from typing import IO, BinaryIO, Sequence

from ..core.errors import DllogscanError
from ..core.processes import kill_group

DEFAULT_TIMEOUT = 30.0


class ToolError(DllogscanError):
    """A cluster tool could not be run or refused (missing, unauthorised, not found, timed out)."""


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return ""


def run_tool(argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> str:
    """The standard output of ``argv`` as text; ``ToolError`` when it cannot be had."""
    with tempfile.TemporaryFile() as out:
        _run(argv, timeout, out)
        return out.read().decode("utf-8", "replace")


def run_tool_to_file(argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> BinaryIO:
    """The standard output of ``argv`` in a temporary file (named, removed when it is closed or
    collected), for output as large as a pod's whole log: it is read from disk, not held in memory."""
    out = tempfile.NamedTemporaryFile(prefix="dllogscan-", suffix=".log")
    try:
        _run(argv, timeout, out)
    except BaseException:
        out.close()
        raise
    return out  # type: ignore[return-value]


def _run(argv: Sequence[str], timeout: float, out: IO[bytes]) -> None:
    """Run ``argv`` with its standard output going to ``out`` (left at its start)."""
    shown = shlex.join(argv)
    if shutil.which(argv[0]) is None:
        raise ToolError(f"{argv[0]} not found on PATH (needed for `{shown}`)")
    try:
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as exc:
        raise ToolError(f"`{shown}` could not be run: {exc.strerror or exc}") from None
    try:
        _, err = proc.communicate(timeout=max(timeout, 0.1))
    except BaseException as exc:  # past the time limit, or interrupted: the tool and what it started end too
        kill_group(proc)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise ToolError(f"`{shown}` did not answer within {timeout:.0f} s") from None
        raise
    out.seek(0)
    if proc.returncode != 0:
        why = _first_line(err.decode("utf-8", "replace")) or _first_line(out.read(65536).decode("utf-8", "replace"))
        raise ToolError(f"`{shown}` failed (exit {proc.returncode}): {why or 'no message'}")
