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
    assert len(rows) == 6 and all("x" in row for row in rows)
    assert any(row.startswith("| nearmiss-windows-300K.log") for row in rows)
    assert any(row.startswith("| nearmiss-unicode-300K.log") for row in rows)


def test_the_windows_log_shows_windows_on_most_lines_and_logs_can_be_chosen(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from nearmiss_bench import windows_log
    finally:
        sys.path.remove(str(ROOT / "bench"))
    import dllogscan

    text = windows_log(200_000)
    lines = text.decode().splitlines()
    assert len(text) >= 200_000 and len(set(lines)) > len(lines) // 2  # numbers vary
    assert sum(":\\" in line or "Windows" in line for line in lines) >= 0.75 * len(lines)
    assert sum(line.startswith("OS: ") for line in lines) == len(lines) // 600
    result = dllogscan.scan(text.decode())
    assert result.facts["windows"] in ("C", "Windows")
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "nearmiss_bench.py"), "--logs", "bus,nope",
                           "--results", str(tmp_path / "R.md")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "unknown log nope" in proc.stderr


def test_the_unicode_log_is_unicode_and_folds_one_line_in_fifty():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from nearmiss_bench import unicode_log
    finally:
        sys.path.remove(str(ROOT / "bench"))
    from dllogscan.normalize.blanks import FOLDED, fold

    data = unicode_log(200_000)
    lines = data.split(b"\n")[:-1]
    assert len(data) >= 200_000 and not any(line.isascii() for line in lines)
    pasted = [line for line in lines if any(c in line for c in FOLDED)]
    assert len(pasted) == len(lines) // 50
    assert fold(data, True, 16 << 10).count(b"INFO trainer: step ") == len(pasted)
