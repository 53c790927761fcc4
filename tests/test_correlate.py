"""Cross-evidence: how hits of one source combine into ranked diagnoses."""
from __future__ import annotations

import pytest

import dllogscan
from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from tests.conftest import progress_lines

EXITED = "RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly\n"
KERNEL = "[ 99.1] Out of memory: Killed process {pid} (python) total-vm:1kB, anon-rss:2kB\n"
CAUGHT = """KeyError: Caught KeyError in DataLoader worker process 0.
Original Traceback (most recent call last):
  File "/usr/lib/python3/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
    data = fetcher.fetch(index)
  File "/home/u/train.py", line 41, in __getitem__
    label = self.labels[path]
KeyError: 'img_0042.jpg'
"""


def diagnose(scanner, text):
    return list(pipeline.run(sources.from_text(text), scanner, classifier="off").diagnoses)


def test_exited_alone_is_suspected_oom(mini_scanner):
    [d] = diagnose(mini_scanner, progress_lines(20) + EXITED)
    assert (d.cls, d.subclass) == ("B", "oom-suspected") and 0.5 <= d.confidence < 0.7


def test_exited_plus_kernel_kill_of_same_pid_is_oom(mini_scanner):
    [d] = diagnose(mini_scanner, progress_lines(20) + EXITED + KERNEL.format(pid=4242))
    assert (d.cls, d.subclass) == ("B", "oom") and d.confidence > 0.95
    assert {e.line for e in d.evidence} == {21, 22}
    assert "killed process 4242" in d.fixes[0].commands[0]


def test_kernel_kill_of_another_pid_is_weaker(mini_scanner):
    [same] = diagnose(mini_scanner, progress_lines(20) + EXITED + KERNEL.format(pid=4242))
    [other] = diagnose(mini_scanner, progress_lines(20) + EXITED + KERNEL.format(pid=9))
    assert other.subclass == "oom" and other.confidence < same.confidence


def test_caught_exception_is_getitem_with_the_real_traceback(mini_scanner):
    [d] = diagnose(mini_scanner, progress_lines(20) + CAUGHT + EXITED)
    assert (d.cls, d.subclass) == ("B", "getitem")
    texts = [e.text for e in d.evidence]
    assert texts[0].startswith("KeyError: Caught KeyError in DataLoader worker process 0")
    assert "KeyError: 'img_0042.jpg'" in texts
    assert d.facts["exception"] == "KeyError"


def test_bus_error_absorbs_the_worker_exit(mini_scanner):
    log = progress_lines(20) + EXITED + "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error.\n"
    [d] = diagnose(mini_scanner, log)
    assert d.cls == "A" and len(d.evidence) == 2


def test_repeated_by_many_ranks_is_one_finding_with_a_count(mini_scanner):
    log = progress_lines(20) + "".join(
        f"[rank{r}]: RuntimeError: DataLoader worker (pid {1000 + r}) is killed by signal: Killed.\n" for r in range(8))
    [d] = diagnose(mini_scanner, log)
    assert d.cls == "B" and d.count == 8 and len(d.evidence) == 1


def test_timelimit_after_progress_is_a_hang(mini_scanner):
    log = progress_lines(50) + "slurmstepd: error: *** JOB 42 ON node07 CANCELLED AT 2026-11-30T06:00:00 DUE TO TIME LIMIT ***\n"
    [d] = diagnose(mini_scanner, log)
    assert d.cls == "E" and d.facts["job_id"] == "42" and d.facts["node"] == "node07"


def test_timelimit_without_progress_is_nothing(mini_scanner):
    log = "setup\n" * 30 + "slurmstepd: error: *** JOB 42 ON node07 CANCELLED AT 2026-11-30T06:00:00 DUE TO TIME LIMIT ***\n"
    assert diagnose(mini_scanner, log) == []


def test_timelimit_yields_to_a_real_failure(mini_scanner):
    log = (progress_lines(50) + "RuntimeError: DataLoader worker (pid 5) is killed by signal: Bus error.\n"
           + progress_lines(5) + "slurmstepd: error: *** JOB 42 ON n1 CANCELLED AT 2026-11-30T06:00:00 DUE TO TIME LIMIT ***\n")
    assert [d.cls for d in diagnose(mini_scanner, log)] == ["A"]


def test_ctrl_c_in_the_loader_wait_is_a_hang(mini_scanner):
    tb = ("^CTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
          "  File \"dataloader.py\", line 1120, in _try_get_data\n    data = self._data_queue.get(timeout=timeout)\n"
          "KeyboardInterrupt\n")
    [d] = diagnose(mini_scanner, progress_lines(30) + tb)
    assert d.cls == "E"
    plain = "^CTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\nKeyboardInterrupt\n"
    assert diagnose(mini_scanner, progress_lines(30) + plain) == []


def test_healthy_log_is_nothing(mini_scanner):
    assert diagnose(mini_scanner, "DataLoader(ds, num_workers=8)\n" + progress_lines(500)) == []


