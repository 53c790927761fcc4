"""Run the command line as a user does (a subprocess) for the hostile-input tests."""
from __future__ import annotations

import subprocess
import sys


def cli(*args: str, stdin: bytes | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    """``dllogscan ARGS`` in a fresh interpreter; stdout and stderr captured as text."""
    return subprocess.run([sys.executable, "-m", "dllogscan", *args], input=stdin, capture_output=True,
                          timeout=120, cwd=cwd)


def no_traceback(proc: subprocess.CompletedProcess) -> str:
    """The stderr of ``proc``, after checking it holds no Python traceback."""
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return err
