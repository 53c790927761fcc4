"""``bench/nearmiss_bench.py`` runs end to end on small logs: its contenders agree (it exits 1
when their verdicts differ) and it writes one row per log."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dllogscan.scan import prefilter

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(not prefilter.available("ahocorasick"), reason="no Aho-Corasick extension")
def test_nearmiss_bench_runs(tmp_path):
    results = tmp_path / "RESULTS.md"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "nearmiss_bench.py"), "--size", "300K", "--repeat", "1",
                           "--engines", "ahocorasick,python", "--results", str(results)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in results.read_text().splitlines() if line.startswith("| nearmiss-")]
    assert len(rows) == 3 and all("x" in row for row in rows)
