"""The cost of ``watch``'s look for the log's writers (``dllogscan/watch/writers.py``): a whole
pass over this machine's ``/proc``, and over a fake tree of many processes (directories of
symlinks and fdinfo files laid out as Linux lays them), with what one poll's budgeted part takes.

    python bench/writers_bench.py [--processes 3000] [--fds 20] [--repeats 20]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time
from pathlib import Path

from dllogscan.watch.writers import POLL_BUDGET_S, Finder


def timed(finder: Finder, budget: float, repeats: int) -> tuple[float, float]:
    """The median seconds of ``repeats`` looks of ``budget``, and how much of a pass one covers."""
    times, shares = [], []
    for _ in range(repeats):
        finder.left = []
        begun = time.perf_counter()
        finder.look(budget)
        times.append(time.perf_counter() - begun)
        total = len([n for n in os.listdir(finder.proc) if n.isdigit()]) or 1
        shares.append(1 - len(finder.left) / total)
    return statistics.median(times), statistics.median(shares)


def fake_tree(root: Path, processes: int, fds: int, target: Path) -> None:
    """``processes`` entries of ``fds`` descriptors each, all to other files but one."""
    other = root / "other.log"
    other.write_text("")
    for pid in range(1000, 1000 + processes):
        for part in ("fd", "fdinfo"):
            (root / "proc" / str(pid) / part).mkdir(parents=True)
        for n in range(fds):
            (root / "proc" / str(pid) / "fd" / str(n)).symlink_to(target if pid == 1000 + processes // 2 and n == 1
                                                                   else other)
            (root / "proc" / str(pid) / "fdinfo" / str(n)).write_text("pos:\t0\nflags:\t0102001\nmnt_id:\t27\n")
        (root / "proc" / str(pid) / "stat").write_text(f"{pid} (x) S " + "0 " * 18 + "100 0\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=3000)
    parser.add_argument("--fds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "train.log"
        log.write_text("")
        fds = sum(len(os.listdir(f"/proc/{p}/fd")) for p in os.listdir("/proc") if p.isdigit()
                  and os.access(f"/proc/{p}/fd", os.R_OK))
        whole, _ = timed(Finder(str(log)), math.inf, args.repeats)
        print(f"/proc here: {len([p for p in os.listdir('/proc') if p.isdigit()])} processes, {fds} readable "
              f"descriptors: a whole pass {whole * 1e3:.1f} ms (median of {args.repeats}); load "
              f"{os.getloadavg()[0]:.2f}")
        fake_tree(Path(tmp), args.processes, args.fds, log)
        finder = Finder(str(log), proc=Path(tmp) / "proc")
        whole, _ = timed(finder, math.inf, max(3, args.repeats // 4))
        part, share = timed(finder, POLL_BUDGET_S, args.repeats)
        print(f"fake tree: {args.processes} processes x {args.fds} descriptors: a whole pass {whole * 1e3:.0f} ms; "
              f"a poll's part (budget {POLL_BUDGET_S * 1e3:.0f} ms) {part * 1e3:.1f} ms, {share:.0%} of a pass, "
              f"so a pass takes {math.ceil(1 / share)} polls")


if __name__ == "__main__":
    main()