def test_several_failures_are_ranked(mini_scanner):
    log = (progress_lines(10) + EXITED + progress_lines(10)
           + "RuntimeError: DataLoader worker (pid 5) is killed by signal: Bus error.\n")
    ds = diagnose(mini_scanner, log)
    assert [d.cls for d in ds] == ["A"]  # the suspected B yields to the decisive A


def test_oom_killer_alone_counts_only_for_a_python_process():
    from dllogscan.pipeline import runner as pl
    from dllogscan.scan.scanner import Scanner
    from dllogscan.signatures.loader import load_database

    scanner = Scanner(load_database(), engine="python")
    python = "[ 99.1] Out of memory: Killed process 4242 (python3) total-vm:1kB, anon-rss:2kB\n"
    java = "[ 99.1] Out of memory: Killed process 4242 (java) total-vm:1kB, anon-rss:2kB\n"
    run = lambda text: list(pl.run(sources.from_text(text), scanner, classifier="off").diagnoses)
    assert [d.subclass for d in run(progress_lines(10) + python)] == ["oom"]
    assert run(progress_lines(10) + java) == []
    # with a DataLoader failure in the source, any kernel kill still refines it
    [d] = run(progress_lines(10) + EXITED + java)
    assert (d.cls, d.subclass) == ("B", "oom")


def test_support_frames_are_not_cited_for_another_class(mini_scanner):
    tb = ("Traceback (most recent call last):\n"
          "  File \"/x/torch/utils/data/dataloader.py\", line 1120, in _try_get_data\n"
          "RuntimeError: DataLoader worker (pid 99) is killed by signal: Killed.\n")
    [d] = diagnose(mini_scanner, progress_lines(10) + tb)
    assert d.cls == "B" and [e.signature for e in d.evidence] == ["B.oom.killed-by-signal"]


def test_every_built_in_condition_the_database_accepts_is_evaluated():
    from dllogscan.correlate.candidates import WINDOW_CONDITIONS
    from dllogscan.signatures.database import BUILTIN_CONDITIONS

    assert set(BUILTIN_CONDITIONS) == {"@progress", "@loader-frame-below", *WINDOW_CONDITIONS}


def test_one_message_printed_twice_or_cut_short_is_cited_once_and_whole():
    import dllogscan

    handler = "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."
    bus = ("RuntimeError: DataLoader worker (pid 262) is killed by signal: Bus error. It is possible that "
           "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.")
    text = "\n".join([bus[:71], handler, handler[:85], "epoch 1", handler.rstrip("."), bus, ""])
    [d] = dllogscan.scan(text, classifier="off").diagnoses
    cited = [(e.line, e.text) for e in d.evidence]
    assert sorted(cited) == [(2, handler), (6, bus)], cited  # the whole of each, once
    assert d.count >= 1


def test_a_longer_repeat_replaces_its_own_citation_not_the_exception_cited_after_it():
    import dllogscan

    short = "RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly"
    whole = short + " with exit code 1. Details are lost due to multiprocessing."
    [d] = dllogscan.scan(CAUGHT + short + "\n" + whole + "\n", classifier="off").diagnoses
    cited = [e.text for e in d.evidence]
    assert "KeyError: 'img_0042.jpg'" in cited, cited  # the real exception stays cited
    assert whole in cited and short not in cited, cited


IDLE_WORKER = ("Process Process-3:\nTraceback (most recent call last):\n"
               '  File "/opt/conda/lib/python3.10/multiprocessing/process.py", line 108, in run\n'
               "    self._target(*self._args, **self._kwargs)\n"
               '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 283, in _worker_loop\n'
               "    r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)\nKeyboardInterrupt\n")
MAIN_IN_STEP = ('^CTraceback (most recent call last):\n  File "/home/a/train.py", line 180, in main\n    loss.backward()\n'
                '  File "/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", line 492, in backward\n'
                "KeyboardInterrupt\n")
MAIN_IN_LOADER = ('^CTraceback (most recent call last):\n  File "/home/a/train.py", line 170, in main\n'
                  "    for batch in loader:\n"
                  '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 631, in __next__\n'
                  "    data = self._next_data()\nKeyboardInterrupt\n")


@pytest.mark.parametrize("log, expected", [
    (IDLE_WORKER * 2 + MAIN_IN_STEP, []),  # before: E / hang from the idle workers' frames above the ^C
    (MAIN_IN_STEP + IDLE_WORKER * 2, []),  # the workers' tracebacks printed after the main one's
    (IDLE_WORKER * 2 + MAIN_IN_LOADER, ["E"]),  # the main loop stood in the loader: the hang it was
])
def test_a_ctrl_c_is_a_hang_where_the_main_traceback_stands_in_the_loader(log, expected):
    """Each worker prints its own KeyboardInterrupt in ``_worker_loop`` at every Ctrl-C, stalled or
    not: only the traceback that the ``^C`` begins says where the loop stood."""
    got = dllogscan.scan_text(progress_lines(30) + log, classifier="off").diagnoses
    assert [d.cls for d in got] == expected
