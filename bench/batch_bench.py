"""Batch throughput: N job logs of 100 KB (10 000 = 1 GB at --scale 1) as a directory and as a
.tar.gz, scanned by ``dllogscan batch`` with 1 and 2 processes, against ``grep -l -F -f`` on the
directory and ``zcat | grep -F -f`` on the archive, on the same data in the same run. With
``--tiny N`` it also measures peak memory on a tree of N tiny files.

    python bench/batch_bench.py --scale 0.1
    python bench/batch_bench.py --scale 1 --tiny 20000
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dllogscan.batch import Config, run_batch  # noqa: E402
from dllogscan.signatures import load_database  # noqa: E402

MINI = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "mini_signatures.toml"
FAILURES = ["RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible\n",
            "RuntimeError: DataLoader worker (pid(s) 1234, 1235) exited unexpectedly\n",
            "RuntimeError: DataLoader worker (pid 99) is killed by signal: Killed.\n"]


def job_log(i: int, size: int, rng: random.Random) -> bytes:
    lines = [f"SLURM_JOB_ID={100000 + i}\nSLURMD_NODENAME=node{i % 64:02d}\n"]
    n = 0
    total = len(lines[0])
    while total < size - 200:
        line = (f"Epoch {n // 500}: {n % 100:3d}%|{'#' * (n % 10):<10}| {n}/50000 [00:{n % 60:02d}<01:00, "
                f"{rng.uniform(5, 9):.2f}it/s, loss={rng.random():.4f}]\n")
        lines.append(line)
        total += len(line)
        n += 1
    if i % 10 == 0:
        lines.append(FAILURES[(i // 10) % len(FAILURES)])
    return "".join(lines).encode()


def generate(root: Path, count: int, size: int) -> tuple[Path, Path, int]:
    rng = random.Random(7)
    d = root / "logs"
    d.mkdir()
    total = 0
    tgz = root / "logs.tar.gz"
    with tarfile.open(tgz, "w:gz", compresslevel=6) as tf:
        for i in range(count):
            data = job_log(i, size, rng)
            p = d / f"{i // 1000:03d}" / f"slurm-{100000 + i}.out"
            p.parent.mkdir(exist_ok=True)
            p.write_bytes(data)
            tf.add(p, arcname=str(p.relative_to(root)))
            total += len(data)
    return d, tgz, total


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def batch(paths: list[str], jobs: int, config: Config) -> tuple[int, int]:
    rows: list[int] = []
    found: list[int] = []
    run_batch(paths, lambda r: (rows.append(1), found.append(bool(r.result.diagnoses))), config, jobs=jobs,
              progress=False)
    return len(rows), sum(found)


def shell(cmd: str) -> str:
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout


def tiny_rss(root: Path, count: int, config: Config) -> None:
    d = root / "tiny"
    for i in range(count):
        p = d / f"{i // 1000:03d}" / f"slurm-{i}.out"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"SLURM_JOB_ID={i}\nstep {i}\n" + (FAILURES[0] if i % 50 == 0 else ""))
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r});"
            "import resource, dllogscan;"
            f"df = dllogscan.scan_many([{str(d)!r}], out={str(root / 'tiny.parquet')!r}, jobs=2,"
            f" signatures={list(config.signatures)!r}, default_signatures={config.default_signatures});"
            "print(len(df), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
            " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    t, out = timed(lambda: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    rows, main_kb, child_kb = out.split()  # type: ignore[union-attr]
    print(f"tiny files: {rows} rows from {count} files in {t:.1f}s ({count / t:,.0f} files/s, 2 processes, "
          f"parquet out); peak RSS main process {int(main_kb) / 1024:.0f} MiB, largest worker {int(child_kb) / 1024:.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1, help="1 = 10 000 logs of 100 KB (1 GB)")
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--tiny", type=int, default=0, help="also measure peak RSS on this many tiny files")
    args = ap.parse_args()
    count = max(1, int(10_000 * args.scale))
    db = load_database()
    config = Config() if db.signatures else Config((str(MINI),), False)
    keywords = (db if db.signatures else load_database([MINI], include_default=False)).keywords
    print(f"scale {args.scale}: {count} logs x {args.size // 1000} KB; signatures: "
          f"{'shipped' if db.signatures else 'tests/fixtures/mini_signatures.toml (shipped set empty)'}, "
          f"{len(keywords)} keywords; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t, (d, tgz, total) = timed(lambda: generate(root, count, args.size))  # type: ignore[misc]
        print(f"generated {total / 1e6:,.0f} MB in {t:.0f}s; tar.gz {tgz.stat().st_size / 1e6:,.1f} MB")
        kw = root / "keywords.txt"
        kw.write_text("\n".join(keywords) + "\n")
        shell(f"cat {d}/*/* > /dev/null")  # warm the page cache for everyone
        results = {}
        t, out = timed(lambda: shell(f"grep -r -l -F -f {kw} {d} | wc -l"))
        results["grep dir"] = t
        print(f"grep -r -l -F -f  (dir)     {t:6.2f}s  {count / t:8,.0f} files/s  {total / t / 1e6:7.1f} MB/s  {out.strip()} files match")
        t, out = timed(lambda: shell(f"zcat {tgz} | grep -c -F -f {kw}"))
        results["grep tgz"] = t
        print(f"zcat | grep -F -f (tar.gz)  {t:6.2f}s  {count / t:8,.0f} files/s  {total / t / 1e6:7.1f} MB/s  {out.strip()} lines match")
        for where, paths in (("dir", [str(d)]), ("tgz", [str(tgz)])):
            for jobs in (1, 2):
                t, (n, found) = timed(lambda: batch(paths, jobs, config))  # type: ignore[misc]
                results[f"{where} {jobs}"] = t
                base = results[f"grep {where}"]
                print(f"dllogscan batch   ({where:6}) -j{jobs} {t:6.2f}s  {n / t:8,.0f} files/s  {total / t / 1e6:7.1f} MB/s  "
                      f"{found} with failures; {t / base:.2f}x grep's time")
        if args.tiny:
            tiny_rss(root, args.tiny, config)


if __name__ == "__main__":
    main()
