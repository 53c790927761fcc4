"""Run a cluster tool (``scontrol``, ``sacct``, ``journalctl``, ``kubectl``) with a time limit.

A tool that is missing, times out or exits non-zero raises ``ToolError`` whose message is one
line naming the command and the tool's own first error line; the CLI prints it as
``Error: ...`` and exits 2.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess
from typing import Sequence

from ..core.errors import DllogscanError

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
    shown = shlex.join(argv)
    if shutil.which(argv[0]) is None:
        raise ToolError(f"{argv[0]} not found on PATH (needed for `{shown}`)")
    try:
        proc = subprocess.run(list(argv), capture_output=True, timeout=max(timeout, 0.1), stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ToolError(f"`{shown}` did not answer within {timeout:.0f} s") from None
    except OSError as exc:
        raise ToolError(f"`{shown}` could not be run: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        why = _first_line(proc.stderr.decode("utf-8", "replace")) or _first_line(proc.stdout.decode("utf-8", "replace"))
        raise ToolError(f"`{shown}` failed (exit {proc.returncode}): {why or 'no message'}")
    return proc.stdout.decode("utf-8", "replace")
