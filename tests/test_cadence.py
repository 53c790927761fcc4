"""Timing from the log itself (cadence.py): the cadence of timestamped progress lines, the
silence after the last one, and how the verdict weighs it."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

import dllogscan
from dllogscan.correlate.cadence import duration, measure
from dllogscan.scan.limits import END_BYTES

T0 = datetime(2026, 11, 30, 2, 0, 0)


def progress_log(steps: int, every: float = 2.0, then: timedelta | None = None, last: str | None = None,
                 pad: int = 0) -> str:
    """``pad`` untimed lines, then ``steps`` logging-style progress lines ``every`` seconds apart,
    then ``last`` stamped ``then`` after the last step (``{t}`` in ``last`` is that time)."""
    out = [f"loading shard {i} of the index" for i in range(pad)]
    t = T0
    for i in range(steps):
        t = T0 + timedelta(seconds=every * i)
        out.append(f"{t:%Y-%m-%d %H:%M:%S},123 INFO trainer: step {i}/20000 loss={1 / (i + 1):.4f}")
    if last is not None:
        out.append(last.format(t=t + (then or timedelta())))
    return "\n".join(out) + "\n"


SLURM_KILL = "slurmstepd: error: *** JOB 4242 ON node07 CANCELLED AT {t:%Y-%m-%dT%H:%M:%S} DUE TO TIME LIMIT ***"


def test_measure_finds_the_cadence_and_the_silence():
    text = progress_log(300, 2.0, timedelta(hours=3, minutes=50), SLURM_KILL).encode()
    s = measure(text, 1)
    assert s is not None
    assert (s.last_line, s.end_line, s.seconds, s.cadence, s.progress_lines) == (300, 301, 13800.0, 2.0, 50)
    assert "step 299/20000" in s.last_text and "TIME LIMIT" in s.end_text
    assert s.facts()["silence"] == "3 h 50 min" and "every 2.0 s" in s.describe()


def test_no_silence_without_enough_timestamped_progress_or_a_long_enough_gap():
    assert measure(progress_log(4, 2.0, timedelta(hours=4), SLURM_KILL).encode(), 1) is None
    assert measure(progress_log(300, 2.0, timedelta(minutes=5), SLURM_KILL).encode(), 1) is None
    # slow steps: a 20 min gap is only 10 cadences of 2 min
    assert measure(progress_log(300, 120.0, timedelta(minutes=20), SLURM_KILL).encode(), 1) is None
    assert measure(b"step 1 loss=0.3\nstep 2 loss=0.2\n" * 100, 1) is None
    assert measure(b"", 1) is None


def test_the_silence_is_the_longest_quiet_stretch_after_the_last_progress_line():
    text = progress_log(300, 2.0, timedelta(seconds=3), "{t:%Y-%m-%d %H:%M:%S} INFO saving checkpoint")
    t_end = T0 + timedelta(seconds=2 * 299 + 3 + 7200)
    text += f"{t_end:%Y-%m-%d %H:%M:%S} WARNING watchdog: no batch received\n"
    s = measure(text.encode(), 1)
    assert (s.last_line, s.quiet_from, s.end_line, s.seconds) == (300, 301, 302, 7200.0)


def test_a_stamp_inside_a_longer_number_is_not_a_time():
    lines = "".join(f"id 1202611-30 06:00:{i % 60:02d} step {i} loss=0.1\n" for i in range(100))
    assert measure((lines + "id 1202611-30 09:00:00 done\n").encode(), 1) is None


def test_civil_seconds_agree_with_the_calendar():
    from calendar import timegm

    from dllogscan.correlate.stamps import seconds_of as _seconds

    for stamp in [(2026, 11, 30, 6, 0, 0), (2024, 2, 29, 23, 59, 59), (2000, 3, 1, 0, 0, 1), (2031, 1, 1, 12, 30, 0)]:
        assert _seconds(*stamp) == timegm(stamp + (0, 0, 0))


def test_duration_reads_like_a_person_would_say_it():
    assert [duration(x) for x in (2, 65, 3600, 13800, 600)] == ["2.0 s", "1 min 5 s", "1 h", "3 h 50 min", "10 min"]


def test_a_slurm_time_limit_after_a_silence_is_e_with_the_gap_cited(tmp_path):
    log = tmp_path / "slurm-4242.out"
    log.write_text(progress_log(2000, 2.0, timedelta(hours=3, minutes=50), SLURM_KILL))
    d = dllogscan.scan(log).diagnoses
    assert [(x.cls, x.subclass) for x in d] == [("E", "hang")]
    assert d[0].confidence >= 0.8  # the time-limit line alone is 0.7: the measured silence decides
    assert [e.line for e in d[0].evidence][:2] == [2001, 2000]
    assert d[0].facts["silence"] == "3 h 50 min" and d[0].facts["cadence"] == "2.0 s"
    assert any("no output for 3 h 50 min" in n for n in d[0].notes)


def test_line_numbers_hold_when_only_the_end_of_a_large_log_is_kept(tmp_path):
    log = tmp_path / "big.log"
    log.write_text(progress_log(3000, 2.0, timedelta(hours=2), SLURM_KILL, pad=40_000))
    assert log.stat().st_size > 2 * END_BYTES
    d = dllogscan.scan(log).diagnoses[0]
    assert d.evidence[1].line == 43_000 and "step 2999/20000" in d.evidence[1].text
    assert d.evidence[0].line == 43_001


def test_a_healthy_timestamped_log_gives_nothing(tmp_path):
    log = tmp_path / "ok.log"
    log.write_text(progress_log(2000, 2.0, timedelta(seconds=2), "{t:%Y-%m-%d %H:%M:%S} INFO training finished"))
    assert dllogscan.scan(log, classifier="off").diagnoses == ()


def test_explain_shows_the_timing(tmp_path):
    from dllogscan.cli.explain import explain

    log = tmp_path / "slurm-4242.out"
    log.write_text(progress_log(300, 2.0, timedelta(hours=3, minutes=50), SLURM_KILL))
    assert "timing: progress every 2.0 s" in explain(str(log), [])
    ok = tmp_path / "ok.log"
    ok.write_text(progress_log(300, 2.0))
    assert "timing: no silence after timestamped progress lines" in explain(str(ok), [])


def test_weightless_support_of_another_class_does_not_hide_the_silence(tmp_path):
    log = tmp_path / "slurm-4243.out"
    log.write_text(progress_log(300, 2.0, timedelta(hours=2), "{t:%Y-%m-%d %H:%M:%S} RuntimeError: Pin memory thread "
                                "exited unexpectedly"))
    d = dllogscan.scan(log, classifier="off").diagnoses
    assert [(x.cls, x.subclass) for x in d] == [("E", "hang")]



def test_a_quiet_stretch_longer_than_the_first_windows_is_measured_whole():
    """The end is read back in growing windows and stops at the first progress line when the
    silence cannot count: a long stretch of stamped non-progress lines (past the 2 KB and 16 KB
    windows) after a gap is still measured from the last progress line."""
    def log(gap_s: int) -> bytes:
        text = progress_log(300, 2.0, timedelta(seconds=2), "{t:%Y-%m-%d %H:%M:%S} INFO saving checkpoint")
        t = T0 + timedelta(seconds=2 * 299 + 2 + gap_s)
        text += "".join(f"{t + timedelta(seconds=i):%Y-%m-%d %H:%M:%S} WARNING watchdog: waiting on rank "
                        f"{i} for the collective {'x' * 60}\n" for i in range(400))  # no two alike: no heartbeat
        assert len(text.split("saving checkpoint")[1]) > 32 << 10
        return text.encode()

    s = measure(log(5400), 1)
    assert s is not None
    assert (s.last_line, s.quiet_from, s.end_line, s.seconds, s.progress_lines) == (300, 301, 302, 5400.0, 50)
    assert measure(log(60), 1) is None


HEARTBEAT = "{t:%Y-%m-%d %H:%M:%S},456 INFO monitor: GPU util 0%, mem 10.2 GB"


def with_lines(text: str, start: datetime, every: timedelta, lines: list[str]) -> str:
    """``text`` then ``lines`` stamped ``every`` apart from ``start + every``."""
    return text + "".join(line.format(t=start + every * (k + 1)) + "\n" for k, line in enumerate(lines))


def test_a_heartbeat_does_not_break_the_silence(tmp_path):
    """A monitor's line every 5 min after the last step kept every stretch under 10 min: a hang of
    2 h before the time-limit kill read as no silence, and the log as nothing found."""
    last = T0 + timedelta(seconds=2 * 299)
    text = with_lines(progress_log(300, 2.0), last, timedelta(minutes=5), [HEARTBEAT] * 23)
    text = with_lines(text, last + timedelta(minutes=115), timedelta(minutes=3), [SLURM_KILL])
    s = measure(text.encode(), 1)
    assert (s.last_line, s.quiet_from, s.end_line, s.seconds) == (300, 300, 324, 118 * 60.0)
    assert (s.heartbeats, s.heartbeat_line) == (23, 301)
    assert "no output but a repeated line (line 301's, 23 times: a heartbeat) for 1 h 58 min" in s.describe()
    log = tmp_path / "slurm-4242.out"
    log.write_text(text)
    assert [(d.cls, d.subclass) for d in dllogscan.scan(log, classifier="off").diagnoses] == [("E", "hang")]


@pytest.mark.parametrize("lines", [
    # the same words twice only, or lines that differ (work that moves: a counter, a file name)
    [HEARTBEAT, HEARTBEAT],
    ["{t:%Y-%m-%d %H:%M:%S} INFO uploading shard " + str(k) + " of 23" for k in range(23)],
])
def test_lines_that_do_not_repeat_word_for_word_still_end_the_silence(lines):
    last = T0 + timedelta(seconds=2 * 299)
    text = with_lines(progress_log(300, 2.0), last, timedelta(minutes=5), lines)
    assert measure(with_lines(text, last + timedelta(minutes=5 * len(lines)), timedelta(minutes=3),
                              [SLURM_KILL]).encode(), 1) is None


def test_a_heartbeats_stamp_aside_is_its_text():
    """The stamp, its fraction of a second and its zone are not part of the repeated text; what
    follows is, numbers included."""
    from dllogscan.correlate.cadence import heartbeats
    from dllogscan.correlate.stamps import stamped_backwards

    end = (b"2026-11-30T02:00:00.123Z WARN wandb: retrying upload (attempt 3)\n"
           b"2026-11-30T02:05:00.5+05:30 WARN wandb: retrying upload (attempt 3)\n"
           b"I1130 02:10:00.000001 WARN wandb: retrying upload (attempt 3)\n"
           b"2026-11-30 02:15:00 WARN wandb: retrying upload (attempt 4)\n")
    lines = list(stamped_backwards(end))
    assert sorted(heartbeats(end, lines)) == sorted(line[0] for line in lines[1:])


def test_a_silence_verdict_fills_its_fixes_with_the_logs_configuration(tmp_path):
    """A verdict made by the timing alone (no E signature) still takes the source's facts:
    YOLOv5's 'Using N dataloader workers' and an argparse dump's batch_size fill the fix code."""
    log = tmp_path / "train.log"
    end = "{t:%Y-%m-%d %H:%M:%S} INFO received SIGTERM, shutting down"
    log.write_text("Using 4 dataloader workers\nNamespace(batch_size=16, lr=0.1)\n"
                   + progress_log(2000, 2.0, timedelta(hours=3), end))
    d = dllogscan.scan(log, classifier="off").diagnoses
    assert [(x.cls, x.signatures) for x in d] == [("E", ("E.hang.progress-silence",))]
    assert d[0].facts["num_workers"] == "4" and d[0].facts["batch_size"] == "16"
    codes = "\n".join(f.code or "" for f in d[0].fixes)
    assert "DataLoader(dataset, batch_size=16, num_workers=4," in codes and "<num_workers>" not in codes


LAYOUTS = {
    "hf-us": lambda t: f"{t:%m/%d/%Y %H:%M:%S} - INFO - __main__ - ",  # HF / accelerate examples' datefmt
    "dd-mm": lambda t: f"{t + timedelta(days=12):%d/%m/%Y %H:%M:%S} - INFO - ",  # day over 12 first
    "rich": lambda t: f"[{t:%m/%d/%y %H:%M:%S}] INFO     ",
    "detectron2": lambda t: f"[{t:%m/%d %H:%M:%S} d2.utils.events]:  ",
    "syslog": lambda t: f"{t:%b} {t.day:2d} {t:%H:%M:%S} gpu07 train.py[2231]: ",
    "journalctl": lambda t: f"{t:%b %d %H:%M:%S} gpu07 python3[2231]: ",
    "dmesg-T": lambda t: f"[{t:%a %b} {t.day:2d} {t:%H:%M:%S %Y}] ",
    "glog": lambda t: f"I{t:%m%d %H:%M:%S}.123456 140233 train.py:88] ",
    "c10-rank": lambda t: f"[rank0]:[W{t:%m%d %H:%M:%S}.426415540 train.py:88] ",
}


def test_other_timestamp_layouts_are_read(tmp_path):
    """HF's MM/DD/YYYY, rich, detectron2, syslog / journalctl / dmesg -T and glog stamps: the
    silence before a Slurm (ISO, with its year) or torchrun kill is measured, no-year stamps taking
    the kill's year."""
    for name, stamp in LAYOUTS.items():
        t0 = datetime(2026, 12, 1, 12, 0, 0)
        lines = [stamp(t0 + timedelta(seconds=2 * i)) + f"iter: {i}  total_loss: 0.5" for i in range(300)]
        end = t0 + timedelta(seconds=598) + timedelta(hours=3, minutes=50)
        if name == "dd-mm":
            end += timedelta(days=12)
        text = "\n".join(lines + [SLURM_KILL.format(t=end)]) + "\n"
        s = measure(text.encode(), 1)
        assert s is not None and (s.seconds, s.cadence, s.last_line, s.end_line) == (13800.0, 2.0, 300, 301), name
        # a kill line in the same layout (torchrun's SIGTERM through the agent's logger)
        text = "\n".join(lines + [stamp(t0 + timedelta(seconds=598, hours=2)) + "Received Signals.SIGTERM death signal"])
        log = tmp_path / f"{name}.log"
        log.write_text(text + "\n")
        d = dllogscan.scan(log, classifier="off").diagnoses
        assert [(x.cls, x.facts.get("silence")) for x in d] == [("E", "2 h")], name


