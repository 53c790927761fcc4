"""``bench/saved_pages.py`` renders corpus threads as saved pages and counts those that read as the
plain thread: a page of each known layout, its title element kept or lost, reads as its thread and
agrees."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench_rows(threads: int) -> dict[str, list[int]]:
    """The bench's table: each layout's pages, how many read as a thread, agree on the verdict, and
    on the verdict and evidence lines."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "saved_pages.py"), "--threads", str(threads)],
                          capture_output=True, text=True, timeout=300, check=True)
    rows = {}
    for line in proc.stdout.splitlines()[1:]:
        name, numbers = line[:36].strip(), [int(n) for n in line[36:].split()]
        rows[name] = numbers
    return rows


def test_saved_pages_bench_runs():
    rows = bench_rows(3)
    assert set(rows) == {"forum"} | {f"{layout}{kind}" for layout in ("stackoverflow", "github", "github-react")
                                     for kind in ("", " (no title element)")}
    for layout in ("stackoverflow", "github", "github-react"):
        for kind in ("", " (no title element)"):  # without it: known by the heading around it
            assert rows[layout + kind] == [3, 3, 3, 3], (layout + kind, rows[layout + kind])
    assert rows["forum"][1] == 0  # a page of no known site is never read as a thread
