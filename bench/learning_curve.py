"""How the threads' figures grow with the training threads: a learning curve on the grouped CV.

    python bench/learning_curve.py                      # shares 0.4 0.6 0.8 1.0 (1.5-3 min each)
    python bench/learning_curve.py --shares 0.5 1.0

Each share runs ``dllogscan eval``'s own cross-validation (``evaluate``, combined system only):
the same folds (grouped by repository or forum) and the same test items, which include the written
corpus, though only the threads' figures are shown. Only the training side shrinks: a share ``s`` keeps the
training threads of about ``s`` of the repositories and forums (chosen by a hash of the name, so a
smaller share is a subset of a larger one); the written reports, torch logs, near misses, signature
examples and symptom texts stay whole. The combined system is scored on the threads: macro-F1,
the least recall of a class, the false alarms on look-alikes. A curve that is still rising says that
more real threads would help; a flat one says the misses need evidence the texts do not hold.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dllogscan.evaluation.corpus import Item, folds_of, load_items  # noqa: E402
from dllogscan.evaluation.evaluate import FOLDS, evaluate  # noqa: E402


def kept(item: Item, share: float) -> bool:
    """Whether a training item stays at ``share``: non-thread items always; threads by group."""
    if item.kind != "thread" or share >= 1:
        return True
    return int(hashlib.sha1(item.group.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < share


def trained_threads(items: list[Item], fold_of: list[int], share: float) -> int:
    """How many training threads a fold holds at ``share``, on average over the folds."""
    return sum(sum(1 for i, f in zip(items, fold_of) if f != fold and i.kind == "thread" and kept(i, share))
               for fold in range(FOLDS)) // FOLDS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shares", type=float, nargs="+", default=[0.4, 0.6, 0.8, 1.0])
    args = parser.parse_args(argv)
    if not all(0 < s <= 1 for s in args.shares):
        parser.error("each share must lie in (0, 1]")
    items = load_items()
    fold_of = folds_of(items, FOLDS)
    print("| share of repositories | training threads per fold | macro-F1 A-E | min recall | "
          "E recall | false alarms on none | seconds |")
    print("|---|---|---|---|---|---|---|")
    for share in sorted(args.shares):
        t0 = time.time()
        scores = evaluate(systems=("combined",), train_filter=partial(kept, share=share))["combined"]["threads"]
        trained = trained_threads(items, fold_of, share)
        print(f"| {share:.2f} | {trained} | {scores.macro_f1():.3f} | {scores.min_recall():.3f} | "
              f"{scores.per_class()['E'][1]:.3f} | {scores.false_alarm_text()} | {time.time() - t0:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
