"""``dllogscan watch`` end to end: ``python -m dllogscan watch`` in a subprocess following a real
file that a writer thread grows, rotates or truncates while it runs. Short polls (0.1 s), a short
settle (0.5 s) and timeouts everywhere, so no test can hang."""
from __future__ import annotations

import codecs
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from dllogscan.watch import process
from tests.conftest import FIXTURES, progress_lines

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((FIXTURES / "diagnosis.schema.json").read_text())
BUS = ("RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible that "
       "dataloader's workers are out of shared memory.\n")
#: a real run's log (corpus/gen): a worker's collate_fn could not allocate shared memory
SHM_LOG = (ROOT / "corpus" / "logs" / "a-shm-nospace-fs-w2.log").read_text()
QUICK = ("--interval", "0.1", "--settle", "0.5")


def signals_as_a_terminal_gives_them() -> None:
    """SIGINT and SIGTERM at their defaults in a child: a suite started in the background (``cmd
    &``, ``nohup``) passes SIGINT on ignored, and Python then never raises KeyboardInterrupt (the
    Ctrl-C test)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


class Watch:
    """``dllogscan watch PATH ARGS`` running; its stdout and stderr are read as they come."""

    def __init__(self, path: Path, *args: str, fmt: str = "json", code: str | None = None) -> None:
        head = [sys.executable, "-c", code] if code else [sys.executable, "-m", "dllogscan"]
        timeout = () if "--timeout" in args else ("--timeout", "20s")
        self.proc = subprocess.Popen([*head, "watch", str(path), "-f", fmt, *QUICK, *timeout, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                     preexec_fn=signals_as_a_terminal_gives_them)
        self.said: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        self.out: list[str] = []
        threading.Thread(target=self._read, args=(self.proc.stderr, self.err, self.said), daemon=True).start()
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout, self.out, None), daemon=True)
        self.reader.start()

    @staticmethod
    def _read(stream, into: list[str], said: queue.Queue | None) -> None:
        for line in stream:
            into.append(line)
            if said is not None:
                said.put(line)

    def wait_for(self, words: str, timeout: float = 15.0) -> None:
        """Until stderr says ``words`` (the watch has started, or is waiting for the file)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if words in self.said.get(timeout=0.2):
                    return
            except queue.Empty:
                continue
        raise AssertionError(f"watch never said {words!r}: {self.err}")

    def finish(self, timeout: float = 30.0) -> tuple[int, list[dict]]:
        rc = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=5)
        return rc, [json.loads(line) for line in self.out] if self.out and self.out[0].startswith("{") else []


def written_now(log: Path, text: str) -> None:
    """``text`` as the log, its time set 10 s ahead. A watch reads lines written before it started
    as arriving at the file's time; one that starts more than --stall after the write (a loaded
    machine: 4 failures in 8 runs at --stall 1s) would report a stall at once. A time ahead reads
    as 'written when the watch started', as on an idle machine."""
    log.write_text(text)
    ahead = time.time() + 10
    os.utime(log, (ahead, ahead))


def append(path: Path, *steps: tuple[float, str]) -> threading.Thread:
    """Append each text after its delay (seconds), in a thread; returns it started."""
    def run() -> None:
        for delay, text in steps:
            time.sleep(delay)
            with path.open("a", encoding="utf-8") as f:
                f.write(text)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def job(log: Path, *steps: tuple[float, str]) -> subprocess.Popen:
    """A job's process: once its standard input closes (the watch has started), it appends each
    text to ``log`` after its delay, then exits. Not waited for until the test says: a zombie
    meanwhile, as a job is to a watch that is not its parent's."""
    code = ("import json, sys, time\nsys.stdin.read()\nfor delay, text in json.loads(sys.argv[2]):\n"
            "    time.sleep(delay)\n    with open(sys.argv[1], 'a') as f:\n        f.write(text)\n")
    return subprocess.Popen([sys.executable, "-c", code, str(log), json.dumps(steps)], stdin=subprocess.PIPE)


