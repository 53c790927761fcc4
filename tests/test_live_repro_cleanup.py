"""``dllogscan repro`` leaves nothing running behind it: a rung runs in its own session (the
terminal's Ctrl-C does not reach it), so an interrupted ladder must kill the rung's process group
itself; before, a hung rung and its workers were left running forever, reparented to init."""
from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("psutil")

from dllogscan.live import repro, supervise  # noqa: E402
from tests.live_helpers import scanner  # noqa: E402

DS = "tests.live_datasets"


@pytest.mark.timeout(120)
def test_an_interrupted_rung_kills_its_process_group(monkeypatch):
    started: list[subprocess.Popen] = []

    class Interrupted(subprocess.Popen):
        def wait(self, timeout=None):
            if timeout is None:  # the kill's own wait
                return super().wait()
            started.append(self)
            deadline = time.monotonic() + 30
            while not os.path.exists(os.path.join(os.path.dirname(self.args[-1]), "pids")):
                assert time.monotonic() < deadline, "the rung's worker never started"
                time.sleep(0.1)
            raise KeyboardInterrupt

    monkeypatch.setattr(supervise.subprocess, "Popen", Interrupted)  # the rung's child runs through supervise
    settings = repro.Settings(factory=f"{DS}:locked_at_fork", workers=(1,), batches=2, timeout=60)
    with pytest.raises(KeyboardInterrupt):
        repro.run_rung(settings, 1, scanner())
    (proc,) = started
    alive = _alive_in_group(proc.pid)
    if alive:  # do not leave them behind when the test fails
        os.killpg(proc.pid, signal.SIGKILL)
    assert not alive


def _alive_in_group(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group, after a moment for SIGKILL to land."""
    import psutil

    time.sleep(0.5)
    alive = []
    for p in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(p.pid) == pgid and p.info["status"] != psutil.STATUS_ZOMBIE:
                alive.append(p.pid)
        except (OSError, psutil.Error):
            pass
    return alive


def test_a_rungs_shared_memory_segments_are_removed(tmp_path):
    """After a rung failed for want of /dev/shm (or was killed mid-batch), torch's segments of its
    processes stayed in /dev/shm, taking the space class A needs; only theirs, made since it began."""
    made = [tmp_path / f"torch_{pid}_{n}_0" for pid in (4242, 4243) for n in range(2)]
    for path in made + [tmp_path / "torch_4244_0_0", tmp_path / "other"]:
        path.write_bytes(b"x")
    old = tmp_path / "torch_4242_9_9"
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 3600, time.time() - 3600))  # older than the rung: not its own
    removed = repro.remove_shared_memory([4242, 4243], time.time() - 5, tmp_path)
    assert sorted(removed) == sorted(p.name for p in made)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "torch_4242_9_9", "torch_4244_0_0"]


@pytest.mark.timeout(120)
def test_a_rungs_temporary_files_go_with_it(tmp_path, monkeypatch):
    """multiprocessing's pymp-* folders (an iterable dataset failing in 2 workers left them) and
    whatever the dataset puts in the temporary folder stay inside the rung's own folder."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    settings = repro.Settings(factory=f"{DS}:makes_temp_files", workers=(2,), batches=2, timeout=60)
    rung = repro.run_rung(settings, 2, scanner())
    assert rung.result == "pass", rung.output[-2000:]
    assert list(tmp_path.iterdir()) == []
