"""Batch throughput, one run, every figure side by side with grep on the same data.

Two data sets of N job logs of 100 KB (3 000 at ``--scale 0.3``), each as a directory and as one
``.tar.gz``: ``mixed`` (six generators that print like real trainers, ``bench/joblogs.py``) and
``keyvalue`` (``batch_time=... data_time=...`` on every line, which drove the pure-Python probe
planner to passes over ``ata``); both stay in the table, so the worse of them is always shown.
Per data set: ``grep -r -c -F -f`` on the directory, ``zcat | grep -F -f`` on the archive, and
``dllogscan batch`` as a user runs it (the command line, its start-up included) with the plain
install's prefilter (1 and 2 processes), the pure-Python fallback and Hyperscan (the ``fast``
extra), each a child process whose wall time and peak RSS
(largest process of its tree, from GNU ``time``) are reported. Then start-up on a 1 MB log
(``--format json``, the text report to a file and on a pseudo-terminal); with ``--big`` one large
log against ``grep -F -f``; with ``--tiny N`` peak memory over N tiny files. Rows of every batch
run are compared: the same diagnoses from every engine and from directory and archive alike, or
the bench fails; so does a peak RSS over 150 MB.

    python bench/batch_bench.py --scale 0.3
    python bench/batch_bench.py --scale 0.3 --big 1G --tiny 100000 --results bench/RESULTS.md
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import pty
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import joblogs  # noqa: E402
import loggen  # noqa: E402
import results  # noqa: E402

DATA_VERSION = "1"  # bump when the generators change: cached data sets are regenerated
MEMORY_LIMIT_MB = 150
TIME = "/usr/bin/time"
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
PROBE = ("from dllogscan.scan import prefilter as p; print('ahocorasick' if 'ahocorasick' in getattr(p, 'ENGINES', ()) "
         "and p.available('ahocorasick') else 'python')")


def dllogscan_batch(out: Path, path: Path, jobs: int, prefilter: str) -> list[str]:
    """``dllogscan batch`` as a user runs it (its own start-up included), rows into ``out``."""
    return [sys.executable, "-m", "dllogscan", "batch", str(path), "--out", str(out), "--jobs", str(jobs),
            "--prefilter", prefilter, "--no-progress"]


def run(cmd: list[str] | str, stdout=subprocess.DEVNULL) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB (largest process of the tree) and exit status of one child.

    The child runs under GNU ``time``: a process forked from this (larger) one would start with
    this one's resident pages and report them as its own peak."""
    argv = ["sh", "-c", cmd] if isinstance(cmd, str) else cmd
    stats = OUT / "time.txt"
    start = time.perf_counter()
    code = subprocess.run([TIME, "-f", "%M", "-o", str(stats), *argv], stdout=stdout,
                          stderr=subprocess.DEVNULL, env=ENV).returncode
    wall = time.perf_counter() - start
    rss_kb = int(stats.read_text().split()[-1])
    return wall, rss_kb / 1024, code