def state_of(pid: int) -> str:
    """The state letter of ``/proc/PID/stat`` (``Z``: a zombie), or '' where there is no /proc."""
    stat = Path(f"/proc/{pid}/stat")
    return stat.read_text().rsplit(") ", 1)[1][0] if stat.exists() else ""


def classes(event: dict) -> list[tuple[str, str]]:
    return [(d["class"], d["subclass"]) for d in event["diagnoses"]]


def test_a_failure_printed_mid_run_is_reported_at_once_with_its_line_in_the_file(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(200))
    watch = Watch(log)
    watch.wait_for("following")
    half = BUS.index("by signal")
    writer = append(log, *[(0.05, progress_lines(1, 200 + i)) for i in range(10)],
                    (0.1, BUS[:half]), (0.3, BUS[half:]),  # the failure line in two writes
                    *[(0.1, progress_lines(1, 300 + i)) for i in range(40)])  # other ranks go on
    rc, events = watch.finish()
    assert writer.is_alive()  # decided while the other ranks still write: a log that never goes quiet
    writer.join()
    assert rc == 1, watch.err
    (event,) = events
    assert event["event"] == "failure" and classes(event) == [("A", "bus-error")]
    jsonschema.validate({k: v for k, v in event.items() if k not in ("event", "time", "watched_s")}, SCHEMA)
    evidence = event["diagnoses"][0]["evidence"]
    assert [e["line"] for e in evidence] == [211] and "Bus error" in evidence[0]["text"]
    assert log.read_text().splitlines()[210].startswith("RuntimeError: DataLoader worker (pid 363)")


def test_half_a_traceback_is_not_reported_as_another_class(tmp_path):
    """The shm traceback's top says B/getitem (``Caught RuntimeError in DataLoader worker``); its
    last line, a write later, makes it A. The watch waits for the writes to settle."""
    log = tmp_path / "train.log"
    log.write_text("")
    lines = SHM_LOG.splitlines(keepends=True)
    watch = Watch(log)
    watch.wait_for("following")
    append(log, (0.1, "".join(lines[:8])), (0.3, "".join(lines[8:30])), (0.3, "".join(lines[30:])))
    rc, events = watch.finish()
    assert rc == 1 and [e["event"] for e in events] == ["failure"], watch.err
    assert classes(events[0]) == [("A", "shm-full")]
    assert 54 in [e["line"] for e in events[0]["diagnoses"][0]["evidence"]]


def test_a_stall_is_class_e_citing_the_last_progress_line_with_py_spy_first(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(5))
    watch = Watch(log, "--stall", "1.5s")
    watch.wait_for("following")
    append(log, *[(0.1, progress_lines(1, 5 + i)) for i in range(8)], (0.2, "saving checkpoint to ckpt.pt\n"))
    start = time.monotonic()
    rc, events = watch.finish()
    assert rc == 1, watch.err
    (event,) = events
    assert event["event"] == "stall" and classes(event) == [("E", "hang")]
    diagnosis = event["diagnoses"][0]
    lines = log.read_text().splitlines()
    assert [(e["line"], e["text"]) for e in diagnosis["evidence"]] == [(13, lines[12]), (14, lines[13])]
    assert lines[12].startswith("Epoch 0:") and diagnosis["facts"]["last_progress_line"] == "13"
    assert diagnosis["fixes"][0]["commands"][0].startswith("py-spy dump --pid")
    assert re.match(r"no progress line for 1\.\d s after line 13 ", diagnosis["notes"][0])
    assert 1.5 < time.monotonic() - start < 10


