"""Issue 10's log defect, reproduced: 3 000 training logs of ~100 KB, 300 of them ending in a
canonical failure text; every one of the 300 must come back as a row with a class.

    python bench/canonical_batch.py [--logs 3000] [--dir /tmp/canonical-batch]

Healthy logs rotate three progress styles (tqdm bars, logging lines with timestamps, plain
``[train] it N | loss``); the failing ones end in a bare ``exited unexpectedly`` (100), a bus error
(100), ``received 0 items of ancdata`` (50) or ``DataLoader timed out`` (50). Prints the rows with a
class per ending and the wall time of ``dllogscan batch`` (one run; the machine's load shows in it).
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STYLES = {
    "tqdm": lambda i: f"Epoch {i // 500}: {i % 100:3d}%|{'#' * (i % 10):<10}| {i}/50000 [00:{i % 60:02d}<01:00, 7.1it/s, "
                      f"loss={1 / (i + 1):.4f}]\n",
    "logging": lambda i: f"2026-11-30 06:{(i * 2) // 60 % 60:02d}:{(i * 2) % 60:02d},123 INFO trainer: step {i}/20000 "
                         f"loss={1 / (i + 1):.4f} lr=3.0e-04 grad_norm=1.23 throughput=412.5 samples/s\n",
    "plain": lambda i: f"[train] it {i} | loss {1 / (i + 1):.5f} | acc {0.5 + i / 1e5:.4f} | time/batch 0.231s\n",
}
ENDINGS = {
    "exited": "RuntimeError: DataLoader worker (pid(s) 1010) exited unexpectedly\n",
    "bus": "RuntimeError: DataLoader worker (pid 1010) is killed by signal: Bus error. It is possible that "
           "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n",
    "ancdata": "RuntimeError: received 0 items of ancdata\n",
    "timeout": "RuntimeError: DataLoader timed out after 30 seconds\n",
    "healthy": "",
}
FAILURES = ["exited"] * 100 + ["bus"] * 100 + ["ancdata"] * 50 + ["timeout"] * 50


def log_text(style: str, ending: str, size: int = 100_000) -> str:
    out, total, i = [], 0, 0
    while total < size:
        line = STYLES[style](i)
        out.append(line)
        total += len(line)
        i += 1
    return "".join(out) + ENDINGS[ending]


def write_logs(root: Path, count: int) -> None:
    styles = list(STYLES)
    step = max(count // len(FAILURES), 1)
    texts: dict[tuple[str, str], str] = {}
    for i in range(count):
        ending = FAILURES[i // step] if i % step == 0 and i // step < len(FAILURES) else "healthy"
        style = styles[(i // step if ending != "healthy" else i) % len(styles)]
        text = texts.setdefault((style, ending), log_text(style, ending))
        (root / f"job-{i:05d}-{ending}.log").write_text(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--logs", type=int, default=3000)
    ap.add_argument("--dir", type=Path, help="where to write the logs (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.dir or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        write_logs(root, args.logs)
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "dllogscan", "batch", str(root), "--format", "jsonl"],
                             capture_output=True, text=True).stdout
        wall = time.perf_counter() - start
    counts: collections.Counter = collections.Counter()
    for line in out.splitlines():
        row = json.loads(line)
        ending = row["source"].rsplit("-", 1)[-1][:-4]
        counts[(ending, bool(row["diagnoses"]))] += 1
    failing = sum(v for (ending, found), v in counts.items() if ending != "healthy")
    found = sum(v for (ending, found), v in counts.items() if ending != "healthy" and found)
    print(f"{sum(counts.values())} rows; failing logs with a class: {found} of {failing}; "
          f"healthy logs with a class: {counts[('healthy', True)]}; dllogscan batch {wall:.1f} s")
    for (ending, hit), n in sorted(counts.items()):
        print(f"  {ending:8} {'class' if hit else 'none':5} {n}")
    return 0 if found == failing else 1


if __name__ == "__main__":
    sys.exit(main())
