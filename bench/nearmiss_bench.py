"""Near-miss and repeated-failure logs: dllogscan against ``grep -F -f <keywords>`` on the same files.

    python bench/nearmiss_bench.py [--size 20M] [--repeat 5] [--base /path/to/other/checkout] [--logs bus,windows]

The logs are those of ``tests/hostile/test_throughput.py`` (issue 12's floors), at ``--size``: one
nginx ``accept4() failed (24: Too many open files)`` line repeated, the same with varying
timestamps and numbers, and one PyTorch bus-error line repeated; and a Windows job's log (``windows``:
progress lines, traceback frames under a drive letter, warnings that name Windows, now and then an
environment report's ``OS:`` line), where the platform facts' keywords are on most lines; and a
log in Unicode (``unicode``: tqdm's block bars, rich's box-drawn frames, curly quotes, Chinese
messages, and one line in 50 pasted with no-break and zero-width spaces), where every round is
searched for the blanks ``normalize/blanks.py`` folds, and the worst case for that fold
(``pasted``: every line pasted so). Each
contender runs as a child
(``python -m dllogscan FILE --format json --prefilter ENGINE``, start-up included), the runs
interleaved so background load hits each alike; the figure is the median wall time and the
median CPU time of the child. ``--base`` times a second checkout (a ``git worktree`` of another
commit) the same way, in the same run. It fails (exit 1) when the contenders' verdicts differ.
Results go to ``bench/RESULTS.md`` (block ``nearmiss-bench``).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import results  # noqa: E402
from scan_bench import machine, parse_size, run_child, write_keywords  # noqa: E402
from tests.hostile.test_throughput import BUS, nginx_log  # noqa: E402

WINDOWS_LINES = (
    "Epoch 3:  41%|####      | {n}/5000 [02:{s:02d}<03:10, 12.1it/s, loss=0.{n}]",
    '  File "C:\\Users\\me\\anaconda3\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", line {n}, in _next_data',
    "C:\\Users\\me\\anaconda3\\lib\\site-packages\\torchvision\\io\\image.py:13: UserWarning: Failed to load image Python extension",
    "UserWarning: on Windows, DataLoader workers start with spawn and re-import the main module ({n})",
    "Windows fatal exception: code 0x{n:x} (handled)",
    "OS: Microsoft Windows 10 Pro",
)


def windows_log(size: int) -> bytes:
    """A Windows job's log of ``size`` bytes: the lines above in turn (the environment report's
    line once in 600), numbers varying so no two neighbours are the same line."""
    out, total, n = [], 0, 0
    while total < size:
        n += 1
        line = WINDOWS_LINES[-1] if n % 600 == 0 else WINDOWS_LINES[n % (len(WINDOWS_LINES) - 1)].format(n=n, s=n % 60)
        out.append(line)
        total += len(line) + 1
    return ("\n".join(out) + "\n").encode()


UNICODE_LINES = (
    "Epoch 3:  41%|████▏     | {n}/5000 [02:{s:02d}<03:10, 12.1it/s, loss=0.{n}]",
    "│ /opt/conda/lib/python3.11/site-packages/torch/utils/data/dataloader.py:{n} in _next_data  │",
    "[2026-11-30 06:00:{s:02d}] 训练步骤 {n}：损失 0.{n}，学习率 3e-4 “warmup” — ok",
    "INFO\u00a0trainer:\u00a0step\u00a0{n}\u200b done\u3000(pasted)",
)


def unicode_log(size: int, every: int = 50) -> bytes:
    """A log in Unicode of ``size`` bytes: the first three lines above in turn, the pasted one
    (no-break, zero-width and ideographic spaces) once in ``every`` (1: every line)."""
    out, total, n = [], 0, 0
    while total < size:
        n += 1
        line = (UNICODE_LINES[-1] if n % every == 0 else UNICODE_LINES[n % 3]).format(n=n, s=n % 60).encode()
        out.append(line)
        total += len(line) + 1
    return b"\n".join(out) + b"\n"


LOGS = {
    "same-line": lambda size: nginx_log(size, False),
    "timestamps": lambda size: nginx_log(size, True),
    "bus": lambda size: BUS.encode() * (size // len(BUS)),
    "windows": windows_log,
    "unicode": unicode_log,
    "pasted": lambda size: unicode_log(size, every=1),
}


def verdicts(out: Path) -> list:
    data = json.loads(out.read_text())
    return [(d["class"], d["subclass"], [e["line"] for e in d["evidence"]]) for d in data["diagnoses"]]


Command = Callable[[Path], list[str]]


def contenders(engines: list[str], base: Path | None, keywords: Path) -> dict[str, tuple[Command, Path]]:
    """Each contender's command for a log, and the checkout it runs in."""
    found: dict[str, tuple[Command, Path]] = {"grep": (lambda log: ["grep", "-c", "-F", "-f", str(keywords), str(log)], ROOT)}
    for tree, name in ((ROOT, "this"), (base, "base")):
        if tree is None:
            continue
        for engine in engines:
            found[f"{name} {engine}"] = (
                lambda log, e=engine: [sys.executable, "-m", "dllogscan", str(log), "--format", "json", "--prefilter", e], tree)
    return found


