"""correlate/stall.py: when progress stops arriving, on a clock the test drives (seconds)."""
from __future__ import annotations

from dllogscan.correlate.candidates import with_silence
from dllogscan.correlate.stall import FINISH_GRACE_S, Arrivals

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


def test_after_a_finish_line_the_silence_is_the_end_until_a_new_run_makes_progress():
    """The run says it finished (line 101); its bar's last draw comes after it (line 102, within
    the grace): the silence that reaches the threshold ends it, no stall. A second fit's progress
    past the grace makes the next silence a stall again."""
    arrivals = Arrivals(fixed=90.0)
    for t in range(100):
        arrivals.poll(float(t), (t + 1, f"step {t + 1}", 1))
    arrivals.finished(100.0, 101)  # `Trainer.fit` stopped: `max_epochs=3` reached.
    arrivals.poll(101.0, (102, "Epoch 2: 100%|##########| 782/782", 1))
    assert arrivals.ended(101 + 89.0) is None and arrivals.stalled(101 + 89.0) is None
    assert arrivals.ended(101 + 90.0).line == 101 and arrivals.stalled(101 + 90.0) is None

    arrivals.poll(101 + FINISH_GRACE_S + 1, (150, "step 1", 1))
    assert arrivals.ended(101 + FINISH_GRACE_S + 1 + 90) is None
    assert arrivals.stalled(101 + FINISH_GRACE_S + 1 + 90).last_line == 150


def test_a_finish_line_read_at_start_ends_a_silence_its_bar_after_it_too_and_a_new_file_forgets_it():
    arrivals = Arrivals(fixed=90.0)
    arrivals.finished(-5.0, 40)  # Training completed. Do not forget to share your model on huggingface.co/models =)
    arrivals.backlog(-5.0, 43, "100%|##########| 170/170 [17:51<00:00,  6.30s/it]")
    assert arrivals.ended(85.0) is not None and arrivals.stalled(85.0) is None
    arrivals.renumbered()  # the log was replaced: a new run's file
    assert arrivals.ended(85.0) is None and arrivals.stalled(85.0) is not None
