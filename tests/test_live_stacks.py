"""Naming what a hung worker waits on, from faulthandler's text (no torch needed)."""
from __future__ import annotations

from dllogscan.live.repro import Rung
from dllogscan.live.stacks import likely_cause, stuck_at

BANNER = "dllogscan-repro: torch 2.13.0+cpu, num_workers=1, sharing strategy file_descriptor\n"
LOOP = ('  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/fetch.py", line 54 in fetch\n'
        '      data = [self.dataset[idx] for idx in possibly_batched_index]\n'
        '  File "/venv/lib/python3.11/site-packages/torch/utils/data/_utils/worker.py", line 374 in _worker_loop\n'
        '      data = fetcher.fetch(index)\n')
EVENT = ('Current thread 0x00007f (most recent call first):\n'
         '  File "/usr/lib/python3.11/threading.py", line 327 in wait\n'
         '      waiter.acquire()\n'
         '  File "/usr/lib/python3.11/threading.py", line 629 in wait\n'
         '      signaled = self._cond.wait(timeout)\n'
         '  File "/data/ds.py", line 33 in __getitem__\n'
         '      self.ready.wait()\n' + LOOP)
WITH_LOCK = ('Current thread 0x00007f (most recent call first):\n'
             '  File "/data/ds.py", line 39 in __getitem__\n'
             '      with _L:\n' + LOOP)
WITH_OPEN_OUTSIDE = ('Current thread 0x00007f (most recent call first):\n'
                     '  File "/data/ds.py", line 12 in decode\n'
                     '      time.sleep(1000)\n'
                     '  File "/data/ds.py", line 40 in __getitem__\n'
                     '      with self.files:\n' + LOOP)


def test_an_event_wait_is_not_called_a_lock_held_across_fork():
    """Before: 'a lock acquire (a lock held by another thread when the worker forked ...)' from
    threading.py's own 'waiter.acquire()'."""
    assert likely_cause(EVENT) == ("an Event or Condition wait", "E", "self.ready.wait()")


def test_a_worker_blocked_on_a_with_line_is_a_lock_acquire_whatever_the_lock_is_called():
    """Before: only names with 'lock' in them (``with _LOCK:``) were seen; ``with _L:`` named nothing."""
    assert likely_cause(WITH_LOCK) == ("a lock acquire", "E", "with _L:")
    assert likely_cause(WITH_OPEN_OUTSIDE) is None  # a with line in an outer frame is no lock wait


def test_a_hang_without_a_named_cause_says_where_the_worker_is_not_the_banner():
    """Before: the evidence was the output's last line, the rung's banner 'dllogscan-repro: torch ...'."""
    rung = Rung(workers=1, result="hang", seconds=14.0, output=BANNER, main_pid=10, waiting_for="batch",
                waited=8.2, stacks={10: "Current thread 0x1 (most recent call first):\n", 11: WITH_OPEN_OUTSIDE})
    assert rung.evidence() == "no batch in 8 s; stuck at ds.py:12 in decode: time.sleep(1000)"
    assert stuck_at(WITH_LOCK) == "ds.py:39 in __getitem__: with _L:"
    assert Rung(workers=1, result="hang", seconds=9, output=BANNER, waiting_for="batch", waited=5,
                batches=3).evidence() == "no batch in 5 s after batch 3"
    assert Rung(workers=1, result="hang", seconds=9, output=BANNER, waiting_for="factory",
                waited=6).evidence() == "the factory did not return in 6 s"
    assert Rung(workers=1, result="hang", seconds=130, output=BANNER).evidence() == "not started in 130 s (importing torch)"
