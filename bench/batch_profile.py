"""Where one batch worker's time goes: cProfile over a directory of job logs scanned in this
process (``iter_chunk``, chunks of 128 files, as a pool worker would), then the parent's share
(the JSONL writer) and the inter-process traffic (pickling the records) timed on the records.

    python bench/batch_profile.py bench/out/batch-v1-mixed-3000x100000/logs --prefilter python

Prints a markdown table: per-file stages against scanning proper.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pickle
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dllogscan.batch import walk  # noqa: E402
from dllogscan.batch.worker import Config, database, process_chunk  # noqa: E402
from dllogscan.batch.writers import Writer  # noqa: E402

STAGES = [  # (label, file suffix, function name): cumulative time of each
    ("one source, all told (`worker.scan_stream`)", "batch/worker.py", "scan_stream"),
    ("open, sniff, scan (`pipeline.scan_source`)", "pipeline/runner.py", "scan_source"),
    ("scanning proper (`Scanner.scan_rounds`)", "scan/scanner.py", "scan_rounds"),
    ("  prefilter passes (`positions`)", "", "positions"),
    ("  keyword lines matched (`_match_line`)", "batch/probe.py", "_match_line"),
    ("  probe re-planning (`probe._plan`)", "scan/probe.py", "_plan"),
    ("sniff (binary check of the first 8 KB)", "sources/streams.py", "sniff"),
    ("correlate hits", "correlate/candidates.py", "correlate"),
    ("classifier on weak verdicts (`_with_classifier`, incl. its imports)", "pipeline/runner.py", "_with_classifier"),
    ("advise (fixes)", "advise/fixes.py", "advise"),
    ("layout detection (`layouts.from_content` + `from_name`)", "batch/layouts.py", "from_content"),
    ("  `layouts.from_name`", "batch/layouts.py", "from_name"),
]


def cumulative(stats: pstats.Stats, suffix: str, name: str) -> float:
    return sum(v[3] for (path, _, func), v in stats.stats.items()  # type: ignore[attr-defined]
               if func == name and path.endswith(suffix))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--prefilter", default="auto")
    ap.add_argument("--files", type=int, default=0, help="only the first N files")
    args = ap.parse_args()
    paths = [p for p, _ in walk.expand([args.directory])]
    paths = paths[: args.files] if args.files else paths
    config = Config(engine=args.prefilter)
    database(config)
    prof = cProfile.Profile()
    start = time.process_time()
    prof.enable()
    records = []
    for i in range(0, len(paths), walk.CHUNK_FILES):
        records += process_chunk(paths[i: i + walk.CHUNK_FILES], config)
    prof.disable()
    cpu = time.process_time() - start
    stats = pstats.Stats(prof)
    total = cumulative(stats, "batch/worker.py", "process_chunk")
    start = time.perf_counter()
    blob = pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
    pickle.loads(blob)
    ipc = time.perf_counter() - start
    start = time.perf_counter()
    writer = Writer("jsonl", stream=io.StringIO())
    for rec in records:
        writer.write(rec)
    write = time.perf_counter() - start
    print(f"{len(paths)} files, prefilter {args.prefilter}: {total:.2f} s under the profiler ({cpu:.2f} s CPU), "
          f"{1000 * total / len(paths):.2f} ms per file\n")
    print("| stage | profiled s | share |\n|---|---:|---:|")
    for label, suffix, name in STAGES:
        t = cumulative(stats, suffix, name)
        print(f"| {label} | {t:.2f} | {100 * t / total:.0f} % |")
    print(f"| parent: JSONL writer (not profiled, wall) | {write:.2f} | — |")
    print(f"| inter-process: pickling the records both ways ({len(blob) / 1e6:.1f} MB; wall) | {ipc:.2f} | — |")
    print("\nTop functions by own time:\n")
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(12)
    print("\n".join("    " + line for line in out.getvalue().splitlines() if line.strip()))


if __name__ == "__main__":
    main()