def bench(log: Path, who: dict, repeat: int) -> dict:
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in who}
    found: dict[str, list] = {}
    for _ in range(repeat):
        for name, (command, tree) in who.items():
            out = OUT / f"{log.stem}.{name.replace(' ', '-')}.out"
            wall, usage, code = run_child(command(log), out, tree, cwd=tree)
            cpu = usage.ru_utime + usage.ru_stime
            if name != "grep":
                if code not in (0, 1):
                    raise SystemExit(f"{name} failed with exit {code} on {log}")
                found.setdefault(name, verdicts(out))
            runs[name].append((wall, cpu))
    size_mb = log.stat().st_size / 1e6
    res = {name: {"wall": statistics.median(w for w, _ in r), "cpu": statistics.median(c for _, c in r)}
           for name, r in runs.items()}
    for r in res.values():
        r["mbps"] = size_mb / r["wall"]
    return {"file": log.name, "size_mb": size_mb, "res": res, "found": found}


def report(args, rows: list[dict], who: dict, base_rev: str | None) -> str:
    names = [n for n in who if n != "grep"]
    lines = [f"Command: `python bench/nearmiss_bench.py --size {args.size} --repeat {args.repeat}"
             + (" --base <worktree>`" if args.base else "`") + f" ({machine()}).",
             f"This tree: {rev(ROOT)}" + (f"; base: {base_rev}" if base_rev else "") + ". Median of "
             f"{args.repeat} interleaved runs of each child, start-up included; the ratio is the "
             "child's wall time over `grep -c -F -f <keywords>`'s on the same file in the same run.", "",
             "| log | grep -F: wall | " + " | ".join(f"{n}: wall / CPU / MB/s / x grep" for n in names) + " |",
             "|---|---:|" + "---:|" * len(names)]
    for row in rows:
        grep = row["res"]["grep"]["wall"]
        cells = [f"{row['res'][n]['wall']:.2f} s / {row['res'][n]['cpu']:.2f} s / {row['res'][n]['mbps']:.0f} / "
                 f"{row['res'][n]['wall'] / grep:.0f}x" for n in names]
        lines.append(f"| {row['file']} ({row['size_mb']:.0f} MB) | {grep:.3f} s | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rev(tree: Path) -> str:
    proc = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return proc.stdout.strip() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="20M", help="each log's size: 8M, 20M ... (default 20M)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--engines", default="ahocorasick,hyperscan", help="prefilter engines to time (comma-separated)")
    ap.add_argument("--base", type=Path, help="another checkout to time the same way (e.g. a git worktree)")
    ap.add_argument("--results", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("--logs", default=",".join(LOGS), help=f"which logs (comma-separated; default all: {', '.join(LOGS)})")
    args = ap.parse_args()
    size = parse_size(args.size)
    OUT.mkdir(exist_ok=True)
    who = contenders([e for e in args.engines.split(",") if e], args.base, write_keywords(OUT / "keywords.txt"))
    rows = []
    kinds = [k for k in args.logs.split(",") if k]
    if unknown := [k for k in kinds if k not in LOGS]:
        ap.error(f"unknown log {', '.join(unknown)}: one of {', '.join(LOGS)}")
    for kind in kinds:
        make = LOGS[kind]
        log = OUT / f"nearmiss-{kind}-{args.size}.log"
        if not log.exists() or log.stat().st_size < size * 0.99:
            log.write_bytes(make(size))
        rows.append(bench(log, who, args.repeat))
    text = report(args, rows, who, rev(args.base) if args.base else None)
    results.write_block(args.results, "nearmiss-bench", text)
    print(text)
    problems = [f"{row['file']}: verdicts differ: {row['found']}" for row in rows
                if len({json.dumps(v) for v in row["found"].values()}) > 1]
    for p in problems:
        print("FAIL:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
