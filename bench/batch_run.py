"""One measured batch run for ``bench/batch_bench.py``: ``run_batch`` into a JSONL file, as
``dllogscan batch PATH --format jsonl`` does, without the CLI's typer start-up.

    python bench/batch_run.py OUT.jsonl --jobs 2 --prefilter python PATH...

Prints ``rows found`` on standard output.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dllogscan.batch import Config, run_batch  # noqa: E402
from dllogscan.batch.writers import Writer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--prefilter", default="auto")
    args = ap.parse_args()
    writer = Writer("jsonl", args.out)
    try:
        stats = run_batch(args.paths, writer.write, Config(engine=args.prefilter), jobs=args.jobs, progress=False)
    finally:
        writer.close()
    print(stats.sources, stats.found)


if __name__ == "__main__":
    main()