def test_a_stamp_without_a_year_takes_the_year_nearest_the_kill():
    """Steps on 31 December in syslog form, Slurm's kill on 1 January: 4 h, not a year back."""
    t0 = datetime(2026, 12, 31, 20, 0, 0)
    lines = [LAYOUTS["syslog"](t0 + timedelta(seconds=2 * i)) + f"step {i} loss=0.5" for i in range(300)]
    text = "\n".join(lines + [SLURM_KILL.format(t=t0 + timedelta(seconds=598, hours=4))]) + "\n"
    s = measure(text.encode(), 1)
    assert s is not None and s.seconds == 4 * 3600.0


def test_a_time_limit_kill_of_a_job_still_at_its_cadence_is_no_hang(tmp_path):
    """Steps every 2 s (or every 2 min) up to the Slurm kill: the job ran out of time while
    training. The time-limit line alone made E/hang 0.7; the timing sets it aside with a note."""
    from dllogscan.correlate.cadence import steady_end

    for every, then in ((2.0, timedelta(seconds=2)), (120.0, timedelta(seconds=90))):
        log = tmp_path / f"slurm-{int(every)}.out"
        log.write_text(progress_log(300, every, then, SLURM_KILL))
        r = dllogscan.scan(log)
        assert r.diagnoses == (), every
        assert any("ran out of time" in n and "line 301" in n for n in r.notes)
        assert steady_end(log.read_bytes(), 1).end_line == 301
    # a pause before the kill that the silence rule does not count (5 min = 150 steps) is no
    # steady run: the time-limit line still counts, as does a long silence
    for then in (timedelta(minutes=5), timedelta(hours=3)):
        log = tmp_path / "paused.out"
        log.write_text(progress_log(300, 2.0, then, SLURM_KILL))
        assert steady_end(log.read_bytes(), 1) is None
        assert [(d.cls, d.subclass) for d in dllogscan.scan(log, classifier="off").diagnoses] == [("E", "hang")]
    # untimed progress lines: nothing to measure, the time-limit line counts as before
    log = tmp_path / "untimed.out"
    log.write_text("".join(f"step {i} loss=0.3\n" for i in range(300)) + SLURM_KILL.format(t=T0) + "\n")
    assert [d.signatures for d in dllogscan.scan(log, classifier="off").diagnoses] == [("E.hang.slurm-time-limit",)]


