"""watch/writers.py and process.py: the processes that write the watched file, found in ``/proc``
(a fake tree for the parsing and the budget, real processes end to end), and pid reuse told by the
start time. End to end through ``tests/test_watch.py``'s ``Watch`` (short polls, timeouts)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dllogscan.watch import process
from dllogscan.watch.events import Outcome
from dllogscan.watch.process import Process
from dllogscan.watch.writers import RELOOK_POLLS, Finder, Job, listing
from tests.conftest import progress_lines
from tests.test_watch import BUS, FIT_ENDED, Watch, written_now

LINUX = pytest.mark.skipif(not Finder.possible(), reason="needs /proc (Linux)")
APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT
READ = os.O_RDONLY | getattr(os, "O_LARGEFILE", 0)


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


def test_the_fake_tree_gives_writers_by_inode_and_flags_and_skips_what_it_cannot_read(tmp_path):
    log, other = tmp_path / "train.log", tmp_path / "other.log"
    log.write_text("")
    other.write_text("")
    alias = tmp_path / "alias.log"
    os.link(log, alias)  # another name, the same inode
    proc = tmp_path / "proc"
    fake_proc(proc, 10, [(other, APPEND), (log, APPEND)])  # fd 1 is the log
    fake_proc(proc, 11, [(alias, os.O_RDWR)], name="evil\x1b[31m) x")
    fake_proc(proc, 12, [(log, READ)], name="tail")  # reads it: no writer
    fake_proc(proc, 13, [(other, APPEND)], name="other")
    fake_proc(proc, 14, [(log, APPEND)], name="me")  # the watch's own process
    (fake_proc(proc, 15, [(log, APPEND)], name="gone") / "fdinfo" / "0").unlink()  # ended mid-pass
    fake_proc(proc, 16, [(tmp_path / "nowhere", APPEND)], name="dangling")
    (proc / "17").mkdir()
    (proc / "17" / "fd").write_text("")  # another user's, or no directory: unreadable
    (proc / "self").mkdir()
    (proc / "comm").write_text("")  # not a pid
    (proc / "10" / "comm").unlink()
    (proc / "10" / "cmdline").write_bytes(b"/usr/bin/python3.12\0train.py\0")
    found = Finder(str(log), proc=proc, own=14).look(1.0)
    assert found == [Process(10, 100, "python3.12"), Process(11, 100, "evil\\x1b[31m) x")]
    assert listing(found) == "10 (python3.12), 11 (evil\\x1b[31m) x)"
    assert listing([Process(n, None, "w") for n in range(10)], most=2) == "0 (w), 1 (w) and 8 more"
    assert Finder(str(tmp_path / "absent.log"), proc=proc).look(1.0) == []


def test_a_pass_keeps_to_its_budget_and_the_next_goes_on_where_it_stopped(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("")
    proc = tmp_path / "proc"
    for pid in range(20, 30):
        fake_proc(proc, pid, [(log, APPEND if pid in (22, 27) else READ)])
    ticks = iter(range(1000))
    finder = Finder(str(log), proc=proc, own=1, clock=lambda: float(next(ticks)))
    passes = [finder.look(2.5) for _ in range(5)]  # a tick a process read: three a look
    assert [[p.pid for p in found] for found in passes] == [[22], [], [27], [], [22]]  # the fifth begins anew
    assert finder.left == sorted(map(str, range(23, 30)), key=int, reverse=True)


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


class Ticks:
    """A clock that stands still until told to move."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_job(tmp_path: Path) -> tuple[Path, Path, Job, list[str], Ticks]:
    """An empty log, a fake ``/proc`` (empty yet), and a job over them: what it said, its clock."""
    log, proc = tmp_path / "train.log", tmp_path / "proc"
    log.write_text("")
    said: list[str] = []
    clock = Ticks()
    return log, proc, Job(None, Finder(str(log), proc=proc, own=1), said.append, clock=clock), said, clock


