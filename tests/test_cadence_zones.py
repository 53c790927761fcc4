"""Timing across time zones (cadence.py): stamps with a zone are read in UTC; a step from one to a
stamp in local time is read on one clock (the local time in the zone the other stamp names) unless
an offset a clock keeps makes it no gap at all, or the one clock puts the later line first."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import dllogscan
from dllogscan.correlate.cadence import measure, steady_end, timing
from dllogscan.correlate.stamps import zone_offset

T0 = datetime(2026, 12, 1, 12, 0, 0)
LAST = T0 + timedelta(seconds=2 * 299)  # the last of 300 steps, 2 s apart


def steps(stamp: str = "%Y-%m-%dT%H:%M:%SZ", start: datetime = T0, count: int = 300) -> list[str]:
    """``count`` progress lines 2 s apart from ``start``, each stamped with ``stamp`` (strftime)."""
    return [f"{start + timedelta(seconds=2 * i):{stamp}} INFO trainer: step {i}/20000 loss=0.5" for i in range(count)]


def slurm_kill(local: datetime) -> str:
    """Slurm's time-limit line, its time in the node's local time, with no zone."""
    return f"slurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT {local:%Y-%m-%dT%H:%M:%S} DUE TO TIME LIMIT ***"


def write(tmp_path, lines: list[str], name: str = "slurm-4242.out"):
    log = tmp_path / name
    log.write_text("\n".join(lines) + "\n")
    return log


def verdict(log) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    return [(d.cls, d.subclass, d.signatures, d.facts.get("silence"))
            for d in dllogscan.scan(log, classifier="off").diagnoses]


def two_zones_noted(log) -> bool:
    return any(n.startswith("the times are in two zones: line 300 names its zone, line 301 is in local time")
               for n in dllogscan.scan(log, classifier="off").notes)


@pytest.mark.parametrize("offset_h", [4, 14, 5.75])
def test_a_steady_job_in_utc_killed_in_local_time_is_no_measured_hang(tmp_path, offset_h):
    """Steps stamped ``Z`` up to Slurm's kill 2 s later, on a node at UTC+4 (UTC+14, Nepal's
    +5:45). Before: the 4 h offset was read as a 4 h silence (E/hang 0.88 with 'silence 4 h'). Now
    the step, an offset to the second, is not measured: the kill line alone weighs, as after untimed
    progress (E/hang from E.hang.slurm-time-limit; nothing shows the job was at work either), and a
    note says why."""
    log = write(tmp_path, steps() + [slurm_kill(LAST + timedelta(seconds=2, hours=offset_h))])
    end = log.read_bytes()
    assert measure(end, 1) is None and steady_end(end, 1) is None
    silence, zones = timing(end, 1)
    assert silence is None and (zones.last_line, zones.zoned_line, zones.local_line) == (300, 300, 301)
    assert verdict(log) == [("E", "hang", ("E.hang.slurm-time-limit",), None)]
    assert two_zones_noted(log)


@pytest.mark.parametrize("offset_h", [0, -5])
def test_a_steady_job_killed_in_local_time_is_steady_where_one_reading_is_possible(tmp_path, offset_h):
    """On a node in UTC (local time is UTC: containers, many clusters) the step is 2 s on one clock;
    at UTC-5 the one clock puts the kill 5 h before the last step, and only UTC-5 makes it a step
    forward: 2 s. Either way the job ran out of time (before, UTC-5 gave E/hang from the kill line)."""
    log = write(tmp_path, steps() + [slurm_kill(LAST + timedelta(seconds=2, hours=offset_h))])
    end = log.read_bytes()
    assert measure(end, 1) is None and steady_end(end, 1).seconds == 2.0
    assert verdict(log) == [] and not two_zones_noted(log)
    assert any("ran out of time" in n for n in dllogscan.scan(log, classifier="off").notes)


def test_a_steady_job_in_utc_with_no_kill_signature_gives_no_hang(tmp_path):
    """The same with torchrun's SIGTERM through a logger in local time (UTC+4): no signature
    counts, so the false 4 h silence was the whole verdict (E/hang 0.6); now nothing, with the note."""
    stop = LAST + timedelta(seconds=3, hours=4)
    log = write(tmp_path, steps() + [f"{stop:%Y-%m-%d %H:%M:%S},123 torch.distributed.elastic.agent: Received "
                                     "Signals.SIGTERM death signal, shutting down workers"], "run.log")
    assert verdict(log) == []
    assert two_zones_noted(log)


def test_a_real_hang_in_utc_before_slurms_local_kill(tmp_path):
    """A 3 h 50 min hang on a node in UTC: 3 h 50 min on one clock, which no offset makes a step
    of no gap (3 h 30 min leaves 20 min): the silence counts, read as UTC and said so. On a node at
    UTC+2 the same hang reads 5 h 50 min (no offset explains it away either): still a hang, its
    figure on the one clock; a 3 h hang at UTC+1 (4 h 0 min 20 s on one clock: 4 h leaves 20 s)
    cannot be told from a job at work on a node at UTC+4, and is set aside with the note."""
    for offset_h, figure in ((0, "3 h 50 min"), (2, "5 h 50 min")):
        log = write(tmp_path, steps() + [slurm_kill(LAST + timedelta(hours=3 + offset_h, minutes=50))])
        s = measure(log.read_bytes(), 1)
        assert s is not None and s.zone_assumed == "UTC" and "read as UTC" in s.describe()
        assert verdict(log) == [("E", "hang", ("E.hang.slurm-time-limit", "E.hang.progress-silence"), figure)]
        assert not two_zones_noted(log)
    log = write(tmp_path, steps() + [slurm_kill(LAST + timedelta(hours=4, seconds=20))])
    assert measure(log.read_bytes(), 1) is None and steady_end(log.read_bytes(), 1) is None
    assert verdict(log) == [("E", "hang", ("E.hang.slurm-time-limit",), None)] and two_zones_noted(log)


def test_a_silence_between_stamps_with_a_zone_is_measured_beside_a_local_kill(tmp_path):
    """Steps in UTC, a watchdog line in UTC 2 h later, then Slurm's kill in local time (UTC+3)
    an hour after that. Before: the longest step was the watchdog-to-kill one, 1 h plus the
    offset (4 h). Now the 2 h between the two UTC stamps is the silence."""
    watchdog = f"{LAST + timedelta(hours=2):%Y-%m-%dT%H:%M:%SZ} WARNING watchdog: no batch received in 7200 s"
    log = write(tmp_path, steps() + [watchdog, slurm_kill(LAST + timedelta(hours=3 + 3))])
    s = measure(log.read_bytes(), 1)
    assert (s.seconds, s.last_line, s.end_line) == (7200.0, 300, 301) and s.zone_assumed is None
    assert verdict(log) == [("E", "hang", ("E.hang.slurm-time-limit", "E.hang.progress-silence"), "2 h")]
    assert not two_zones_noted(log)


def test_stamps_in_utc_throughout_are_measured_as_before(tmp_path):
    """Kubernetes CRI lines (``...123456789Z stdout F``) from start to end: a 2 h hang before
    SIGTERM is 2 h, a run that ends at its cadence is no hang, and no note speaks of zones."""
    cri = [f"{T0 + timedelta(seconds=2 * i):%Y-%m-%dT%H:%M:%S}.123456789Z stdout F step {i}/20000 loss=0.5"
           for i in range(300)]
    hang = write(tmp_path, cri + [f"{LAST + timedelta(hours=2):%Y-%m-%dT%H:%M:%S}.000000001Z stderr F received "
                                  "SIGTERM, shutting down"], "hang.log")
    s = measure(hang.read_bytes(), 1)
    assert (s.seconds, s.cadence, s.last_line, s.end_line) == (7200.0, 2.0, 300, 301)
    assert verdict(hang) == [("E", "hang", ("E.hang.progress-silence",), "2 h")]
    done = write(tmp_path, cri + [f"{LAST + timedelta(seconds=2):%Y-%m-%dT%H:%M:%S}.1Z stdout F training finished"],
                 "ok.log")
    assert measure(done.read_bytes(), 1) is None and verdict(done) == []
    assert not any("zone" in n for log in (hang, done) for n in dllogscan.scan(log, classifier="off").notes)


def test_stamps_with_other_offsets_are_read_in_utc():
    """Steps at +05:30 and a kill line in ``Z`` 2 h later: 2 h (before: 2 h less 5 h 30 min, no
    silence). The same steps end steady at a ``Z`` line 2 s later, and ``-0800`` reads alike."""
    india = steps("%Y-%m-%dT%H:%M:%S+05:30", start=T0 + timedelta(hours=5, minutes=30))
    kill = f"{LAST + timedelta(hours=2):%Y-%m-%dT%H:%M:%S}.5Z ERROR received SIGTERM"
    s = measure(("\n".join(india + [kill]) + "\n").encode(), 1)
    assert s is not None and (s.seconds, s.zone_assumed) == (7200.0, None)
    calm = f"{LAST + timedelta(seconds=2):%Y-%m-%dT%H:%M:%S}Z slurmstepd: CANCELLED AT ... DUE TO TIME LIMIT"
    assert steady_end(("\n".join(india + [calm]) + "\n").encode(), 1).seconds == 2.0
    pacific = steps("%Y-%m-%d %H:%M:%S -0800", start=T0 - timedelta(hours=8))
    assert measure(("\n".join(pacific + [kill]) + "\n").encode(), 1).seconds == 7200.0


@pytest.mark.parametrize("after, offset", [
    (b"Z stdout F", 0.0), (b".123456789Z stdout", 0.0), (b"+05:30 INFO", 19800.0), (b"+0530]", 19800.0),
    (b"-08:00 x", -28800.0), (b",123 -0500 x", -18000.0), (b" UTC 2026", 0.0), (b" GMT+01:00", 3600.0),
    (b",123 INFO trainer", None), (b" Zeroing grads", None), (b".123456 140233 train.py:88]", None),
    (b" - INFO - step", None), (b"+1500 x", None), (b"", None),
])
def test_what_reads_as_a_zone(after, offset):
    assert zone_offset(b"2026-12-01T12:00:00" + after, 19) == offset


@pytest.mark.parametrize("line, local, offset", [
    (b"2026-12-01T17:30:00.25+05:30 INFO step", (2026, 12, 1, 17, 30, 0), 19800.0),
    (b"I1201 12:00:00.000 1 x.py:1] 2026-12-01 13:00:00 later", (2026, 12, 1, 12, 0, 0), None),
    (b"12/01/2026, 04:00:00 -0800 step", (2026, 12, 1, 4, 0, 0), -28800.0),
    (b"Dec  1 12:00:00 UTC 2026 date", (2026, 12, 1, 12, 0, 0), 0.0),
    (b"[Tue Dec  1 12:00:00 2026] dmesg -T", (2026, 12, 1, 12, 0, 0), None),
])
def test_one_line_is_read_in_utc_where_its_stamp_names_a_zone(line, local, offset):
    """``line_time`` (the batch's reader): the line's first stamp, in UTC less its offset, with
    that offset; the year of a stamp without one the context's (here 2026)."""
    from dllogscan.correlate.stamps import Context, line_time, seconds_of

    assert line_time(line, Context(b"", 2026)) == (seconds_of(*local) - (offset or 0.0), offset)


def test_explain_says_the_silence_could_not_be_measured(tmp_path):
    from dllogscan.cli.explain import explain

    log = write(tmp_path, steps() + [slurm_kill(LAST + timedelta(seconds=2, hours=4))])
    assert "timing: the times are in two zones: line 300 names its zone" in explain(str(log), [])


def test_one_clock_is_the_zone_the_other_stamp_names():
    """Steps at +05:30 and Slurm's kill in local time: one machine wrote both, so the local time is
    read at +05:30. 2 s later is a steady end; 2 h 10 min later a silence, said to be read so."""
    india = steps("%Y-%m-%dT%H:%M:%S+05:30", start=T0 + timedelta(hours=5, minutes=30))
    local_last = LAST + timedelta(hours=5, minutes=30)
    calm = ("\n".join(india + [slurm_kill(local_last + timedelta(seconds=2))]) + "\n").encode()
    assert steady_end(calm, 1).seconds == 2.0 and timing(calm, 1) == (None, None)
    late = ("\n".join(india + [slurm_kill(local_last + timedelta(hours=2, minutes=10))]) + "\n").encode()
    s = measure(late, 1)
    assert s.seconds == 7800.0 and s.zone_assumed == "UTC+05:30" and "read as UTC+05:30" in s.describe()
