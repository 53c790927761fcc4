"""The batch's timed scanner: a hit carries the wall-clock time of its own line, else of the
nearest stamped line before it, else none; every hit of one line carries the same time."""
from __future__ import annotations

import io

from dllogscan.pipeline import runner as pipeline
from dllogscan.batch.probe import TimedScanner
from dllogscan.scan.output import RoundState, ScanOutput

CONFIG = b"data: {'batch_size': 64, 'num_workers': 8}"


def _hits(text: bytes) -> list[tuple[int, str, str | None]]:
    scanner = TimedScanner(pipeline.get_scanner().db)
    scanner.year = 2026
    out = scanner.scan_rounds(io.BytesIO(text).read, ScanOutput(), RoundState())
    return sorted((h.line, h.signature, h.facts.get("time")) for h in out.hits)


def test_a_hit_takes_its_own_lines_time():
    hits = _hits(b"2026-11-30 06:00:00 INFO " + CONFIG + b"\n")
    assert {(line, time) for line, _, time in hits} == {(1, "2026-11-30T06:00:00")}
    assert {sig for _, sig, _ in hits} >= {"fact.batch-size", "fact.num-workers"}


def test_a_hit_without_a_time_takes_the_nearest_stamped_line_before_it():
    text = b"Nov 30 05:00:00 host a\nNov 30 05:59:59 host b\nplain line\n" + CONFIG + b"\n"
    assert {(line, time) for line, _, time in _hits(text)} == {(4, "2026-11-30T05:59:59")}


def test_no_stamp_anywhere_is_no_time():
    assert {(line, time) for line, _, time in _hits(b"plain line\n" + CONFIG + b"\n")} == {(2, None)}