@pytest.mark.parametrize("after, expected", [
    # the program ended the quiet itself and finished: a long final evaluation, an upload
    (["INFO Training finished, running final evaluation on the test set", "+42m INFO Test results: accuracy=0.913",
      "INFO Saving model checkpoint to /ckpt/final", "INFO Done."], []),
    (["INFO Uploading checkpoint to s3://bucket/run/final.pt (48 GiB)", "+25m INFO Upload complete",
      "INFO exiting with code 0"], []),
    # stopped from outside, or failed, after the quiet: a hang
    (["+3h INFO received SIGTERM, shutting down"], ["E"]),
    (["+40m WARNING watchdog: no batch received in 2400 s"], ["E"]),
    (["INFO Training finished, running final evaluation", "+42m ERROR eval worker died"], ["E"]),
])
def test_a_silence_alone_is_a_hang_only_where_the_run_was_stopped_after_it(tmp_path, after, expected):
    """Before: any quiet stretch after regular progress was E / hang (0.6), a final evaluation
    of 42 minutes and a clean exit included."""
    t = T0 + timedelta(seconds=2 * 299)
    lines = []
    for line in after:
        if line.startswith("+"):
            gap, line = line[1:].split(" ", 1)
            t += timedelta(hours=int(gap[:-1])) if gap.endswith("h") else timedelta(minutes=int(gap[:-1]))
        t += timedelta(seconds=1)
        lines.append(f"{t:%Y-%m-%d %H:%M:%S} {line}")
    log = tmp_path / "run.log"
    log.write_text(progress_log(300, 2.0) + "\n".join(lines) + "\n")
    result = dllogscan.scan(log, classifier="off")
    assert [d.cls for d in result.diagnoses] == expected
    paused = [n for n in result.notes if n.endswith("a pause (a final evaluation, a checkpoint, an upload), not a hang")]
    assert len(paused) == (not expected) and all("up to line 300, then no output for" in n for n in paused)


