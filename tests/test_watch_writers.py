"""watch/process.py on a fake ``/proc`` tree: pid reuse told by the start time."""
from __future__ import annotations

import os
from pathlib import Path

from dllogscan.watch import process
from dllogscan.watch.process import Process


def stat_line(pid: int, name: str, start: int, state: str = "S") -> str:
    """A ``/proc/PID/stat`` line: the name (it may hold ``) ``), the state, field 22 the start time."""
    return f"{pid} ({name}) {state} " + " ".join(["0"] * 18) + f" {start} 0 0\n"


def fake_proc(root: Path, pid: int, fds: list[tuple[Path, int]], name: str = "python", start: int = 100) -> Path:
    """``root/PID`` as Linux shows a process: ``fd/N`` links to each target, ``fdinfo/N`` with its
    open flags (octal, as the kernel writes them), ``stat`` and ``comm``."""
    base = root / str(pid)
    (base / "fd").mkdir(parents=True)
    (base / "fdinfo").mkdir()
    for n, (target, flags) in enumerate(fds):
        (base / "fd" / str(n)).symlink_to(target)
        (base / "fdinfo" / str(n)).write_text(f"pos:\t0\nflags:\t0{flags:o}\nmnt_id:\t27\n")
    (base / "stat").write_text(stat_line(pid, name, start))
    (base / "comm").write_text(name + "\n")
    return base


def test_a_pid_reused_by_another_process_is_gone_and_a_zombie_too(tmp_path):
    proc = tmp_path / "proc"
    me = os.getpid()  # alive to os.kill; its /proc entry is the fake one
    base = fake_proc(proc, me, [], name="train", start=4711)
    job = process.identify(me, proc)
    assert job == Process(me, 4711, "train") and process.alive(me, job.start, proc)
    (base / "stat").write_text(stat_line(me, "bash", 9000))  # the pid now runs something else
    assert not process.alive(me, job.start, proc) and process.alive(me, None, proc)
    (base / "stat").write_text(stat_line(me, "train", 4711, state="Z"))
    assert not process.alive(me, job.start, proc)
    (base / "stat").unlink()  # no /proc entry (hidepid): the kernel's word stands
    assert process.alive(me, job.start, proc)