def wall(cmd: list[str], stdout=subprocess.DEVNULL) -> float:
    """Wall seconds of one child, started directly (for the start-up figures)."""
    start = time.perf_counter()
    subprocess.run(cmd, stdout=stdout, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def dataset(name: str, count: int, size: int) -> tuple[Path, Path, int]:
    """The directory and .tar.gz of one data set, generated once and kept under bench/out."""
    root = OUT / f"batch-v{DATA_VERSION}-{name}-{count}x{size}"
    d, tgz, done = root / "logs", root / "logs.tar.gz", root / "done"
    if not done.exists():
        print(f"generating {root.name} ...", flush=True)
        shutil.rmtree(root, ignore_errors=True)
        d.mkdir(parents=True)
        pools = joblogs.pools()
        names = list(joblogs.GENERATORS) if name == "mixed" else [name]
        rng = random.Random(11)
        with tarfile.open(tgz, "w:gz", compresslevel=6) as tf:
            for i in range(count):
                gen = names[i % len(names)]
                p = d / f"{i // 1000:03d}" / f"slurm-{100000 + i}.out"
                p.parent.mkdir(exist_ok=True)
                p.write_bytes(joblogs.job_log(i, size, gen, pools[gen], rng))
                tf.add(p, arcname=str(p.relative_to(root)))
        done.write_text("ok")
    total = sum(p.stat().st_size for p in d.rglob("*.out"))
    run(f"cat {d}/*/* {tgz} > /dev/null")  # warm the page cache for everyone
    return d, tgz, total


def verdicts(path: Path, base: Path) -> dict[str, list]:
    """Each row's diagnoses keyed by the log's path below the data set (file or member)."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            name = obj.get("member") or os.path.relpath(obj["path"], base)
            out[name] = [(d["class"], d["subclass"], d["confidence"], [(e["line"], e["text"]) for e in d["evidence"]],
                          d["count"], [f["title"] for f in d["fixes"]]) for d in obj["diagnoses"]]
    return out


def bench_dataset(name: str, count: int, size: int, keywords: Path, plain: str) -> dict:
    d, tgz, total = dataset(name, count, size)
    res: dict = {"name": name, "count": count, "total": total, "rows": []}
    # -c, not -l: every log opens with a config line that names a keyword, where -l would stop
    # output to a file: GNU grep writing to /dev/null stops at the first match, as -q does
    t, rss, _ = run(f"grep -r -c -F -f {keywords} {d} > {OUT / 'grep.out'}")
    res["rows"].append(("`grep -r -c -F -f` (dir)", t, rss, "grep dir"))
    t, rss, _ = run(f"zcat {tgz} | grep -c -F -f {keywords} > {OUT / 'grep.out'}")
    res["rows"].append(("`zcat | grep -F -f` (tar.gz)", t, rss, "grep tgz"))
    runs = [("dir", 1, plain), ("dir", 2, plain), ("dir", 2, "python"), ("dir", 2, "hyperscan"),
            ("tgz", 1, plain), ("tgz", 2, plain), ("tgz", 2, "hyperscan")]
    if plain == "python":
        runs.remove(("dir", 2, "python"))
    seen: dict[str, dict] = {}
    problems = []
    for where, jobs, engine in runs:
        out = OUT / f"rows-{name}-{where}-{jobs}-{engine}.jsonl"
        cmd = dllogscan_batch(out, d if where == "dir" else tgz, jobs, engine)
        t, rss, code = run(cmd)
        if code not in (0, 1):  # 1: failures found, as in every bench set
            raise SystemExit(f"batch run failed (exit {code}): {' '.join(cmd)}")
        label = f"`batch` {where}, {jobs} process{'es' if jobs > 1 else ''}, {engine}"
        res["rows"].append((label, t, rss, f"grep {where}"))
        found = verdicts(out, d.parent)
        if len(found) != count:
            problems.append(f"{label}: {len(found)} rows for {count} logs")
        for other, rows in seen.items():
            if rows != found:
                diff = sorted(k for k in set(rows) | set(found) if rows.get(k) != found.get(k))
                problems.append(f"{label}: diagnoses differ from {other} on {len(diff)} logs, e.g. {diff[:3]}")
        seen[label] = found
        out.unlink()
    res["found"] = sum(1 for v in next(iter(seen.values())).values() if v)
    res["problems"] = problems
    return res


def startup(runs: int) -> dict:
    log = OUT / "startup-1M.log"
    if not log.exists():
        loggen.write_log(log, 1 << 20)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "dllogscan")], check=True)
    cmd = [sys.executable, "-m", "dllogscan", str(log)]
    times: dict[str, list[float]] = {"python -c pass": [], "--format json": [], "terminal report (pty)": [],
                                     "text report, stdout a file": []}
    for _ in range(runs):
        times["python -c pass"].append(wall([sys.executable, "-c", "pass"]))
        times["--format json"].append(wall(cmd + ["--format", "json"]))
        times["text report, stdout a file"].append(wall(cmd))
        master, slave = pty.openpty()
        try:
            times["terminal report (pty)"].append(wall(cmd, stdout=slave))
        finally:
            os.close(slave)
            _drain(master)
    return {k: statistics.median(v) for k, v in times.items()}


def _drain(fd: int) -> None:
    os.set_blocking(fd, False)
    try:
        while os.read(fd, 1 << 16):
            pass
    except OSError:
        pass
    os.close(fd)


def big(size: str, keywords: Path, plain: str) -> list[tuple[str, float, float]]:
    units = {"M": 1 << 20, "G": 1 << 30}
    nbytes = int(float(size[:-1]) * units[size[-1].upper()])
    log = OUT / f"train-{size}.log"
    if not log.exists() or log.stat().st_size < nbytes:
        loggen.write_log(log, nbytes)
    run(f"cat {log} > /dev/null")
    rows = []
    t, rss, code = run(f"grep -c -F -f {keywords} {log} > {OUT / 'grep.out'}")
    if code != 0:
        raise SystemExit(f"grep failed on {log} (exit {code})")
    rows.append(("`grep -c -F -f`", t, rss))
    for engine in dict.fromkeys((plain, "python", "hyperscan")):
        t, rss, code = run([sys.executable, "-m", "dllogscan", str(log), "--format", "json", "--prefilter", engine])
        if code not in (0, 1):
            raise SystemExit(f"dllogscan --prefilter {engine} failed on {log} (exit {code})")
        rows.append((f"`dllogscan --prefilter {engine}`", t, rss))
    return rows


def tiny(count: int) -> tuple[float, float]:
    """Time and peak RSS of a 2-process batch over ``count`` tiny files (a job id and a step
    line each, one in fifty failing), written to JSONL."""
    d = OUT / f"tiny-{count}"
    if not (d / "done").exists():
        shutil.rmtree(d, ignore_errors=True)
        for i in range(count):
            p = d / f"{i // 1000:03d}" / f"slurm-{i}.out"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"SLURM_JOB_ID={i}\nstep {i}\n" + (joblogs.FAILURES[0] if i % 50 == 0 else ""))
        (d / "done").write_text("ok")
    out = OUT / "tiny.jsonl"
    t, rss, code = run(dllogscan_batch(out, d, 2, "auto"))
    if code not in (0, 1):
        raise SystemExit(f"tiny-file batch failed (exit {code})")
    out.unlink()
    return t, rss


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    grep = subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {grep}, Linux {platform.release()}"


def table(res: dict) -> list[str]:
    refs = {"grep dir": res["rows"][0][1], "grep tgz": res["rows"][1][1]}
    lines = [f"**{res['name']}**: {res['count']} logs, {res['total'] / 1e6:,.0f} MB, {res['found']} with a diagnosis", "",
             "| run | time | MB/s | peak RSS | vs its reference |", "|---|---:|---:|---:|---:|"]
    for label, t, rss, ref in res["rows"]:
        lines.append(f"| {label} | {t:.2f} s | {res['total'] / t / 1e6:,.0f} | {rss:.0f} MB | "
                     f"{t / refs[ref]:.2f}x {'grep' if ref == 'grep dir' else 'zcat|grep'} |")
    return lines + [""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1, help="1 = 10 000 logs of 100 KB per data set")
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--startup-runs", type=int, default=10)
    ap.add_argument("--big", default="", help="also one log of this size (e.g. 1G) against grep -F -f")
    ap.add_argument("--tiny", type=int, default=0, help="also a batch over this many tiny files (memory)")
    ap.add_argument("--results", type=Path, help="write the tables into this markdown file's batch-bench block")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    count = max(1, int(10_000 * args.scale))
    keywords = OUT / "keywords.txt"
    code = "from dllogscan.pipeline import runner as pipeline; print('\\n'.join(pipeline.get_scanner(engine='python').db.keywords))"
    keywords.write_text(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                       env=ENV).stdout)
    plain = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=ENV).stdout.strip() or "python"
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    measured = [bench_dataset(name, count, args.size, keywords, plain) for name in ("mixed", "keyvalue")]
    start = startup(args.startup_runs)
    big_rows = big(args.big, keywords, plain) if args.big else []
    tiny_run = tiny(args.tiny) if args.tiny else None
    load1 = os.getloadavg()
    options = (f" --big {args.big}" if args.big else "") + (f" --tiny {args.tiny}" if args.tiny else "")
    lines = [f"Command: `python bench/batch_bench.py --scale {args.scale}{options}` "
             f"({time.perf_counter() - t0:.0f} s)  ",
             f"Machine: {machine()}  ",
             f"Load average (1/5/15 min) before: {' / '.join(f'{x:.2f}' for x in load0)}, after: "
             f"{' / '.join(f'{x:.2f}' for x in load1)}. One run each; the plain install's prefilter here is `{plain}`.", ""]
    for res in measured:
        lines += table(res)
    py = start["python -c pass"]
    lines += [f"Start-up on a 1 MB log (median of {args.startup_runs}): " + ", ".join(
        f"{k} {v:.3f} s" for k, v in start.items()) + f" ({start['--format json'] / py:.1f}x / "
        f"{start['terminal report (pty)'] / py:.1f}x `python -c pass`)", ""]
    if big_rows:
        g = big_rows[0][1]
        lines += [f"One {args.big} log:", "", "| run | time | peak RSS | vs grep |", "|---|---:|---:|---:|"]
        lines += [f"| {label} | {t:.2f} s | {rss:.0f} MB | {t / g:.2f}x |" for label, t, rss in big_rows] + [""]
    if tiny_run:
        lines += [f"{args.tiny:,} tiny files, 2 processes, JSONL: {tiny_run[0]:.2f} s ({args.tiny / tiny_run[0]:,.0f} files/s), "
                  f"peak RSS {tiny_run[1]:.0f} MB (largest process)", ""]
    text = "\n".join(lines)
    print(text)
    if args.results:
        results.write_block(args.results, "batch-bench", text)
    problems = [p for r in measured for p in r["problems"]]
    problems += [f"{label}: peak RSS {rss:.0f} MB > {MEMORY_LIMIT_MB} MB" for r in measured
                 for label, _, rss, _ in r["rows"][2:] if rss > MEMORY_LIMIT_MB]
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
