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
