"""``bench/loggen.py``'s one-line log: the requested size exactly, with the planted failure in the
middle at every size (it once wrote 4 MB blocks only, so a log under 8 MB had no failure at all)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import dllogscan

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import loggen  # noqa: E402


@pytest.mark.parametrize("size", [200_000, 2 << 20, 5 << 20])
def test_one_line_log_has_its_size_and_its_failure(tmp_path, size):
    path = loggen.write_one_line(tmp_path / "one.log", size)
    data = path.read_bytes()
    failure = loggen.FAILURES[0].replace("\n", " ").encode()
    assert len(data) == size
    assert data.count(failure) == 1 and data.index(failure) == size // 2
    assert b"\n" not in data
    assert [d.cls for d in dllogscan.scan(path).diagnoses][:1] == ["A"]


@pytest.mark.parametrize("shape", sorted(loggen.DENSE))
def test_dense_log_is_whole_turns_of_its_lines(tmp_path, shape):
    """At least the size asked (``scan_bench.ensure`` makes a shorter file again), whole turns of
    the shape's lines, each of which holds a keyword and is found."""
    size = 300_000
    data = loggen.write_dense(tmp_path / "dense.log", size, shape).read_bytes()
    unit = "".join(loggen.DENSE[shape]).encode()
    assert len(data) >= size and len(data) - size < len(unit)
    assert data == unit * (len(data) // len(unit))
    assert dllogscan.scan(tmp_path / "dense.log").diagnoses


def test_crash_loop_is_the_same_at_each_run_and_its_lines_differ(tmp_path):
    """At least the size asked, the same bytes each time, every line one of ``CRASH_LOOP``, most
    with a number of their own: few lines repeat the one before (the scanner's memo of a repeated
    line seldom applies), and the failures are found."""
    size = 300_000
    data = loggen.write_crash_loop(tmp_path / "loop.log", size).read_bytes()
    assert data == loggen.write_crash_loop(tmp_path / "again.log", size).read_bytes()
    assert size <= len(data) < size + 200
    lines = data.decode().splitlines()
    assert all(line.startswith(tuple(t.split("{}")[0] for t in loggen.CRASH_LOOP)) for line in lines)
    assert sum(a == b for a, b in zip(lines, lines[1:])) < len(lines) // 20  # the bus error, 1 in 36
    assert dllogscan.scan(tmp_path / "loop.log").diagnoses
