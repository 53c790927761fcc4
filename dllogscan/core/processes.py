"""Ending a child process started in its own session (``start_new_session=True``): its whole
process group, so nothing it started (a wrapper script's ``sleep``, a DataLoader's workers)
outlives it."""
from __future__ import annotations

import os
import signal
import subprocess


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s process group (``proc`` alone where the group is gone) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait()
