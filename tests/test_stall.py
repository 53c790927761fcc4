"""correlate/stall.py: when progress stops arriving, on a clock the test drives (seconds)."""
from __future__ import annotations

from dllogscan.correlate.candidates import with_silence
from dllogscan.correlate.stall import Arrivals

MIN = 60.0


def _quiet(arrivals: Arrivals, start: float, end: float) -> None:
    """Polls once a second from ``start`` to ``end`` that bring nothing, none of them a stall."""
    t = start
    while t < end:
        arrivals.poll(t, None)
        assert arrivals.stalled(t) is None, f"stall at {t / MIN:.1f} min"
        t += 1.0


def test_block_buffered_bursts_every_13_min_are_no_stall():
    """stdout into a file: 64 progress lines every 13 min (the buffer fills slower than the 10 min
    floor), one burst in three split over two polls. Counted line by line, the steps would be
    zeros and leave the floor, which every gap passes; counted by burst, the cadence is 13 min."""
    arrivals = Arrivals()
    arrivals.backlog(-3 * MIN, 100, "step 100")  # the file's last write, 3 min before the first burst
    t, line = 0.0, 100
    for burst in range(12):
        split = burst % 3 == 0
        line += 64
        arrivals.poll(t, (line - 32 * split, "step", 64 - 32 * split))
        if split:
            arrivals.poll(t + 1, (line, "step", 32))
        _quiet(arrivals, t + 1 + split, t + 13 * MIN)
        last, t = t + split, t + 13 * MIN
    assert arrivals.threshold() == 30 * 13 * MIN
    _quiet(arrivals, t, last + 30 * 13 * MIN)
    stall = arrivals.stalled(last + 30 * 13 * MIN)
    assert stall is not None and stall.last_line == line and stall.cadence == 13 * MIN
    assert "bursts of up to 64 lines" in stall.describe() and "PYTHONUNBUFFERED=1" in stall.describe()
    assert arrivals.stalled(last + 31 * 13 * MIN) is None  # reported once


def test_steady_progress_stalls_at_the_10_min_floor_and_again_after_it_resumes():
    arrivals = Arrivals()
    for t in range(100):  # a line a second: every poll brings one, one long burst
        arrivals.poll(float(t), (t + 1, f"step {t + 1}", 1))
    _quiet(arrivals, 100.0, 99 + 10 * MIN)
    stall = arrivals.stalled(99 + 10 * MIN)
    assert stall is not None and (stall.last_line, stall.last_text) == (100, "step 100")
    assert stall.cadence is None and "progress had come at every poll until then" in stall.describe()
    arrivals.poll(2000.0, (101, "step 101", 1))
    assert arrivals.stalled(2000 + 10 * MIN) is not None


def test_a_fixed_threshold_and_the_last_line_read_as_the_end():
    arrivals = Arrivals(fixed=90.0)
    arrivals.poll(0.0, (12, "epoch 1 step 12 loss=0.3", 1))
    arrivals.poll(1.0, None)
    arrivals.saw(14, "saving checkpoint")
    assert arrivals.stalled(89.0) is None
    stall = arrivals.stalled(90.0)
    assert (stall.last_line, stall.end_line, stall.end_text) == (12, 14, "saving checkpoint")
    assert stall.facts() == {"silence": "1 min 30 s", "last_progress_line": "12", "stall_threshold": "1 min 30 s"}


def test_a_stall_becomes_an_e_hang_with_its_lines_cited_once():
    arrivals = Arrivals(fixed=5.0)
    arrivals.poll(0.0, (7, "step 7", 1))
    (alone,) = with_silence([], arrivals.stalled(5.0))
    assert (alone.cls, alone.subclass) == ("E", "hang")
    assert [(e.line, e.text) for e in alone.evidence] == [(7, "step 7")]  # no end line: cited once
    assert "no progress line for 5.0 s after line 7" in alone.notes[0]