def test_a_job_ends_when_its_writers_have_gone_unless_a_new_one_took_over(tmp_path):
    log, proc, job, said, clock = fake_job(tmp_path)
    assert not job.gone() and job.writers == () and said == []  # none yet: a pass at each poll
    first = fake_proc(proc, os.getpid(), [(log, APPEND)], name="prep")
    assert not job.gone() and job.writers == () and said == []  # sighted, not yet told apart
    clock.now = 1.0  # an interval later, it still holds the file: the job's
    assert not job.gone() and job.writers == (Process(os.getpid(), 100, "prep"),)
    assert said == [f"writers of {log}: {os.getpid()} (prep); the watch ends when they have exited (--no-writers: not)"]
    (first / "stat").write_text(stat_line(os.getpid(), "prep", 100, state="Z"))
    assert job.gone() and not job.taken_over()
    fake_proc(proc, os.getppid(), [(log, APPEND)], name="train", start=200)
    assert job.taken_over() and not job.gone()
    clock.now = 2.0
    assert not job.gone() and [p.name for p in job.writers] == ["prep", "train"]
    ended = Outcome(str(log), "exited", 0, 1.0, 2, 2, writers=job.writers)
    assert ended.why() == f"writers {os.getpid()} (prep), {os.getppid()} (train) exited"
    assert ended.to_dict()["writers"] == [{"pid": os.getpid(), "name": "prep"}, {"pid": os.getppid(), "name": "train"}]
    assert "writers" not in Outcome(str(log), "exited", 0, 1.0, 2, 2, pid=42).to_dict()


def test_once_writers_are_known_a_new_pass_begins_every_tenth_poll(tmp_path):
    log, proc, job, said, clock = fake_job(tmp_path)
    fake_proc(proc, os.getpid(), [(log, APPEND)], name="train")
    assert not job.gone()  # poll 1: sighted
    clock.now = 1.0
    assert not job.gone() and len(job.writers) == 1  # poll 2: the job's
    fake_proc(proc, os.getppid(), [(log, APPEND)], name="eval")
    for poll in range(3, RELOOK_POLLS):
        assert not job.gone() and job.sighted == [], poll
    assert not job.gone() and [s.process.name for s in job.sighted] == ["eval"]  # poll 10


def test_a_writer_sighted_mid_watch_is_the_jobs_only_when_it_holds_on_or_leaves_lines(tmp_path):
    """``echo line >> train.log`` from another shell holds the file for a moment: sighted at one
    poll, gone (or no longer holding it) at the next, one line written: forgotten, and the watch
    goes on. Sighted and gone having written more lines, a job that ended quickly: its end."""
    log, proc, job, said, clock = fake_job(tmp_path)
    shell = fake_proc(proc, os.getpid(), [(log, APPEND)], name="bash")
    assert not job.gone()  # sighted
    (shell / "fd" / "0").unlink()  # the builtin echo is done: the shell runs on, without the file
    log.write_text("line\n")
    clock.now = 1.0
    assert not job.gone() and job.writers == () and job.sighted == [] and said == []
    (shell / "fd" / "0").symlink_to(log)  # sighted again ...
    clock.now = 2.0
    assert not job.gone() and len(job.sighted) == 1
    (shell / "stat").write_text(stat_line(os.getpid(), "bash", 100, state="Z"))  # ... and gone, one line later
    with log.open("a") as out:
        out.write("another\n")
    clock.now = 2.1  # told apart at once: it has gone
    assert not job.gone() and job.writers == () and said == []
    (shell / "stat").write_text(stat_line(os.getpid(), "bash", 100))
    assert not job.gone() and len(job.sighted) == 1
    (shell / "stat").write_text(stat_line(os.getpid(), "bash", 100, state="Z"))
    with log.open("a") as out:
        out.write("Traceback (most recent call last):\nImportError: no module named x\n")
    assert job.gone() and [p.pid for p in job.writers] == [os.getpid()]
    assert said == [f"writers of {log}: {os.getpid()} (bash); the watch ends when they have exited (--no-writers: not)"]


