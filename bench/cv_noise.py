"""How much the threads' headline moves with the draw of folds alone: repeated grouped CV.

    python bench/cv_noise.py                    # draws 0-4 (about 6 min each on 2 cores)
    python bench/cv_noise.py --draws 0 1 2      # some draws; run two shells for two cores
    python bench/cv_noise.py --summary a.md b.md  # mean / spread of rows printed before

Draw 0 is ``dllogscan eval``'s own assignment of repositories and forums to folds; draw n > 0
orders the groups of equal size by another hash (``group_fold``'s salt), which gives folds as
balanced and as grouped (no repository on both sides) but with other neighbours. Everything
else stays: the corpus, the model, the nested calibration, the thresholds' search. The spread
of the combined system's figures over the draws is the part of a before / after difference that
the folds alone explain; a change smaller than it is not shown by one run.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import Counter
from itertools import permutations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dllogscan.evaluation.corpus import Item, folds_of, load_items  # noqa: E402
from dllogscan.evaluation.evaluate import CLASSES, FOLDS, evaluate  # noqa: E402

HEADER = ("| draw | threads in another fold than draw 0 | macro-F1 A-E | least recall | "
          + " | ".join(f"{c} recall" for c in CLASSES) + " | false alarms on none | seconds |")
ROW = re.compile(r"^\| (\d+) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| (.*) \| ([0-9.]+) % \((\d+)/(\d+)\) \| (\d+) \|$")


def salt_of(draw: int) -> str:
    """The salt of a draw: none for draw 0, the shipped folds."""
    return "" if draw == 0 else f"draw{draw}:"


def moved(items: list[Item], draw: int) -> int:
    """How many threads draw ``draw`` puts in another fold than draw 0, under the numbering of its
    folds that keeps most threads in place (a fold's number means nothing, its members do)."""
    base, other = folds_of(items, FOLDS), folds_of(items, FOLDS, salt_of(draw))
    shared = Counter((b, o) for i, b, o in zip(items, base, other) if i.kind == "thread")
    kept = max(sum(shared[(b, o)] for o, b in enumerate(order)) for order in permutations(range(FOLDS)))
    return sum(shared.values()) - kept


def run(draw: int, items: list[Item]) -> str:
    """One draw's row of the table (``items``: the corpus, loaded once for every draw's count of
    threads moved; ``evaluate`` loads its own)."""
    t0 = time.time()
    scores = evaluate(systems=("combined",), salt=salt_of(draw))["combined"]["threads"]
    per = scores.per_class()
    alarms, negatives = scores.false_alarms()
    recalls = " | ".join(f"{per[c][1]:.3f}" for c in CLASSES)
    return (f"| {draw} | {moved(items, draw)} | {scores.macro_f1():.3f} | {scores.min_recall():.3f} | {recalls} | "
            f"{100 * alarms / negatives:.1f} % ({alarms}/{negatives}) | {time.time() - t0:.0f} |")


def summary(rows: list[str]) -> list[str]:
    """Mean, standard deviation and range of each figure over the rows."""
    parsed = [m for m in (ROW.match(r) for r in rows) if m]
    if len(parsed) < 2:
        return ["(fewer than two draws: no spread)"]
    columns = {"macro-F1 A-E": [float(m[3]) for m in parsed], "least recall": [float(m[4]) for m in parsed]}
    for ci, c in enumerate(CLASSES):
        columns[f"{c} recall"] = [float(m[5].split(" | ")[ci]) for m in parsed]
    columns["false alarms on none (%)"] = [100 * int(m[7]) / int(m[8]) for m in parsed]
    out = [f"Over {len(parsed)} draws of folds:", "", "| figure | mean | sd | min | max |", "|---|---|---|---|---|"]
    for name, values in columns.items():
        out.append(f"| {name} | {statistics.mean(values):.3f} | {statistics.stdev(values):.3f} | "
                   f"{min(values):.3f} | {max(values):.3f} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--summary", type=Path, nargs="+", metavar="FILE",
                        help="files holding rows this script printed: print their spread and stop")
    args = parser.parse_args(argv)
    if args.summary:
        rows = [line.strip() for f in args.summary for line in f.read_text(encoding="utf-8").splitlines()]
        print("\n".join(summary(rows)))
        return 0
    if any(d < 0 for d in args.draws):
        parser.error("a draw is a number >= 0")
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    rows, items = [], load_items()
    for draw in args.draws:
        rows.append(run(draw, items))
        print(rows[-1], flush=True)
    print()
    print("\n".join(summary(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
