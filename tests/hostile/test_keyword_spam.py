"""Near-miss spam: lines that repeat a signature's keyword thousands of times without its message.
Every piece of such a line is a candidate, and none matches alone; a piece must not then be joined
with each neighbour as a wrapped message (cleaned and searched again), which made 6.6 MB of
'killed by signal x' take 48 s and 3.4 MB of traceback frames 17 s; and a group's screen keeps the
start anchor of a pattern that has one (``screen.loosen``), which made 5 MB of 'OS | ' take 30 s."""
from __future__ import annotations

import time

import pytest

import dllogscan

SPAM = {
    "keyword": b"worker was killed by signal x " * 60000,
    "frames": b'  File "/home/u/p/train.py", line 1, in <module> ' * 25000,
    "spawn": b"in _fixup_main_from_path " * 60000,
    # the environment report's labels: the OS facts' screen had been unanchored, tried at every
    # offset (5 MB of it took 30 s)
    "os-label": b"OS | " * 300000,
}


@pytest.mark.parametrize("kind", sorted(SPAM))
def test_a_line_of_repeated_keywords_scans_in_bounded_time(tmp_path, kind):
    path = tmp_path / f"{kind}.log"
    path.write_bytes(SPAM[kind] + b"\n" + SPAM[kind] + b"\n")
    start = time.perf_counter()
    result = dllogscan.scan(path, classifier="off")
    elapsed = time.perf_counter() - start
    assert result.error is None and result.diagnoses == ()
    assert elapsed < 5, f"{kind}: {elapsed:.1f} s for {path.stat().st_size >> 20} MB"