def test_children_left_by_a_writer_that_exited_are_orphans_and_theirs_too(tmp_path):
    """A fake tree: main (the test's parent process) forked worker (this process), which forked a
    helper (another pid); once main has gone, the two left are orphans, and the job has ended."""
    log, proc, job, _, clock = fake_job(tmp_path)
    helper = subprocess.Popen(["sleep", "30"])
    try:
        main = fake_proc(proc, os.getppid(), [(log, APPEND)], name="python")
        for pid, parent in ((os.getpid(), os.getppid()), (helper.pid, os.getpid())):
            fake_proc(proc, pid, [(log, APPEND)], name="pt_data_worker")
            (proc / str(pid) / "stat").write_text(stat_line(pid, "pt_data_worker", 100).replace(
                " S 0 ", f" S {parent} ", 1))
        assert not job.gone()  # sighted
        clock.now = 1.0
        assert not job.gone() and len(job.writers) == 3 and job.orphans == ()
        assert job.main.pid == os.getppid()  # the workers' root: the process a hang's dump takes
        (main / "stat").write_text(stat_line(os.getppid(), "python", 100, state="Z"))
        assert job.gone() and {p.pid for p in job.orphans} == {os.getpid(), helper.pid}
        assert not job.taken_over()  # nothing written since
        ended = Outcome(str(log), "exited", 0, 1.0, 2, 2, writers=job.writers, orphans=job.orphans)
        assert ended.why() == (f"writer {os.getppid()} (python) exited, leaving orphaned children {os.getpid()} "
                               f"(pt_data_worker), {helper.pid} (pt_data_worker) that still hold the log (leaked "
                               "workers?)")
        assert ended.to_dict()["orphans"] == [{"pid": os.getpid(), "name": "pt_data_worker"},
                                              {"pid": helper.pid, "name": "pt_data_worker"}]
        assert job.gone()
        with log.open("a") as out:
            out.write("worker 0 still loading\n")  # they write on: the job's, whose end ends it
        assert job.taken_over() and job.orphans == () and not job.gone()
    finally:
        helper.kill()
        helper.wait()


def holder(log: Path, *steps: tuple[float, str], code: str | None = None) -> subprocess.Popen:
    """A job whose standard output is ``log`` (``python train.py >> train.log``): once its standard
    input closes, it prints each text after its delay, flushed, then exits."""
    code = code or ("import json, sys, time\nsys.stdin.read()\nfor delay, text in json.loads(sys.argv[1]):\n"
                    "    time.sleep(delay)\n    print(text, end='', flush=True)\n")
    with log.open("a") as out:
        return subprocess.Popen([sys.executable, "-c", code, json.dumps(steps)], stdin=subprocess.PIPE, stdout=out)


@LINUX
def test_a_job_writing_the_log_is_found_and_its_quiet_exit_ends_the_watch(tmp_path):
    log = tmp_path / "train.log"
    written_now(log, progress_lines(5))
    proc = holder(log, *[(0.1, progress_lines(1, 5 + i)) for i in range(5)])
    watch = Watch(log, "--stall", "1s", "--settle", "1.5")
    watch.wait_for("following")
    proc.stdin.close()
    rc, events = watch.finish()
    assert proc.wait(timeout=5) == 0
    assert rc == 0 and [e["event"] for e in events] == ["end"], (events, watch.err)
    name = Path(sys.executable).name[:15]
    assert events[0]["reason"] == "exited" and events[0]["writers"] == [{"pid": proc.pid, "name": name}]
    assert "pid" not in events[0] and events[0]["lines"] == 10
    assert f"dllogscan: writers of {log}: {proc.pid} ({name}); the watch ends" in "".join(watch.err)


