"""Speed bench: dllogscan against ``grep -F -f <signature keywords>`` on generated logs.

    python bench/scan_bench.py --size 1G          # writes bench/RESULTS.md

One run measures, each timing repeated ``--repeat`` times (median reported, runs interleaved so
background load hits every contender alike): grep, dllogscan ``--prefilter hyperscan`` and
``--prefilter python`` on a mostly-clean log; both engines on a log that is one line; start-up
(``dllogscan`` on a 1 MB log against ``python -c pass``); and the dense logs, where every line holds
a keyword (``loggen.DENSE``: one failure repeated, five taking turns; ``loggen.CRASH_LOOP``:
failures whose lines differ in their pids), with all three engines (``--dense-only`` runs these
alone, into their own block of the results). Peak memory is the child's max RSS from ``os.wait4``.
It fails (exit 1) when the engines disagree or a memory bound is broken.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

import loggen  # noqa: E402
import results  # noqa: E402

MEMORY_LIMIT_MB = 150


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.upper().rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def run_child(cmd: list[str], stdout_path: Path, tree: Path = ROOT, cwd: Path | None = None):
    """Wall seconds, resource usage (``os.wait4``) and exit status of one child that imports
    dllogscan from the checkout ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with open(stdout_path, "wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage, os.waitstatus_to_exitcode(status)


def timed(cmd: list[str], stdout_path: Path) -> tuple[float, float, int, float]:
    """Wall seconds, peak RSS (MB), exit status and CPU seconds of one child."""
    wall, usage, code = run_child(cmd, stdout_path)
    return wall, usage.ru_maxrss / 1024, code, usage.ru_utime + usage.ru_stime


def write_keywords(path: Path) -> Path:
    """The signature keywords, one per line (``grep -F -f``'s input). They come from a child: a
    child's max RSS includes its parent's at fork, so this process stays small (no dllogscan
    import) to keep the peak-memory figures honest."""
    code = "from dllogscan.pipeline import runner as pipeline; print('\\n'.join(pipeline.get_scanner(engine='python').db.keywords))"
    path.write_text(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                   text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout)
    return path


def dllogscan_cmd() -> list[str]:
    """``python -m dllogscan``: the same entry (``cli.fast.main``) as the installed script, and
    this checkout's code whatever the venv's editable install points at."""
    return [sys.executable, "-m", "dllogscan"]


def ensure(path: Path, size: int, writer) -> Path:
    if not path.exists() or path.stat().st_size < size:
        print(f"generating {path.name} ...", flush=True)
        writer(path, size)
    with open(path, "rb") as fh:  # warm the page cache
        while fh.read(16 << 20):
            pass
    return path


def diagnoses(path: Path) -> list:
    data = json.loads(path.read_text())
    return [(d["class"], d["subclass"], d["confidence"], [e["line"] for e in d["evidence"]])
            for d in data["diagnoses"]]


def bench_file(log: Path, repeat: int, with_grep: bool, keywords: Path,
               engines: tuple[str, ...] = ("hyperscan", "python")) -> dict:
    runs: dict[str, list[tuple[float, float, float]]] = {}
    found: dict[str, list] = {}
    contenders = {e: dllogscan_cmd() + [str(log), "--format", "json", "--prefilter", e] for e in engines}
    if with_grep:
        contenders = {"grep": ["grep", "-c", "-F", "-f", str(keywords), str(log)], **contenders}
    for _ in range(repeat):
        for name, cmd in contenders.items():
            out = OUT / f"{log.stem}.{name}.out"
            wall, rss, code, cpu = timed(cmd, out)
            if name != "grep":
                if code not in (0, 1):
                    raise SystemExit(f"dllogscan {name} failed with exit {code} on {log}")
                found.setdefault(name, diagnoses(out))
            runs.setdefault(name, []).append((wall, rss, cpu))
    size_mb = log.stat().st_size / 1e6
    res = {name: {"wall": statistics.median(w for w, _, _ in r), "walls": [w for w, _, _ in r],
                  "cpu": statistics.median(c for _, _, c in r), "rss": max(m for _, m, _ in r)}
           for name, r in runs.items()}
    for r in res.values():
        r["mbps"] = size_mb / r["wall"]
    return {"file": log.name, "size_mb": size_mb, "res": res, "found": found}


def bench_startup(log: Path, runs: int) -> dict:
    py, scan = [], []
    for _ in range(runs):
        py.append(timed([sys.executable, "-c", "pass"], OUT / "py.out")[0])
        scan.append(timed(dllogscan_cmd() + [str(log)], OUT / "startup.out")[0])
    return {"python": statistics.median(py), "dllogscan": statistics.median(scan), "runs": runs}


def machine() -> str:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    try:
        import hyperscan
        hs = getattr(hyperscan, "__version__", "?")
    except ImportError:
        hs = "not installed"
    grep = subprocess.run(["grep", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {grep}, "
            f"hyperscan {hs}, Linux {platform.release()}")


def report(args, main: dict, line: dict, start: dict, load: tuple) -> str:
    r = main["res"]
    g = r["grep"]["wall"]
    rows = [f"| {n} | {v['wall']:.2f} s ({', '.join(f'{w:.2f}' for w in v['walls'])}) | {v['mbps']:.0f} | "
            f"{v['rss']:.0f} MB | {v['wall'] / g:.2f}x |" for n, v in r.items()]
    lrows = [f"| {n} | {v['wall']:.2f} s | {v['mbps']:.0f} | {v['rss']:.0f} MB |" for n, v in line["res"].items()]
    return "\n".join([
        "### Single-log bench (`bench/scan_bench.py`)", "",
        f"Command: `python bench/scan_bench.py --size {args.size} --repeat {args.repeat} "
        f"--startup-runs {args.startup_runs}`  ",
        f"Machine: {machine()}  ",
        f"Load average (1 min) before / after: {load[0]:.2f} / {load[1]:.2f} — the 2 cores are shared "
        "with other engineers' test runs, so every timing is the median of interleaved repeats.", "",
        f"## Mostly-clean training log ({main['size_mb']:.0f} MB, {main['file']})", "",
        "| tool | wall (median; runs) | MB/s | peak RSS (per process) | vs grep -F -f |", "|---|---|---|---|---|", *rows, "",
        f"Diagnoses (class, subclass, confidence, evidence lines), identical for both engines: "
        f"`{main['found']['hyperscan']}`", "",
        f"## One line of {line['size_mb']:.0f} MB ({line['file']})", "",
        "| engine | wall | MB/s | peak RSS |", "|---|---|---|---|", *lrows, "",
        f"Diagnoses: `{line['found']['hyperscan']}`", "",
        f"## Start-up (1 MB log, median of {start['runs']} runs)", "",
        f"- `python -c pass`: {start['python']:.3f} s",
        f"- `python -m dllogscan startup-1M.log` (text report, byte code compiled): {start['dllogscan']:.3f} s "
        f"({start['dllogscan'] / start['python']:.2f}x `python -c pass`)", ""])


DENSE_ENGINES = ("hyperscan", "ahocorasick", "python")


def bench_dense(args, size: int, keywords: Path) -> list[dict]:
    """Each ``loggen.DENSE`` log, and the crash loop (``loggen.CRASH_LOOP``: failures whose lines
    differ in their numbers), against ``grep -c -F -f`` on the same file, in the same run."""
    writers = {f"dense-{shape}": lambda path, n, shape=shape: loggen.write_dense(path, n, shape)
               for shape in loggen.DENSE}
    writers["crash-loop"] = loggen.write_crash_loop
    return [bench_file(ensure(OUT / f"{name}-{args.size}.log", size, writer), args.repeat, True, keywords,
                       DENSE_ENGINES)
            for name, writer in writers.items()]


def dense_report(args, dense: list[dict], load: tuple) -> str:
    out = ["### Dense logs (`bench/scan_bench.py`): a keyword on every line", "",
           f"Command: `python bench/scan_bench.py --size {args.size} --repeat {args.repeat} --dense-only`  ",
           f"Machine: {machine()}  ",
           f"Load average (1 min) before / after: {load[0]:.2f} / {load[1]:.2f}. Wall and CPU (user + system) "
           "are medians of interleaved repeats; CPU moves less with the load of a shared machine.", ""]
    for res in dense:
        r = res["res"]
        g = r["grep"]
        out += [f"#### {res['file']} ({res['size_mb']:.0f} MB)", "",
                "| tool | wall (median; runs) | CPU | MB/s | peak RSS | wall vs grep | CPU vs grep |",
                "|---|---|---|---|---|---|---|",
                *(f"| {n} | {v['wall']:.2f} s ({', '.join(f'{w:.2f}' for w in v['walls'])}) | {v['cpu']:.2f} s | "
                  f"{v['mbps']:.0f} | {v['rss']:.0f} MB | {v['wall'] / g['wall']:.2f}x | {v['cpu'] / g['cpu']:.2f}x |"
                  for n, v in r.items()), "",
                f"Diagnoses, identical for every engine: `{res['found']['hyperscan']}`", ""]
    return "\n".join(out)


def check(results: list[dict], engines: tuple[str, ...]) -> list[str]:
    """What went wrong: engines that disagree, a log with no diagnosis, a memory bound broken."""
    problems = []
    for res in results:
        if any(res["found"][e] != res["found"][engines[0]] for e in engines):
            problems.append(f"{res['file']}: engines disagree: {res['found']}")
        if not res["found"][engines[0]]:
            problems.append(f"{res['file']}: the planted failure was not found")
        for name, v in res["res"].items():
            if name != "grep" and v["rss"] > MEMORY_LIMIT_MB:
                problems.append(f"{res['file']}: {name} peak RSS {v['rss']:.0f} MB > {MEMORY_LIMIT_MB} MB")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G", help="log size: 100M, 1G ... (default 1G)")
    ap.add_argument("--repeat", type=int, default=3, help="timing repeats per contender (median)")
    ap.add_argument("--startup-runs", type=int, default=15)
    ap.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--dense-only", action="store_true", help="only the dense logs (a keyword on every line)")
    args = ap.parse_args()
    size = parse_size(args.size)
    OUT.mkdir(exist_ok=True)
    keywords = write_keywords(OUT / "keywords.txt")
    load0 = os.getloadavg()[0]
    dense = bench_dense(args, size, keywords)
    text = dense_report(args, dense, (load0, os.getloadavg()[0]))
    results.write_block(args.results, "scan-bench-dense", text)
    print(text)
    problems = check(dense, DENSE_ENGINES)
    if not args.dense_only:
        problems += bench_single(args, size, keywords)
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    return 1 if problems else 0


def bench_single(args, size: int, keywords: Path) -> list[str]:
    """The mostly-clean log, the one-line log and start-up, into the ``scan-bench`` block."""
    load0 = os.getloadavg()[0]
    log = ensure(OUT / f"train-{args.size}.log", size, loggen.write_log)
    main_res = bench_file(log, args.repeat, True, keywords)
    one = ensure(OUT / f"oneline-{args.size}.log", size, loggen.write_one_line)
    line_res = bench_file(one, 1, False, keywords)
    small = ensure(OUT / "startup-1M.log", 1 << 20, loggen.write_log)
    # an installed wheel ships byte code; this checkout may run with PYTHONDONTWRITEBYTECODE
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "dllogscan")], check=True)
    start = bench_startup(small, args.startup_runs)
    text = report(args, main_res, line_res, start, (load0, os.getloadavg()[0]))
    results.write_block(args.results, "scan-bench", text)
    print(text)
    return check([main_res, line_res], ("hyperscan", "python"))


if __name__ == "__main__":
    sys.exit(main())
