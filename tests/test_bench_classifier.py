"""``bench/classifier_bench.py`` times predictions on a checkout's corpus texts, cold and warm."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_classifier_bench_times_every_text_it_finds(tmp_path):
    (tmp_path / "corpus" / "threads").mkdir(parents=True)
    (tmp_path / "corpus" / "logs" / "a").mkdir(parents=True)
    (tmp_path / "corpus" / "threads" / "e-x-1.md").write_text("# Training hangs at epoch 0\nno error, GPU at 0 %\n")
    (tmp_path / "corpus" / "logs" / "a" / "b.log").write_text(
        "RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error.\n" * 3)
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "classifier_bench.py"), "--root", str(tmp_path),
                           "--repeat", "2"], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("2 texts, ")
    timings = dict(re.findall(r"^(cold|warm): ([0-9.]+) ms a prediction$", proc.stdout, re.M))
    assert timings.keys() == {"cold", "warm"} and all(float(v) > 0 for v in timings.values())