@LINUX
def test_a_shell_redirection_and_tee_are_writers_and_a_reader_is_none(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    with log.open("a") as out:
        sleeper = subprocess.Popen("exec sleep 30", shell=True, stdout=out)
    with log.open() as inp:
        reader = subprocess.Popen(["sleep", "30"], stdin=inp)
    try:
        watch = Watch(log, fmt="text")
        watch.wait_for("following")
        watch.wait_for(f"writers of {log}: {sleeper.pid} (sleep);")  # at a poll an interval later
        sleeper.kill()
        rc, _ = watch.finish()
        ended = f"(writer {sleeper.pid} (sleep) exited; 0 new lines read, up to line 3)\n"
        assert rc == 0 and watch.out[-1].endswith(ended), (watch.out, watch.err)
        assert str(reader.pid) not in "".join(watch.err)

        tee = subprocess.Popen(["tee", "-a", str(log)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        watch = Watch(log)
        watch.wait_for(f"writers of {log}: {tee.pid} (tee);")
        tee.stdin.write(BUS.encode())
        tee.stdin.close()  # the job's end closes the pipe: tee writes what is left and exits
        rc, events = watch.finish()
        assert rc == 1 and [e["event"] for e in events] == ["failure", "end"], (events, watch.err)
        assert events[1]["reason"] == "exited" and events[1]["writers"] == [{"pid": tee.pid, "name": "tee"}]

        watch = Watch(log, "--timeout", "1s")  # only the reader holds it now
        rc, events = watch.finish()
        assert rc == 0 and events[0]["reason"] == "timeout" and "writers" not in events[0]
        assert "writers of" not in "".join(watch.err)
    finally:
        for p in (sleeper, reader):
            p.kill()
            p.wait()


@LINUX
def test_a_renamed_log_watched_through_a_symlink_still_finds_its_writer_and_no_writers_turns_it_off(tmp_path):
    old = tmp_path / "run.log"
    old.write_text("")
    with old.open("a") as out:
        sleeper = subprocess.Popen("exec sleep 30", shell=True, stdout=out)
    try:
        (tmp_path / "logs").mkdir()
        old.rename(tmp_path / "logs" / "train.log")
        link = tmp_path / "latest.log"
        link.symlink_to(tmp_path / "logs" / "train.log")
        watch = Watch(link, "--no-writers", "--timeout", "1s")
        rc, events = watch.finish()
        assert rc == 0 and events[0]["reason"] == "timeout" and "writers" not in events[0], watch.err
        watch = Watch(link, "--timeout", "5s")
        watch.wait_for(f"writers of {link}: {sleeper.pid} (sleep)")
    finally:
        sleeper.kill()
        sleeper.wait()
    rc, events = watch.finish()
    assert rc == 0 and events[0]["reason"] == "exited", (events, watch.err)


@LINUX
def test_a_stall_of_a_job_whose_writer_is_known_gives_its_pid_to_py_spy(tmp_path):
    """The watch knows the process that writes the log: a stall's py-spy dump names it (it read
    ``--pid <pid>`` before)."""
    log = tmp_path / "train.log"
    written_now(log, progress_lines(5))
    proc = holder(log, *[(0.1, progress_lines(1, 5 + i)) for i in range(3)], (30.0, ""))
    try:
        watch = Watch(log, "--stall", "1.5s")
        watch.wait_for(f"writers of {log}: {proc.pid}")
        proc.stdin.close()
        rc, events = watch.finish()
    finally:
        proc.kill()
        proc.wait()
    assert rc == 1 and [e["event"] for e in events] == ["stall"], (events, watch.err)
    diagnosis = events[0]["diagnoses"][0]
    commands = [c for f in diagnosis["fixes"] for c in f["commands"] if c.startswith("py-spy dump")]
    assert commands and all(f"--pid {proc.pid}" in c for c in commands), commands
    assert diagnosis["facts"]["job_pid"] == str(proc.pid) and "pid" not in diagnosis["facts"]


@LINUX
def test_a_writer_that_starts_after_the_watch_is_found_at_a_poll(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("")
    watch = Watch(log, "--stall", "1.5s")
    watch.wait_for("following")
    proc = holder(log, (0.1, progress_lines(2)), (0.5, progress_lines(1, 2)))
    watch.wait_for(f"writers of {log}: {proc.pid}")
    proc.stdin.close()
    rc, events = watch.finish()
    proc.wait(timeout=5)
    assert rc == 0 and events[-1]["reason"] == "exited" and events[-1]["lines"] == 3, (events, watch.err)


@LINUX
def test_lightning_test_after_fit_then_a_quiet_exit_is_no_stall(tmp_path):
    """The known gap: Lightning's ``trainer.test()`` draws its bar more than the grace after fit's
    end line, which arms stalls again; the job then exits quietly. Without its writers (as before,
    or ``--no-writers``) that silence is a stall; with them, the watch ends ``exited``."""
    code = "import dllogscan.correlate.stall as s; s.FINISH_GRACE_S = 0.5; from dllogscan.cli.fast import main; main()"
    steps = (*[(0.1, progress_lines(1, 5 + i)) for i in range(3)], (0.1, FIT_ENDED), (0.05, progress_lines(1, 8)),
             *[(0.4, progress_lines(1, 100 + i)) for i in range(3)])  # test's bar, past the grace
    for args, ending in (("--no-writers",), ["stall"]), ((), ["end"]):
        log = tmp_path / f"train{len(args)}.log"
        written_now(log, progress_lines(5))
        proc = holder(log, *steps)
        watch = Watch(log, "--stall", "1.5s", *args, code=code)
        watch.wait_for("following")
        proc.stdin.close()
        rc, events = watch.finish()
        proc.wait(timeout=5)
        assert [e["event"] for e in events] == ending, (events, watch.err)
    assert rc == 0 and events[0]["reason"] == "exited" and events[0]["lines"] == 13
    assert events[0]["writers"][0]["pid"] == proc.pid


@LINUX
def test_the_bench_times_a_pass_here_and_over_a_fake_tree():
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, str(root / "bench" / "writers_bench.py"), "--processes", "30", "--fds", "2",
                           "--repeats", "2"], capture_output=True, text=True, timeout=120)
    here, fake = proc.stdout.splitlines()
    assert proc.returncode == 0 and here.startswith("/proc here: ") and " ms (median of 2); load " in here, proc.stderr
    assert fake.startswith("fake tree: 30 processes x 2 descriptors: a whole pass ") and "a poll's part" in fake


#: a job that forks a worker (both inherit the log as standard output), says the worker's pid, and
#: waits; the worker waits for its standard input to close, or (``talk``) writes once its parent
#: has gone: ``sys.argv[1]`` lines, 0.1 s apart
FORKING = ("import os, sys, time\nparent = os.getpid()\nworker = os.fork()\nif worker == 0:\n"
           "    if int(sys.argv[1]):\n        while os.getppid() == parent:\n            time.sleep(0.02)\n"
           "        for i in range(int(sys.argv[1])):\n            print(f'worker still loading {i}', flush=True)\n"
           "            time.sleep(0.1)\n        os._exit(0)\n    sys.stdin.read()\n    os._exit(0)\n"
           "print(f'worker {worker}', flush=True)\nsys.stdin.read()\n")


def forking(log: Path, talk: int = 0) -> tuple[subprocess.Popen, int]:
    """The job (``FORKING``) and its worker's pid, once it has said it."""
    with log.open("a") as out:
        main = subprocess.Popen([sys.executable, "-c", FORKING, str(talk)], stdin=subprocess.PIPE, stdout=out)
    for _ in range(500):
        if (said := re.search(r"^worker (\d+)$", log.read_text(), re.M)) is not None:
            return main, int(said.group(1))
        time.sleep(0.01)
    raise AssertionError(f"the job never said its worker's pid: {log.read_text()!r}")


@LINUX
def test_a_worker_orphaned_by_the_job_and_quiet_ends_the_watch_named_as_left_running(tmp_path):
    """A DataLoader worker that outlives its main process (killed) still holds the log that it
    inherited: the job has ended, and the worker is named, a leak to look into."""
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    main, worker = forking(log)
    try:
        watch = Watch(log, "--timeout", "6s")
        watch.wait_for(f"writers of {log}: ")
        found = next(line for line in watch.err if "writers of" in line)
        assert f"{main.pid} (" in found and f"{worker} (" in found, watch.err
        main.kill()
        main.wait()
        rc, events = watch.finish()
        assert rc == 0 and events[-1]["reason"] == "exited", (events, watch.err)
        name = Path(sys.executable).name[:15]
        assert events[-1]["orphans"] == [{"pid": worker, "name": name}]
        assert {w["pid"] for w in events[-1]["writers"]} == {main.pid, worker}
        assert process.alive(worker)  # the watch names it, leaves it alone
    finally:
        main.stdin.close()  # the worker's standard input too: it exits


@LINUX
def test_an_orphaned_worker_that_writes_on_is_the_jobs_and_its_exit_ends_the_watch(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    main, worker = forking(log, talk=12)
    try:
        watch = Watch(log, "--timeout", "8s")
        watch.wait_for(f"writers of {log}: ")
        main.kill()
        main.wait()
        watch.wait_for(f"{worker} ({Path(sys.executable).name[:15]}), left running when their parent exited, wrote to")
        rc, events = watch.finish()
        assert rc == 0 and events[-1]["reason"] == "exited" and "orphans" not in events[-1], (events, watch.err)
        assert events[-1]["lines"] == 3 + 1 + 12 and not process.alive(worker)
    finally:
        main.stdin.close()


@LINUX
def test_a_writer_that_starts_while_others_run_is_found_before_they_exit(tmp_path):
    """A second job appending to the log while the first runs (an evaluation, a restart under a
    wrapper that reopens the log) is found at the polls that follow, not only once the first has
    gone; the watch ends when both have."""
    log = tmp_path / "train.log"
    log.write_text("")
    with log.open("a") as out:
        first = subprocess.Popen("exec sleep 30", shell=True, stdout=out)
    second = None
    try:
        watch = Watch(log, "--timeout", "8s")
        watch.wait_for(f"writers of {log}: {first.pid} (sleep);")
        with log.open("a") as out:
            second = subprocess.Popen("exec sleep 30", shell=True, stdout=out)
        watch.wait_for(f"writers of {log}: {second.pid} (sleep);", timeout=5)
        first.kill()
        time.sleep(1.0)  # twice the settle: the second runs on, so does the watch
        assert watch.proc.poll() is None, (watch.out, watch.err)
        second.kill()
        rc, events = watch.finish()
        assert rc == 0 and events[-1]["reason"] == "exited", (events, watch.err)
        assert [w["pid"] for w in events[-1]["writers"]] == [first.pid, second.pid]
    finally:
        for p in (first, second):
            if p is not None:
                p.kill()
                p.wait()


@LINUX
def test_a_writer_gone_by_the_next_poll_having_written_one_line_is_not_the_job(tmp_path):
    """``echo line >> train.log`` while no job is known is no job whose exit ends the watch; a
    writer that leaves more than one line before the next poll is (a job that failed at once)."""
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    for text, reason in (("one line", "timeout"), ("Traceback (most recent call last):\nValueError: bad", "exited")):
        with log.open("a") as out:
            echo = subprocess.Popen(["sh", "-c", f"read x; printf '%s\\n' '{text}'"], stdin=subprocess.PIPE,
                                    stdout=out)
        watch = Watch(log, "--interval", "1.5", "--timeout", "3s")  # sighted at start, gone at the next poll
        watch.wait_for("following")
        echo.stdin.close()
        assert echo.wait(timeout=5) == 0
        rc, events = watch.finish()
        assert rc == 0 and events[-1]["reason"] == reason, (text, events, watch.err)
        assert ("writers" in events[-1]) == (reason == "exited")
        assert ("writers of" in "".join(watch.err)) == (reason == "exited")


def forking_through_tee(log: Path) -> tuple[subprocess.Popen, int, int]:
    """``python job.py | tee -a log`` (``FORKING``, its worker quiet) in a shell: the shell, the
    job's main process (it says its pid first) and its worker's pid, once the log shows them."""
    code = "import os; print(f'main {os.getpid()}', flush=True)\n" + FORKING
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0" 0 | tee -a "$1" > /dev/null', code, str(log)],
                             stdin=subprocess.PIPE)
    for _ in range(500):
        text = log.read_text()
        main, worker = re.search(r"^main (\d+)$", text, re.M), re.search(r"^worker (\d+)$", text, re.M)
        if main and worker:
            return shell, int(main.group(1)), int(worker.group(1))
        time.sleep(0.01)
    raise AssertionError(f"the job never said its pids: {log.read_text()!r}")


@LINUX
def test_a_worker_leaked_by_a_job_piped_through_tee_ends_the_watch_named_as_holding_the_pipe(tmp_path):
    """``python train.py | tee train.log``: tee is the log's writer, and lives as long as anything
    holds its pipe. Before: the watch followed tee alone; the main process killed, its worker held
    the pipe, tee ran on, and so did the watch, to its --timeout ('timeout', nothing named). Now the
    pipe's writers are the job: its end is 'exited', the worker named, tee as the relay."""
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    shell, main, worker = forking_through_tee(log)
    try:
        watch = Watch(log, "--timeout", "8s")
        watch.wait_for(" (tee): ")  # the job, found through tee's pipe
        tee = next(int(m.group(1)) for line in watch.err if (m := re.search(r"writers of \S+: (\d+) \(tee\)", line)))
        os.kill(main, 9)
        rc, events = watch.finish()
        end = events[-1]
        assert rc == 0 and end["reason"] == "exited", (events, watch.err)
        assert [o["pid"] for o in end["orphans"]] == [worker] and end["relays"] == [{"pid": tee, "name": "tee"}]
        assert {w["pid"] for w in end["writers"]} == {tee, main, worker}
        said = Outcome(str(log), "exited", 0, 1.0, 0, 5, writers=(Process(tee, name="tee"), Process(main, name="python"),
                                                                  Process(worker, name="python")),
                       orphans=(Process(worker, name="python"),), relays=(Process(tee, name="tee"),)).why()
        assert said == (f"writer {main} (python) exited, leaving orphaned child {worker} (python) that still holds "
                        f"the pipe into {tee} (tee) (a leaked worker?)")
        assert process.alive(worker) and process.alive(tee)  # named, left alone
    finally:
        shell.stdin.close()  # the worker's standard input: it exits, and tee with it
        shell.wait(timeout=10)


@LINUX
def test_a_job_piped_through_tee_that_exits_ends_the_watch(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("")
    code = ("import sys, time\nfor i in range(12):\n    print(f'epoch 0 step {i} loss=0.5', flush=True)\n"
            "    time.sleep(0.25)\n")
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "$0" | tee -a "$1" > /dev/null', code, str(log)])
    watch = Watch(log, "--timeout", "10s")
    watch.wait_for(" (tee): ")
    rc, events = watch.finish()
    shell.wait(timeout=10)
    assert rc == 0 and events[-1]["reason"] == "exited" and "orphans" not in events[-1], (events, watch.err)
    assert events[-1]["lines"] == 12 and [r["name"] for r in events[-1]["relays"]] == ["tee"]