def test_keep_going_reports_a_stall_then_a_later_failure_then_sums_up(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    watch = Watch(log, "--stall", "1s", "--keep-going", "--timeout", "6s")
    watch.wait_for("following")
    # the failure comes in the same write as the progress that ends the stall: written apart, a
    # loaded machine could pause the writer past the 1 s threshold and see a second stall first
    append(log, (0.1, progress_lines(1, 3)), (2.0, progress_lines(2, 4) + BUS))
    rc, events = watch.finish()
    assert rc == 1, watch.err
    assert [e["event"] for e in events] == ["stall", "failure", "end"]
    assert classes(events[0]) == [("E", "hang")] and events[0]["diagnoses"][0]["evidence"][0]["line"] == 4
    assert classes(events[1]) == [("A", "bus-error")] and events[1]["diagnoses"][0]["evidence"][0]["line"] == 7
    assert events[2]["reason"] == "timeout" and events[2]["reports"] == 2 and events[2]["lines"] == 7


def test_rotation_and_truncation_start_again_from_the_new_start(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(50))
    watch = Watch(log)
    watch.wait_for("following")
    time.sleep(0.3)
    log.rename(tmp_path / "train.log.1")
    log.write_text(progress_lines(2) + BUS)
    rc, events = watch.finish()
    assert rc == 1 and classes(events[0]) == [("A", "bus-error")]
    assert events[0]["diagnoses"][0]["evidence"][0]["line"] == 3
    assert any("was replaced: reading the new file from its start" in line for line in watch.err)

    log.write_text(progress_lines(50))
    watch = Watch(log)
    watch.wait_for("following")
    time.sleep(0.3)
    log.write_text(BUS)  # copytruncate: the same file, cut and written again
    rc, events = watch.finish()
    assert rc == 1 and events[0]["diagnoses"][0]["evidence"][0]["line"] == 1
    assert any("was truncated: reading it again from its start" in line for line in watch.err)


def test_a_file_created_late_is_waited_for_and_said_once(tmp_path):
    log = tmp_path / "later.log"
    watch = Watch(log)
    watch.wait_for("does not exist yet")
    time.sleep(0.8)  # eight polls
    log.write_text(progress_lines(3) + BUS)
    rc, events = watch.finish()
    assert rc == 1 and events[0]["diagnoses"][0]["evidence"][0]["line"] == 4
    assert sum("does not exist yet" in line for line in watch.err) == 1
    assert "Traceback" not in "".join(watch.err)


def test_timeout_with_nothing_found_is_exit_0_and_one_summary_line(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(BUS + progress_lines(20))  # an old failure, before the watch: context, not news
    watch = Watch(log, "--timeout", "1.5s", fmt="text")
    watch.wait_for("following")
    append(log, (0.2, progress_lines(30, 20)))
    rc, _ = watch.finish()
    assert rc == 0, watch.err
    (summary,) = watch.out
    assert summary.startswith(f"dllogscan watch: {log}: nothing found in 1.") and summary.endswith(
        "(timeout; 30 new lines read, up to line 51)\n")

    watch = Watch(log, "--from-start")  # the same file read whole: the old failure is news
    rc, events = watch.finish()
    assert rc == 1 and events[0]["diagnoses"][0]["evidence"][0]["line"] == 1


def test_a_failure_printed_before_the_timeout_is_decided_at_it_not_dropped(tmp_path):
    """``--timeout`` is how long the watch runs, not how long a silence may last (``--stall``): at it,
    a failure whose text has not settled yet is decided at once and reported, then the summary."""
    log = tmp_path / "train.log"
    log.write_text(progress_lines(5))
    watch = Watch(log, "--timeout", "2s", "--settle", "10s", "--no-writers", fmt="text")
    watch.wait_for("following")
    append(log, (0.2, BUS))
    rc, _ = watch.finish()
    assert rc == 1 and "DataLoader failure printed (line 6)" in watch.out[0], (watch.out, watch.err)
    assert watch.out[-1].endswith("(timeout; 1 new line read, up to line 6)\n") and "1 report in 2." in watch.out[-1]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_is_exit_0_with_the_summary(tmp_path, sig):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(10))
    watch = Watch(log, fmt="text")
    watch.wait_for("following")
    append(log, (0.1, progress_lines(2, 10))).join()
    time.sleep(0.5)
    watch.proc.send_signal(sig)
    rc, _ = watch.finish()
    assert rc == 0 and watch.out[-1].endswith("(stopped; 2 new lines read, up to line 12)\n"), watch.out
    assert "Traceback" not in "".join(watch.err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_failure_still_settling_at_ctrl_c_is_reported_not_dropped(tmp_path, sig):
    """A job prints a failure, then Ctrl-C reaches the watch inside its --settle time (here another
    process sends it, 0.3 s after the line). Before: the watch ended 'stopped', nothing found,
    exit 0; now the failure is decided then and reported before the summary, exit 1."""
    log = tmp_path / "train.log"
    log.write_text(progress_lines(5))
    watch = Watch(log, "--settle", "30s", "--no-writers", fmt="text")
    watch.wait_for("following")
    code = ("import os, sys, time\nwith open(sys.argv[1], 'a') as f:\n    f.write(sys.argv[3])\n"
            "time.sleep(0.3)\nos.kill(int(sys.argv[2]), int(sys.argv[4]))\n")
    start = time.monotonic()
    sender = subprocess.run([sys.executable, "-c", code, str(log), str(watch.proc.pid), BUS, str(int(sig))],
                            timeout=30)
    assert sender.returncode == 0
    rc, _ = watch.finish()
    assert time.monotonic() - start < 15  # ended by the signal, not by the 20 s timeout nor the settle time
    assert rc == 1 and "DataLoader failure printed (line 6)" in watch.out[0], (watch.out, watch.err)
    assert watch.out[-1].endswith("(stopped; 1 new line read, up to line 6)\n") and "1 report in" in watch.out[-1]
    assert "Traceback" not in "".join(watch.err)


def test_with_pid_a_job_that_ended_ends_the_watch_with_no_stall_after_it(tmp_path):
    """The job writes its last progress line and exits: the watch ends (a zombie is gone too), and
    no stall is reported while it reads what is left, though that takes longer than --stall here."""
    log = tmp_path / "train.log"
    written_now(log, progress_lines(5))
    proc = job(log, *[(0.1, progress_lines(1, 5 + i)) for i in range(5)])
    watch = Watch(log, "--pid", str(proc.pid), "--stall", "1s", "--settle", "1.5", fmt="text")
    watch.wait_for("following")
    proc.stdin.close()
    rc, _ = watch.finish()
    assert state_of(proc.pid) in ("Z", "")  # not reaped while it was watched
    assert proc.wait(timeout=5) == 0
    assert rc == 0, (watch.out, watch.err)
    (summary,) = watch.out
    assert summary.endswith(f"(process {proc.pid} exited; 5 new lines read, up to line 10)\n"), summary


def test_with_pid_the_failure_a_job_prints_as_it_dies_is_reported_then_the_end(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(3))
    proc = job(log, (0.1, progress_lines(2, 3)), (0.1, BUS))
    watch = Watch(log, "--pid", str(proc.pid))
    watch.wait_for("following")
    proc.stdin.close()
    rc, events = watch.finish()
    proc.wait(timeout=5)
    assert rc == 1 and [e["event"] for e in events] == ["failure", "end"], (events, watch.err)
    assert classes(events[0]) == [("A", "bus-error")] and events[0]["diagnoses"][0]["evidence"][0]["line"] == 6
    assert events[1]["reason"] == "exited" and events[1]["pid"] == proc.pid and events[1]["reports"] == 1


def test_a_process_of_another_user_is_alive_and_a_zombie_is_gone(monkeypatch):
    def refused(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(process.os, "kill", refused)
    monkeypatch.setattr(process, "_fields", lambda pid, proc: [b"S"])
    assert process.alive(4242)
    monkeypatch.setattr(process, "_fields", lambda pid, proc: [b"Z"])
    assert not process.alive(4242)


#: PyTorch Lightning's line when a fit reached max_epochs (``dllogscan/data/run_ends.toml``)
FIT_ENDED = "`Trainer.fit` stopped: `max_epochs=3` reached.\n"


def test_a_silence_after_the_run_says_it_finished_ends_the_watch_instead_of_a_stall(tmp_path):
    """Lightning prints its bar a last time after the line: the run's own end, not a new run."""
    log = tmp_path / "train.log"
    written_now(log, progress_lines(5))
    watch = Watch(log, "--stall", "1s")
    watch.wait_for("following")
    append(log, *[(0.1, progress_lines(1, 5 + i)) for i in range(3)], (0.1, FIT_ENDED), (0.05, progress_lines(1, 8)))
    rc, events = watch.finish()
    assert rc == 0 and [e["event"] for e in events] == ["end"], (events, watch.err)
    assert events[0]["reason"] == "finished" and events[0]["finish_line"] == 9 and events[0]["lines"] == 10


def test_progress_after_the_finish_a_second_fit_makes_a_silence_a_stall_again(tmp_path):
    log = tmp_path / "train.log"
    written_now(log, progress_lines(5))
    code = ("import dllogscan.correlate.stall as s; s.FINISH_GRACE_S = 0.5; "
            "from dllogscan.cli.fast import main; main()")
    watch = Watch(log, "--stall", "1.5s", code=code)
    watch.wait_for("following")
    append(log, (0.1, progress_lines(1, 5)), (0.1, FIT_ENDED), *[(0.3, progress_lines(1, 100 + i)) for i in range(3)])
    rc, events = watch.finish()
    assert rc == 1 and [e["event"] for e in events] == ["stall"], (events, watch.err)
    assert events[0]["diagnoses"][0]["facts"]["last_progress_line"] == "10"


def test_a_utf16_log_is_followed_with_its_line_numbers(tmp_path):
    """What Windows PowerShell's ``>`` writes: a BOM, then UTF-16 text."""
    log = tmp_path / "train.log"
    log.write_bytes(codecs.BOM_UTF16_LE + progress_lines(30).encode("utf-16-le"))
    watch = Watch(log)
    watch.wait_for("read as utf-16-le")
    with log.open("ab") as f:
        f.write((progress_lines(2, 30) + BUS).encode("utf-16-le"))
    rc, events = watch.finish()
    assert rc == 1 and events[0]["diagnoses"][0]["evidence"][0]["line"] == 33, watch.err


def test_the_watch_imports_no_classifier_and_no_torch(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(progress_lines(5) + BUS)
    code = ("import sys; from dllogscan.watch import Options, watch; "
            "found = []; watch(sys.argv[1], Options(interval=0.1, settle=0.1, from_start=True), found.append, "
            "lambda text: None); print(found[0].result.diagnoses[0].cls, "
            "sorted(m for m in ('torch', 'sklearn', 'numpy', 'pandas') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code, str(log)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.stdout.strip() == "A []", proc.stderr


def test_bursts_of_buffered_output_are_no_stall(tmp_path):
    """stdout block-buffered into a file: 60 progress lines at once, then nothing. With the floor
    lowered to 1 s (it is 10 min), bursts 1.6 s apart pass it each time; the first step between
    bursts sets the threshold (30 steps), and none is a stall. test_stall.py shows the same at
    the real scale, where steps counted between lines would leave the floor alone."""
    log = tmp_path / "train.log"
    log.write_text("starting\n")
    code = ("import dllogscan.correlate.cadence as c; c.MIN_SILENCE_S = 1.0; "
            "from dllogscan.cli.fast import main; main()")
    watch = Watch(log, "--timeout", "8s", code=code)
    watch.wait_for("following")
    bursts = [(0.6 if k == 1 else 1.6, progress_lines(60, 60 * k)) for k in range(5)]
    append(log, *bursts)
    rc, events = watch.finish()
    assert rc == 0 and [e["event"] for e in events] == ["end"], (events, watch.err)
    assert events[0]["lines_read"] == 300


def test_unreadable_or_binary_files_and_bad_options_are_one_line_and_exit_2(tmp_path):
    binary = tmp_path / "weights.bin"
    binary.write_bytes(bytes(range(256)) * 40)
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()
    for args, message in [([str(binary)], "looks binary"), ([str(tmp_path)], "is a directory"),
                          ([str(binary), "--stall", "soon"], "--stall takes a duration"),
                          ([str(binary), "-f", "md"], "unknown --format 'md'"), (["-"], "tee job.log"),
                          ([str(binary), "--pid", str(ended.pid)], f"--pid {ended.pid}: no such process")]:
        proc = subprocess.run([sys.executable, "-m", "dllogscan", "watch", *args, "--timeout", "5s"],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.strip().splitlines()[-1].startswith("Error: ")


def test_ctrl_c_while_a_failure_settles_decides_it_in_process(tmp_path):
    """The same without timing: the failure has been read and waits for its --settle quiet when
    the interrupt comes (from the loop's sleep), so only the Ctrl-C path can report it."""
    from dllogscan.watch import Options, watch

    log = tmp_path / "train.log"
    log.write_text(progress_lines(5))
    now, sleeps, found = [0.0], [], []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 1:
            log.write_text(progress_lines(5) + BUS)
        elif len(sleeps) == 3:
            raise KeyboardInterrupt
        now[0] += seconds

    outcome = watch(str(log), Options(interval=1.0, settle=60.0, writers=False), found.append, lambda _: None,
                    clock=lambda: now[0], sleep=sleep)
    assert (outcome.reason, outcome.reports) == ("interrupted", 1)
    assert [(e.kind, e.result.diagnoses[0].cls) for e in found] == [("failure", "A")]


def _interrupted_watch(tmp_path, monkeypatch, where: str):
    """A watch of a log that prints a failure, interrupted once ``where`` (``decide``: inside the
    diagnosis of the failure; ``report``: while its report is being written)."""
    from dllogscan.watch import Options, loop, watch

    log = tmp_path / "train.log"
    log.write_text(progress_lines(5))
    now, found, raised, sleeps = [0.0], [], [], []
    run = loop.pipeline.run

    def interrupting_run(*args, **kwargs):
        if where == "decide" and not raised:
            raised.append(1)
            raise KeyboardInterrupt
        return run(*args, **kwargs)

    def report(event) -> None:
        if where == "report" and not raised:
            raised.append(1)
            raise KeyboardInterrupt
        found.append(event)

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 1:
            log.write_text(progress_lines(5) + BUS)
        now[0] += seconds

    monkeypatch.setattr(loop.pipeline, "run", interrupting_run)
    outcome = watch(str(log), Options(interval=1.0, settle=0.0, writers=False), report, lambda _: None,
                    clock=lambda: now[0], sleep=sleep)
    return outcome, found, raised


@pytest.mark.parametrize("where", ["decide", "report"])
def test_ctrl_c_inside_a_decision_or_a_report_still_reports_the_failure(tmp_path, monkeypatch, where):
    """Before: a Ctrl-C while the failure was being diagnosed lost it (the pending mark was cleared
    before the diagnosis ran), and one while its report was written lost the report (the decided
    list was not kept): "interrupted" with 0 reports. Now the interrupt path reports it."""
    outcome, found, raised = _interrupted_watch(tmp_path, monkeypatch, where)
    assert raised and (outcome.reason, outcome.reports) == ("interrupted", 1)
    assert [(e.kind, e.result.diagnoses[0].cls) for e in found] == [("failure", "A")]
