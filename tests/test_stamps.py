"""One line's time (correlate/stamps.py ``line_time``, the batch's reader) against the search the
hang timing makes over a whole end, and the one-search gate the batch puts before it."""
from __future__ import annotations

import random

from dllogscan.correlate import stamps

PREFIXES = [b"", b"", b"x ", b"[", b"1", b"ab:", b"I", b"E", b"[I", b"12/", b"2026-11-30T06:00:00Z stderr F "]
DATES = [b"2026-11-30", b"2026/11/30", b"2126-11-30", b"11/30/2026", b"11/30/26", b"12/13", b"13/12", b"00/12",
         b"Nov 30", b"Nov  3", b"Feb 31", b"Mon Nov 30", b"1130", b"0231", b"x", b""]
CLOCKS = [b"06:00:00", b"24:00:00", b"06:60:00", b"6:00:00", b"06:00", b"06:00:00:01", b"06:00:001"]
AFTER = [b"", b" step", b".5Z x", b",123 +05:30", b"-0800", b" UTC", b" 2026]", b"1", b":00", b" 11/30/2026 07:00:00"]


def _lines(seed: int, count: int):
    """Lines built of a stamp's pieces, right and wrong (random, one or two stamps each)."""
    rng = random.Random(seed)
    for _ in range(count):
        parts = [rng.choice(PREFIXES), rng.choice(DATES), rng.choice([b" ", b"T", b", ", b"  ", b""]), rng.choice(CLOCKS),
                 rng.choice(AFTER)]
        yield b"".join(parts)


def test_the_gate_passes_every_line_that_holds_a_stamp():
    """``stamps.may_hold`` (the batch's one search per block) never hides a stamp ``line_time``
    reads."""
    read = [line for line in _lines(7, 20000) if stamps.line_time(line) is not None]
    assert len(read) > 2000
    assert all(stamps.may_hold(line) for line in read), [line for line in read if not stamps.may_hold(line)][:3]


def test_a_line_is_read_as_its_first_stamp_stamps_in_finds():
    """``line_time``'s match at the line's start is the stamp the search over the line finds first."""
    context = stamps.Context(b"13/11/2026 10:00:00 x\n2026-11-30 10:00:00 y\n", 2026)
    read = 0
    for line in _lines(11, 20000):
        searched = next(filter(None, (stamps._reading(m, context) for m in stamps.stamps_in(line))), None)
        assert stamps.line_time(line, context) == searched, line
        read += searched is not None
    assert read > 2000
