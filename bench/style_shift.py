"""Does the writer's voice move the verdict? Threads scored as written, and rewritten first-person.

    python bench/style_shift.py            # about 5 min: one model per fold, as `dllogscan eval`

The prose of corpus/threads is our third-person narration ("The reporter runs ..., a commenter
posts ..."), while what users paste into `dllogscan paste` (and the independent set that judges the
project) is written by the people who hit the failure, in their own voice. The classifier learns
from our narration, so its cross-validated figures could flatter it on other writers' text.

`bench/style_shift/` holds 1031 threads of the corpus (A 15, B 41, C 105, D 133, E 395, none 342:
every thread of C, D and E scored when they were made, the rest drawn at random; written labelling
rules later moved 10 look-alikes to E or B and 2 hangs to none, and the 9 threads they moved into D
and E from outside the draw have none) rewritten in the first person by
helpers who saw only the text (no label, no `why`): every code block, traceback and log line kept
byte for byte, the prose reworded with no fact added or dropped, other people's posts as comments
of their own (its README says how).
Each thread, as written and as rewritten, is scored by the model of the fold that holds it out
(the grouped folds of `dllogscan eval`, trained on the whole of the other folds). It prints one
table row per system and version, then every verdict that the rewrite changed.
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REWRITES = ROOT / "bench" / "style_shift"
sys.path.insert(0, str(ROOT))

from dllogscan.evaluation.corpus import Item, folds_of, load_items  # noqa: E402
from dllogscan.evaluation.evaluate import CLASSES, FOLDS, Scores, predict  # noqa: E402

SYSTEMS = ("classifier", "combined")
FENCE = re.compile(r"```.*?```", re.S)


def rewrite_of(item: Item) -> Path | None:
    """The first-person rewrite of a thread, if one was made."""
    path = REWRITES / f"{item.path.stem}.md"
    return path if item.kind == "thread" and path.exists() else None


def code_blocks(text: str) -> list[str]:
    """The fenced blocks of a text, in order: what a rewrite must keep byte for byte."""
    return FENCE.findall(text)


def score(items: list[Item], fold_of: list[int]) -> tuple[dict[str, dict[str, Scores]], list[str]]:
    """{system: {"written" | "rewritten": Scores}} and a line per verdict the rewrite changed."""
    from dllogscan.evaluation.train import train_items

    results = {s: {"written": Scores(), "rewritten": Scores()} for s in SYSTEMS}
    changed = []
    for fold in sorted(set(fold_of)):
        test = [i for i, f in zip(items, fold_of) if f == fold and not i.ambiguous and rewrite_of(i)]
        if not test:
            continue
        model = train_items([i for i, f in zip(items, fold_of) if f != fold])
        for item in test:
            truth = item.label if item.label in CLASSES else "none"
            other = dataclasses.replace(item, path=rewrite_of(item))
            for system in SYSTEMS:
                (got, conf), (got2, conf2) = predict(item, system, model), predict(other, system, model)
                results[system]["written"].add(truth, got, str(item.path), conf)
                results[system]["rewritten"].add(truth, got2, str(other.path), conf2)
                if got != got2:
                    mark = "+" if got2 == truth else "-" if got == truth else "~"
                    changed.append(f"{mark} {system}: {item.path.stem} (truth {truth}): {got} -> {got2}")
    return results, changed


def table(results: dict[str, dict[str, Scores]]) -> list[str]:
    """Markdown: per system and version, macro-F1, least recall, false alarms, recall per class."""
    out = ["| system | text | items | macro-F1 A-E | min recall | false alarms on none | "
           + " | ".join(f"{c} recall" for c in CLASSES) + " |",
           "|---|---|---|---|---|---|" + "---|" * len(CLASSES)]
    for system, versions in results.items():
        for version, sc in versions.items():
            per = sc.per_class()
            out.append(f"| {system} | {version} | {len(sc.pairs)} | {sc.macro_f1():.3f} | {sc.min_recall():.2f} | "
                       f"{sc.false_alarm_text()} | "
                       + " | ".join(f"{per[c][1]:.2f}" for c in CLASSES) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    items = load_items()
    fold_of = folds_of(items, FOLDS)
    paired = sum(1 for i in items if not i.ambiguous and rewrite_of(i))
    if not paired:
        print(f"Error: no rewrite in {REWRITES} matches a scored thread", file=sys.stderr)
        return 1
    t0 = time.time()
    results, changed = score(items, fold_of)
    print("\n".join(table(results)))
    print(f"\nVerdicts the rewrite changed ({len(changed)}; + right now, - wrong now, ~ wrong both ways):")
    print("\n".join(f"- {line}" for line in changed) or "- none")
    print(f"\n{paired} threads, {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
