"""A log line's time in batch rows (batch/clock.py): read by correlate/stamps.py, as the hang timing
reads it; zone-less stamps as written, a stamp with a zone its own clock plus its offset."""
from __future__ import annotations

import os
from datetime import datetime, timezone

import pytest

import dllogscan
from dllogscan.batch import layouts
from dllogscan.batch.clock import Clock, earliest, iso, on_one_clock, parsed
from dllogscan.correlate import stamps
from dllogscan.integrations.slurm import _in_window

MTIME = datetime(2026, 12, 1, tzinfo=timezone.utc).timestamp()  # the year of year-less stamps
EXITED = "RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly"


@pytest.mark.parametrize("lines, first, last, failure", [
    # glog (absl, c10, NCCL): year-less, the file's year
    (["I1130 06:00:00.123456 140233 train.py:88] step 1", f"E1130 06:05:00.000000 140233 train.py:90] {EXITED}",
      "I1130 06:05:01.000000 140233 train.py:91] bye"],
     "2026-11-30T06:00:00", "2026-11-30T06:05:01", "2026-11-30T06:05:00"),
    # the Hugging Face logging format, month first
    (["11/30/2026 06:00:00 - INFO - __main__ - step 1", f"11/30/2026 06:05:00 - ERROR - __main__ - {EXITED}"],
     "2026-11-30T06:00:00", "2026-11-30T06:05:00", "2026-11-30T06:05:00"),
    # day first, decided once for the log: its first stamp's 13 settles 01/12 too
    (["13/11/2026 23:00:00 step 1", f"01/12/2026 06:05:00 {EXITED}"],
     "2026-11-13T23:00:00", "2026-12-01T06:05:00", "2026-12-01T06:05:00"),
    # a zone: the log's own clock plus its offset; Z and UTC are +00:00, -0800 is -08:00
    ([f"2026-11-30T11:30:00+05:30 INFO step 1", f"2026-11-30T11:35:00.5+05:30 ERROR {EXITED}"],
     "2026-11-30T11:30:00+05:30", "2026-11-30T11:35:00+05:30", "2026-11-30T11:35:00+05:30"),
    ([f"2026-11-30 06:00:00 UTC step 1", f"2026-11-30 06:05:00,123 -0800 {EXITED}"],
     "2026-11-30T06:00:00+00:00", "2026-11-30T06:05:00-08:00", "2026-11-30T06:05:00-08:00"),
    # dmesg -T names its year, which wins over the file's; seconds since boot are no time
    (["[Mon Nov 30 06:00:00 2025] python3 invoked oom-killer", f"[  812.004417] {EXITED}", "[Mon Nov 30 06:00:09 2025] x"],
     "2025-11-30T06:00:00", "2025-11-30T06:00:09", "2025-11-30T06:00:00"),
])
def test_a_batch_row_holds_the_times_stamps_py_reads(tmp_path, lines, first, last, failure):
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    os.utime(log, (MTIME, MTIME))
    row = dllogscan.scan_many([str(log)], classifier="off", jobs=1).iloc[0]
    assert (row["first_time"], row["last_time"], row["first_failure_time"]) == (first, last, failure)


LINES = [
    b"2026-11-30T06:00:00 INFO step 1",
    b"2026-11-30 11:30:00,123 +05:30 INFO step 2",
    b"2026-11-30T06:00:01.5Z stderr F step 3",
    b"11/30/2026 06:00:02 - INFO - step 4",
    b"I1130 06:00:03.000 140233 train.py:88] step 5",
    b"Nov 30 06:00:04 node07 kernel: step 6",
    b"[Mon Nov 30 06:00:05 2026] step 7",
    b"[11/30 06:00:06 d2.utils.events]: step 8",
    b"[   12.500000] no wall-clock time",
]


def _as_stamped(text: str | None) -> tuple[float, float | None] | None:
    """A batch time as cadence's reading: seconds (in UTC where it names a zone) and its offset."""
    when = parsed(text)
    if when is None:
        return None
    if when.tzinfo is None:
        return (when.replace(tzinfo=timezone.utc).timestamp(), None)
    return (when.timestamp(), when.utcoffset().total_seconds())


def test_batch_and_cadence_read_the_same_time_from_the_same_line():
    """Every line of one log, read by cadence (``stamped_backwards``) and by the batch (a hit's
    ``Clock.time``, a row's first and last time): the same seconds and the same zone."""
    log = b"\n".join(LINES) + b"\n"
    cadence = {log.count(b"\n", 0, start): (t, offset) for start, _, t, offset in stamps.stamped_backwards(log)}
    clock = Clock(log, 1999)
    batch = {i: _as_stamped(clock.time(line)) for i, line in enumerate(LINES)}
    assert batch == {i: cadence.get(i) for i in range(len(LINES))}
    assert len(cadence) == len(LINES) - 1  # seconds since boot: neither reads a time
    meta = layouts.from_content(log, log, year=1999)
    assert (_as_stamped(meta["first_time"]), _as_stamped(meta["last_time"])) == (cadence[0], cadence[7])


