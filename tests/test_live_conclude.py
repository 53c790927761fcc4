"""The ladder's conclusion says only what its rungs showed."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("psutil")

from dllogscan.live.conclude import conclude, render  # noqa: E402
from dllogscan.live.repro import Rung, Settings, ladder  # noqa: E402
from tests.live_helpers import scanner  # noqa: E402

DS = "tests.live_datasets"


def run(factory: str, workers):
    rungs = ladder(Settings(factory=f"{DS}:{factory}", workers=workers, batches=2, timeout=60), scanner())
    return rungs, conclude(rungs)


@pytest.mark.timeout(120)
def test_an_exception_raised_only_in_workers_shows_the_workers_traceback():
    """Before: 'the bug is in multiprocessing (shared memory, descriptors, fork safety, worker
    memory)', no traceback (the user's message and frame never shown), and the fix 'Rerun with
    num_workers=0 and fix the dataset code', which the ladder had just done and which passed."""
    rungs, verdict = run("worker_only", (0, 1))
    assert [r.result for r in rungs] == ["pass", "fail"]
    assert (rungs[1].cls, rungs[1].subclass) == ("B", "getitem")
    assert "raises only in a worker process" in verdict["text"]
    assert "shared memory" not in verdict["text"]
    assert verdict["traceback"].startswith("Original Traceback (most recent call last):")
    assert verdict["traceback"].endswith("ValueError: no shard for worker at sample 0")
    assert "in hook" in verdict["traceback"]
    assert "fixes" not in verdict
    text = render(rungs, verdict)
    assert "ValueError: no shard for worker at sample 0" in text and "Rerun with num_workers=0" not in text


@pytest.mark.timeout(120)
def test_without_a_num_workers_0_rung_it_does_not_claim_one_passed():
    """Before: 'It passes with num_workers=0 and fails with num_workers=1' from --workers 1."""
    rungs, verdict = run("raising", (1,))
    assert [r.result for r in rungs] == ["fail"]
    assert "passes with num_workers=0" not in verdict["text"]
    assert verdict["text"].startswith("It fails with num_workers=1 (num_workers=0 was not run")


def test_two_rungs_hung_in_the_same_place_show_their_stacks_once():
    """Before: every hung rung printed its cause and each process's stack again: the same lock at
    num_workers 1 and 4 was six stacks and two 'Likely cause' lines of the same text."""
    from dllogscan.live.repro import Rung

    worker = ('Thread 0x01 (most recent call first):\n  File "/w/ds.py", line 12 in __getitem__\n'
              '  File "/t/torch/utils/data/_utils/worker.py", line 308 in _worker_loop\n')
    main = 'Thread 0x02 (most recent call first):\n  File "/t/torch/utils/data/dataloader.py", line 1133 in _try_get_data\n'
    cause = ("a lock acquire", "E", "with _L:")
    rungs = [Rung(workers=w, result="hang", seconds=6.0, output="", stacks={100 * w: main, 100 * w + 1: worker,
                                                                             100 * w + 2: worker},
                  cause=cause, main_pid=100 * w) for w in (1, 4)]
    text = render(rungs, {"text": "It hangs."})
    assert text.count("Likely cause: a lock acquire") == 1
    assert text.count("Stack of worker") == 1 and text.count("Stack of main process") == 1
    assert "num_workers=1: 1 more stack(s), the same innermost frames as num_workers=1 showed above." in text
    assert "num_workers=4: 3 more stack(s), the same innermost frames as num_workers=1 showed above." in text


def test_the_text_report_drops_the_controls_of_what_the_dataset_printed():
    """Before: an exception message with ESC/BEL (a terminal title, a screen clear) from the data
    reached the terminal raw, in the evidence column and in the traceback shown below it."""
    out = ("Traceback (most recent call last):\n  File \"/data/ds.py\", line 3, in __getitem__\n"
           "    raise KeyError(name)\nKeyError: '\x1b[2J\x1b]0;owned\x07\u202ebad.png'\n")
    rungs = [Rung(0, "fail", output=out), Rung(1, "skipped")]
    text = render(rungs, conclude(rungs))
    assert "KeyError: '[2J]0;ownedbad.png'" in text
    assert not any(c in text for c in "\x1b\x07\u202e")


@pytest.mark.parametrize("rung, said", [
    (Rung(0, "hang"), "no stack could be dumped from it (nothing is below)"),
    (Rung(0, "hang", stacks={41: '  File "/data/ds.py", line 9 in __getitem__\n'}, main_pid=41), "its stack is below"),
    (Rung(0, "fail", output="Fatal Python error: Segmentation fault\n"), "the end of its output is below"),
    (Rung(0, "fail", output=""), "it printed nothing"),
    (Rung(0, "fail", output="Traceback (most recent call last):\nKeyError: 3\n"), "the real traceback is below"),
])
def test_the_num_workers_0_verdict_says_what_is_below_it(rung, said):
    """Before: always 'the real traceback is below', also over a hang whose dataset ignored SIGUSR1
    (no stack dumped: nothing below) and a crash that printed no traceback."""
    verdict = conclude([rung])
    assert verdict["text"].endswith(f"not in the worker settings. Fix it there; {said}.")


def test_the_measured_worker_is_scaled_only_to_a_larger_top_rung():
    """Before: '--workers 0,1' said 'at num_workers=1 about ...' after the measure at num_workers=1."""
    from dllogscan.live.conclude import scaled

    peak = {"rss": 64 << 20, "fds": 12}
    one = [Rung(workers=0, result="pass"), Rung(workers=1, result="pass", worker_peak=peak)]
    assert scaled(one) == "measured at num_workers=1: 64.0 MiB RSS and 12 open descriptors per worker"
    assert scaled(one + [Rung(workers=4, result="pass")]).endswith(
        "; at num_workers=4 about 256.0 MiB and 48 descriptors in workers")


def test_a_hang_at_num_workers_0_is_not_said_to_come_from_a_fork():
    """Before: 'Likely cause: a lock acquire (a lock held by another thread when the worker forked
    is never released in it).' for a rung that forked no worker; now the cause in one process, the
    thread that holds the lock (named from what the rung held), the check, and why fork causes do
    not apply."""
    holder = ('Thread 0x00007fd4cab3d6c0 (most recent call first):\n  File "/w/ds.py", line 51 in refresh\n'
              '      time.sleep(3600)\n\n')
    main = ('Current thread 0x00007fd4ecbfbb80 (most recent call first):\n  File "/w/ds.py", line 16 in __getitem__\n'
            '      with _LOCK:\n  File "/t/torch/utils/data/_utils/fetch.py", line 54 in fetch\n')
    held = {"modules": [], "files": [], "threads": {"0x00007fd4cab3d6c0": "refresher"}, "native_threads": 0}
    rungs = [Rung(0, "hang", seconds=6.0, stacks={41: holder + main}, main_pid=41,
                  cause=("a lock acquire", "E", "with _LOCK:"), held=held), Rung(1, "skipped")]
    text = render(rungs, conclude(rungs))
    assert "when the worker forked" not in text
    assert ("Likely cause: a lock that another thread of this process holds and has not released, at ds.py:16 in "
            "__getitem__: with _LOCK:.\n  other thread: refresher at ds.py:51 in refresh: time.sleep(3600)\n") in text
    assert "\nNot the cause: no worker forked (num_workers=0)" in text
