"""doctor --sample's hang: its cause named from the stack (data/sample_hangs.toml), the other
threads, what the process held where workers would fork; end to end on real hung samples."""
from __future__ import annotations

import json
import sysconfig

import pytest

from dllogscan.live.sample_hang import DATA, explain, hazards, table
from dllogscan.core.paths import data_document
from tests.test_live_doctor import _doctor

LOOP = ('  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54 in fetch\n'
        '      data = [self.dataset[idx] for idx in possibly_batched_index]\n'
        '  File "/venv/lib/python3.11/site-packages/torch/utils/data/dataloader.py", line 725 in __next__\n'
        '      data = self._next_data()\n')
HOLDER = ('Thread 0x00007fd4cab3d6c0 (most recent call first):\n'
          '  File "/data/ds.py", line 51 in refresh\n'
          '      time.sleep(3600)\n'
          '  File "/usr/lib/python3.11/threading.py", line 982 in run\n'
          '      self._target(*self._args, **self._kwargs)\n\n')
LOCKED = HOLDER + ('Current thread 0x00007fd4ecbfbb80 (most recent call first):\n'
                   '  File "/data/ds.py", line 16 in __getitem__\n'
                   '      with self._lock:\n' + LOOP)
SPINNING = ('Current thread 0x00007f (most recent call first):\n'
            '  File "/data/ds.py", line 12 in decode\n'
            '      n += 1\n'
            '  File "/data/ds.py", line 40 in __getitem__\n'
            '      with self.files:\n' + LOOP)
HELD = {"modules": ["cv2"], "files": ["/data/train.h5"], "threads": {"0x00007fd4cab3d6c0": "refresher"},
        "native_threads": 0}


@pytest.mark.parametrize("entry", data_document(DATA)["stuck"], ids=lambda e: e["name"])
def test_each_stuck_entry_matches_its_examples_and_none_of_its_counter_examples(entry):
    stuck = {s.name: s for s in table()[1]}[entry["name"]]
    for line in entry["examples"]:
        assert stuck.shows(line, innermost=True), line
    for line in entry["counter_examples"]:
        assert not stuck.shows(line, innermost=True), line


def test_a_lock_another_thread_holds_is_named_with_that_thread_and_the_check():
    said = explain(LOCKED, HELD)
    assert (said["cause"], said["evidence"]) == ("lock", "ds.py:16 in __getitem__: with self._lock:")
    assert said["threads"] == ["refresher at ds.py:51 in refresh: time.sleep(3600)"]
    assert "py-spy dump --pid <pid>" in said["check"] and said["no_fork"].startswith("no worker forked (num_workers=0)")


def test_a_stack_that_shows_no_cause_says_so_and_where_it_stood():
    """A ``with`` line in an outer frame is no lock wait: the innermost frame is plain code."""
    said = explain(SPINNING, None)
    assert said["cause"] is None and said["says"].startswith("none found: the stack shows no lock, wait, I/O")
    assert said["evidence"] == "ds.py:12 in decode: n += 1" and said["threads"] == [] and said["hazards"] == []
    assert explain("", None)["evidence"] == "no stack could be dumped"


def test_a_wait_inside_threading_is_shown_at_the_datasets_line():
    stack = ('Current thread 0x00007f (most recent call first):\n'
             '  File "/usr/lib/python3.11/threading.py", line 327 in wait\n      waiter.acquire()\n'
             '  File "/usr/lib/python3.11/threading.py", line 629 in wait\n      signaled = self._cond.wait(timeout)\n'
             '  File "/data/ds.py", line 33 in __getitem__\n      self.ready.wait()\n' + LOOP)
    said = explain(stack.replace("/usr/lib/python3.11", sysconfig.get_paths()["stdlib"]), None)
    assert (said["cause"], said["evidence"]) == ("event", "ds.py:33 in __getitem__: self.ready.wait()")


def test_what_the_process_held_is_named_as_fork_hazards():
    said = hazards(HELD)
    assert said[0].startswith("OpenCV (cv2) is loaded") and said[1].endswith(": /data/train.h5")
    assert said[2].endswith(": 1 Python (refresher)") and len(said) == 3
    assert hazards(None) == [] and hazards({"modules": [], "files": [], "threads": {}, "native_threads": 0}) == []


@pytest.mark.timeout(240)
def test_doctor_names_the_cause_of_a_sample_hang_and_what_remains_without_fork():
    """Before: the finding named the line it was stuck at and no cause ('stuck at live_datasets.py:N
    in hook: with _LOCK:'), the same for a deadlock as for an endless loop."""
    pytest.importorskip("torch")
    proc = _doctor("--sample", "tests.live_datasets:deadlocked_loader", "--timeout", "2", "--format", "json")
    assert proc.returncode == 1 and proc.stderr == "", proc.stderr
    risk = json.loads(proc.stdout)["risks"][0]
    cause = risk["cause"]
    assert (risk["class"], cause["cause"]) == ("E", "lock") and cause["evidence"].endswith("in hook: with _LOCK:")
    assert cause["threads"] == [next(t for t in cause["threads"] if t.startswith("refresher at live_datasets.py:"))]
    assert "OpenCV (cv2) is loaded" in cause["hazards"][0] and cause["hazards"][1].endswith(".h5")
    text = _doctor("--sample", "tests.live_datasets:spinning", "--num-workers", "4", "--timeout", "2").stdout
    assert "\n  cause: none found: the stack shows no lock" in text and "\n    at live_datasets.py:" in text
    assert "\n  not the cause: no worker forked (num_workers=0)" in text and "held where they would fork" not in text