def test_a_year_less_stamp_takes_the_year_the_head_names_before_the_files():
    head = b"Dec 31 23:59:00 node07 app: a\n2025-12-31T23:59:30 up\nJan  1 00:00:10 node07 app: b\n"
    assert layouts.from_content(head, head, year=2027) == {"first_time": "2025-12-31T23:59:00",
                                                           "last_time": "2026-01-01T00:00:10"}
    assert layouts.from_content(head[:30], head[:30], year=2027) == {"first_time": "2027-12-31T23:59:00",
                                                                     "last_time": "2027-12-31T23:59:00"}


def test_the_scanner_and_the_row_share_the_logs_day_order(tmp_path):
    """A hit's ``05/12`` is read day first where the head's ``13/11`` says so (the same clock)."""
    log = tmp_path / "train.log"
    log.write_text("13/11/2026 23:00:00 step 1\n" + "step\n" * 3000 + f"05/12/2026 06:05:00 {EXITED}\n")
    row = dllogscan.scan_many([str(log)], classifier="off", jobs=1).iloc[0]
    assert (row["first_time"], row["first_failure_time"], row["last_time"]) == (
        "2026-11-13T23:00:00", "2026-12-05T06:05:00", "2026-12-05T06:05:00")


DEC_1 = stamps.seconds_of(2026, 12, 1, 0, 0, 0)


@pytest.mark.parametrize("reading, text", [
    ((DEC_1, None), "2026-12-01T00:00:00"),
    ((DEC_1, 0.0), "2026-12-01T00:00:00+00:00"),
    ((DEC_1, 19800.0), "2026-12-01T05:30:00+05:30"),
    ((DEC_1, -28800.0), "2026-11-30T16:00:00-08:00"),
    ((stamps.seconds_of(0, 11, 30, 6, 0, 0), None), None),  # a year 0 from ``[... 0000]``: no datetime
])
def test_a_reading_as_a_row_holds_it(reading, text):
    assert iso(reading) == text
    if text:
        assert _as_stamped(text) == reading


def test_times_in_two_zones_or_none_compare_on_one_clock():
    india, utc, local = (parsed(t) for t in ("2026-11-30T11:30:00+05:30", "2026-11-30T06:10:00+00:00", "2026-11-30T06:05:00"))
    assert on_one_clock(india, utc) == (india, utc) and india < utc  # both zoned: instants
    assert on_one_clock(utc, local, None) == (utc.replace(tzinfo=None), local, None)  # one clock
    assert earliest(["2026-11-30T06:10:00+00:00", "2026-11-30T11:30:00+05:30"]) == "2026-11-30T11:30:00+05:30"
    assert earliest(["2026-11-30T06:10:00+00:00", "2026-11-30T06:05:00"]) == "2026-11-30T06:05:00"
    assert earliest(["not a time", "2026-11-30T06:10:00"]) == "2026-11-30T06:10:00"


def test_a_dmesg_window_reads_a_line_with_a_zone_on_its_own_clock():
    text = ("[Mon Nov 30 05:00:00 2026] before\n[Mon Nov 30 06:00:00 2026] in\n  continued\n"
            "2026-11-30T06:30:00+02:00 zoned, in on its own clock\n[Mon Nov 30 08:00:00 2026] after\n")
    got = _in_window(text, datetime(2026, 11, 30, 5, 59), datetime(2026, 11, 30, 7, 0))
    assert got == "[Mon Nov 30 06:00:00 2026] in\n  continued\n2026-11-30T06:30:00+02:00 zoned, in on its own clock\n"


def test_the_summary_counts_each_failure_on_the_day_its_log_wrote():
    """A column of times with and without offsets is read day by day, as written (pandas reads
    none of it as datetimes: one layout per column)."""
    import pandas as pd

    from dllogscan.batch.rows import COLUMNS
    from dllogscan.batch.summary import summaries

    rows = [dict.fromkeys(COLUMNS) | {"status": "ok", "class": "B", "first_failure_time": t}
            for t in ("2026-11-30T23:30:00+05:30", "2026-11-30T06:00:00", "2026-12-01T00:10:00-08:00", None)]
    day = summaries(pd.DataFrame(rows, columns=COLUMNS))["class x day"]
    assert day["B"].to_dict() == {"(unknown)": 1, "2026-11-30": 2, "2026-12-01": 1}

