"""Runs of one line repeated (a failure printed by every rank, a near miss logged every second):
the scanner gives a line between two copies of itself the outcome of the copy before it
(``LineMemo.repeat``) instead of matching it again. The hits, counts and verdicts must be those
of matching every line."""
from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dllogscan.pipeline import runner as pipeline
from dllogscan.scan import limits, matcher, prefilter
from dllogscan.sources import streams as sources

ENGINES = ["python", *(e for e in ("ahocorasick",) if prefilter.available(e))]
BUS = "RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error."
LINES = [
    BUS,
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "RuntimeError: DataLoader worker (pid(s) 12) exited unexpectedly",
    "OSError: [Errno 24] Too many open files",
    "RuntimeError: Too many open files. Communication with the",
    "workers is no longer possible. Please increase the limit using `ulimit -n`",
    "2024/05/17 10:00:01 [crit] 12#12: *5 accept4() failed (24: Too many open files)",
    "Epoch 3: 40%|####      | 400/1000 [00:10<00:15, 40.0it/s]",
    "",
    "the workers are fine",
]


def _scan(data: bytes, engine: str, shortcut: bool):
    """The scanner's own output (hits and per-signature counts) and the pipeline's verdicts."""
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001 - a fresh scanner: nothing remembered
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "MAX_HITS_PER_SIGNATURE", 4)  # caps reached within a short log
        if not shortcut:
            patch.setattr(matcher, "_repeat", lambda *args: None)
        scanner = pipeline.get_scanner(engine=engine)
        out = scanner.scan(io.BytesIO(data))
        pipeline._cached_scanner.cache_clear()  # noqa: SLF001
        result = pipeline.run(sources.Source("r.log", lambda: io.BytesIO(data)), pipeline.get_scanner(engine=engine),
                              classifier="off")
    pipeline._cached_scanner.cache_clear()  # noqa: SLF001
    return out, [(d.cls, d.subclass, d.count, d.evidence) for d in result.diagnoses]


@settings(max_examples=60, derandomize=True, deadline=None, database=None)
@given(st.lists(st.tuples(st.sampled_from(LINES), st.integers(1, 9)), min_size=1, max_size=12),
       st.booleans(), st.sampled_from(ENGINES))
def test_repeated_lines_scan_as_if_each_were_matched(runs, final_newline, engine):
    data = "\n".join(line for line, times in runs for _ in range(times)).encode() + (b"\n" if final_newline else b"")
    (fast, fast_verdicts), (plain, plain_verdicts) = _scan(data, engine, True), _scan(data, engine, False)
    assert fast.hits == plain.hits
    assert fast.counts == plain.counts
    assert fast_verdicts == plain_verdicts


def test_a_long_run_counts_every_line():
    """The cap keeps 4 hits; the count of lines the signature's keywords were on goes on."""
    data = ((BUS + "\n") * 500).encode()
    (out, verdicts), (plain, _) = _scan(data, ENGINES[-1], True), _scan(data, ENGINES[-1], False)
    assert out.counts["A.bus-error.killed-by-signal"] == plain.counts["A.bus-error.killed-by-signal"] == 500
    assert len(out.hits) == len(plain.hits) and [(v[0], v[2]) for v in verdicts] == [("A", 4)]


def _frames(count: int, folder: str) -> str:
    return "".join(f'  File "{folder}/lib/json/decoder.py", line {n}, in decode\n' for n in range(count))


def test_a_fact_read_once_is_not_looked_for_again():
    """The Windows drive and the Python version are facts of the machine: the first frame gives
    them, and the thousands after it are not matched again (one hit each, the first value)."""
    text = _frames(3000, "C:\\Users\\me\\py") + _frames(3000, "D:\\envs\\py") + BUS + "\n"
    scanner = pipeline.get_scanner()
    out = scanner.scan(io.BytesIO(text.encode()))
    windows = [h for h in out.hits if h.signature == "fact.windows"]
    assert [(h.line, h.facts["windows"]) for h in windows] == [(1, "C")]
    assert any(h.signature.startswith("A.bus-error") and h.line == 6001 for h in out.hits)
    assert scanner.db.by_id["fact.windows"].once and matcher.cap(scanner.db.by_id["fact.windows"]) == 1
    assert matcher.cap(scanner.db.by_id["A.bus-error.killed-by-signal"]) == limits.MAX_HITS_PER_SIGNATURE


def test_lines_of_a_signature_at_its_cap_are_passed_over_in_later_rounds(monkeypatch):
    """Once a signature is at its cap, a line that holds only its keywords costs no matching
    (``Scanner._dead_test``): here every frame of a Python 3.14 traceback holds the fact's keyword.
    What is found is what matching every line finds."""
    from dllogscan.scan import scanner as scanner_mod

    text = (_frames(4000, "/usr/lib/python3.14") + BUS + "\n" + _frames(4000, "/usr/lib/python3.14")).encode()
    monkeypatch.setattr(limits, "CHUNK", 16 << 10)
    monkeypatch.setattr(limits, "LOOKAHEAD", 1 << 10)
    monkeypatch.setattr(limits, "LOOKBEHIND", 1 << 10)
    scanner = pipeline.get_scanner()
    matched: list[int] = []
    original = scanner_mod.Scanner._match_line

    def counting(self, data, start, end, lineno, out):
        matched.append(lineno)
        return original(self, data, start, end, lineno, out)

    monkeypatch.setattr(scanner_mod.Scanner, "_match_line", counting)
    out = scanner.scan(io.BytesIO(text))
    assert [h.line for h in out.hits if h.signature == "fact.python-version"] == [1]
    assert [h.line for h in out.hits if h.signature.startswith("A.bus-error")] == [4001]
    assert 4001 in matched and len(matched) < 1000, len(matched)  # the first round's frames, not all 8000
    monkeypatch.setattr(scanner_mod.Scanner, "_dead_test", lambda *args: None)
    every = scanner.scan(io.BytesIO(text))
    assert every.hits == out.hits and len(matched) > 8000


DENSE = ("RuntimeError: DataLoader worker (pid 1) exited unexpectedly\n"
         "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
         "OSError: [Errno 24] Too many open files\n")


def test_a_round_full_of_dead_lines_is_filtered_a_block_at_a_time(monkeypatch):
    """Every line holds a keyword whose signatures are at their cap or that the round screen rules
    out (``deadlines.DeadTest.live``): the per-position test is asked about a block of lines at
    most each time a signature reaches its cap, not about every line (it was asked about all 30 000,
    a Python call each). A failure after them is still found, and the hits are those of matching
    every line."""
    from dllogscan.scan import deadlines, scanner as scanner_mod

    text = (DENSE * 10000 + BUS + "\n" + DENSE * 2000).encode()
    monkeypatch.setattr(limits, "CHUNK", 256 << 10)
    monkeypatch.setattr(limits, "LOOKAHEAD", 4 << 10)
    monkeypatch.setattr(limits, "LOOKBEHIND", 4 << 10)
    asked: list[int] = []
    original = deadlines.DeadTest.__call__

    def counting(self, pos):
        asked.append(pos)
        return original(self, pos)

    monkeypatch.setattr(deadlines.DeadTest, "__call__", counting)
    scanner = pipeline.get_scanner()
    out = scanner.scan(io.BytesIO(text))
    assert [h.line for h in out.hits if h.signature == "A.bus-error.killed-by-signal"] == [30001]
    assert 0 < len(asked) < 4 * deadlines.BLOCK, len(asked)
    monkeypatch.setattr(scanner_mod.Scanner, "_dead_test", lambda *args: None)
    assert scanner.scan(io.BytesIO(text)).hits == out.hits