def slashed(stamp: str, start: datetime, then: timedelta) -> bytes:
    """300 steps 2 s apart from ``start`` and a SIGTERM line ``then`` after the last, stamped ``stamp``."""
    times = [start + timedelta(seconds=2 * i) for i in range(300)] + [start + timedelta(seconds=598) + then]
    lines = [f"{t:{stamp}} - INFO - step {i} loss=0.5" for i, t in enumerate(times[:-1])]
    return ("\n".join(lines + [f"{times[-1]:{stamp}} - INFO - received SIGTERM"]) + "\n").encode()


def test_day_first_dates_across_midnight_with_the_day_twelve_or_less(tmp_path):
    """DD/MM/YYYY, the last step at 11/12/2026 23:59:58, SIGTERM at 12/12/2026 00:00:02. Before:
    each stamp alone read month first, 11/12 as 12 November and 12/12 as 12 December: a silence
    of 696 h (E/hang). Now the reading whose dates run forward and span the least wins: one
    night, 4 s, no hang; a real 2 h hang across midnight is 2 h (before: 698 h)."""
    calm = slashed("%d/%m/%Y %H:%M:%S", datetime(2026, 12, 11, 23, 50, 0), timedelta(seconds=4))
    assert measure(calm, 1) is None
    log = tmp_path / "ddmm.log"
    log.write_bytes(calm)
    assert dllogscan.scan(log, classifier="off").diagnoses == ()
    assert measure(slashed("%d/%m/%Y %H:%M:%S", datetime(2026, 12, 11, 23, 0, 0), timedelta(hours=2)), 1).seconds == 7200.0


