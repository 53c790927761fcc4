"""Near-miss spam: lines that repeat a signature's keyword thousands of times without its message.
Every piece of such a line is a candidate, and none matches alone; a piece must not then be joined
with each neighbour as a wrapped message (cleaned and searched again), which made 6.6 MB of
'killed by signal x' take 48 s and 3.4 MB of traceback frames 17 s; and a group's screen keeps the
start anchor of a pattern that has one (``screen.loosen``), which made 5 MB of 'OS | ' take 30 s."""
from __future__ import annotations

import io
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


EXITED = b"DataLoader worker exited unexpectedly "
BUS = b"RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error."


def _counted(scanner, monkeypatch) -> dict[str, int]:
    """Counts of the windows the scanner matches and the keyword positions its prefilter reports."""
    seen = {"windows": 0, "positions": 0}
    match_line, positions = scanner._match_line, scanner.prefilter.positions  # noqa: SLF001

    def counted_match(*args):
        seen["windows"] += 1
        return match_line(*args)

    def counted_positions(*args):
        found = positions(*args)
        seen["positions"] += len(found)
        return found

    monkeypatch.setattr(scanner, "_match_line", counted_match)
    monkeypatch.setattr(scanner.prefilter, "positions", counted_positions)
    return seen


@pytest.mark.timeout(60)
def test_one_line_of_a_repeated_failure_matches_a_bounded_number_of_windows(monkeypatch):
    """8 MB of one failure repeated without a newline (two rounds): a window every 2 KB was matched
    (4 000 windows; 200 MB took 14 s) and every keyword was reported (220 000 positions); now at
    most LINE_WINDOWS windows per round, the keywords looked for only as far as they go."""
    from dllogscan.pipeline import runner as pipeline
    from dllogscan.scan import limits
    from dllogscan.scan.scanner import Scanner

    scanner = Scanner(pipeline.get_scanner().db)
    seen = _counted(scanner, monkeypatch)
    out = scanner.scan(io.BytesIO(EXITED * ((8 << 20) // len(EXITED))))
    rounds = 3  # two of 4 MB, and the last 256 KB held back as lookahead
    assert 0 < seen["windows"] <= rounds * limits.LINE_WINDOWS
    assert seen["positions"] < rounds * 3 * limits.LINE_WINDOWS * limits.WINDOW // len(EXITED)
    assert out.hits and {h.line for h in out.hits} == {1}


@pytest.mark.timeout(60)
def test_a_failure_on_the_next_line_after_a_spam_line_is_found(monkeypatch):
    """The budget is per line (and per round): a line of spam does not hide the failure after it,
    even in the same round."""
    data = EXITED * 50000 + b"\n" + BUS + b"\n"
    result = dllogscan.scan_text(data.decode(), classifier="off")
    assert [d.cls for d in result.diagnoses][:1] == ["A"]
    assert result.diagnoses[0].evidence[0].line == 2


def test_the_context_of_a_window_in_a_long_line_is_the_window_before_it():
    """A hit's lines before, on a line longer than MAX_LINE: the WINDOW bytes before its window,
    not the round's data from its first byte (cleaned in full for each hit: 1 000 hits of a 4 MB
    line cleaned 4 GB)."""
    from dllogscan.scan import limits
    from dllogscan.scan.output import lines_before

    data = b"HEAD " + b"x" * (limits.MAX_LINE * 4) + b"near " + b"z" * (limits.WINDOW - 100) + b"y" * 100
    start = data.index(b"y")
    [(lineno, text)] = lines_before(data, start, limits.BEFORE_LINES, 9)
    assert lineno == 8 and "HEAD" not in text and "near z" in text