def test_one_day_over_twelve_makes_the_whole_end_day_first():
    """DD/MM/YYYY from 30 November to 1 December: 30/11 can only be day first, so 01/12 is too.
    Before: 01/12 read alone as 12 January, before 30 November: a 4 h hang across the month's end
    was no silence at all. DD/MM/YY (rich in a day-first locale) reads alike."""
    for stamp in ("%d/%m/%Y %H:%M:%S", "[%d/%m/%y %H:%M:%S]"):
        s = measure(slashed(stamp, datetime(2026, 11, 30, 21, 0, 0), timedelta(hours=4)), 1)
        assert s is not None and s.seconds == 4 * 3600.0, stamp


@pytest.mark.parametrize("start", [datetime(2026, 12, 11, 23, 0, 0), datetime(2026, 11, 12, 23, 0, 0)])
def test_month_first_dates_read_as_before(start):
    """MM/DD/YYYY (Hugging Face's datefmt) across midnight, 12/11 to 12/12 (no number over 12:
    one night month first, a month day first) and 11/12 to 11/13: a 2 h hang is 2 h, and a run
    that ends at its cadence is no hang. Unchanged."""
    assert measure(slashed("%m/%d/%Y %H:%M:%S", start, timedelta(hours=2)), 1).seconds == 7200.0
    assert measure(slashed("%m/%d/%Y %H:%M:%S", start, timedelta(seconds=4)), 1) is None


def test_the_date_order_is_decided_once_for_the_end():
    """Over 12 first: day first; over 12 second: month first; neither: the reading that runs
    forward and spans least, a tie month first; both (two layouts): each stamp alone."""
    from dllogscan.correlate.stamps import Context as _Context

    def order(*dates: str):
        return _Context("".join(f"{d}/2026 10:00:00 step 1\n" for d in dates).encode()).day_first

    assert order("13/11", "14/11") is True and order("11/13", "11/14") is False
    assert order("11/12", "12/12") is True and order("12/11", "12/12") is False
    assert order("05/06", "05/06") is False and order("13/11", "11/13") is None
