"""A reader study: how well a careful reader does with a thread's text alone.

    python bench/reader_study.py             # the readers' figures (seconds)
    python bench/reader_study.py --with-cv   # and dllogscan's out-of-fold verdicts on the same threads (~4 min)

``bench/reader_study/readers.jsonl`` holds 300 threads of ``corpus/threads`` (drawn at random per
class with a fixed seed: A 25, B 45, C 25, D 40, E 65, none 100, unambiguous only; four of the
look-alikes were labelled E later by the rules `other-framework-loader` and `slow-start`), each labelled
blind by one of three readers who saw only the thread's text (under an opaque id) and the field
guide — not the label, not ``why`` (the maintainer's answer that decided the label), not the file
name — following ``bench/reader_study/BRIEF.md``. Each row: the thread's stem, the reader, the
label read, and whether the reader was sure. The readers were language-model helpers; the threads
are public, so a reader may have met one before: read their figures as an upper estimate of what
the text holds.

Figures are reweighted to the corpus's class shares (each sampled thread stands for the threads of
its class), so precision and macro-F1 are those of the whole corpus, not of the stratified sample.
Two readings: the reader's label as given, and "abstain when unsure" (an unsure label counts as
``none``), the two ends of a reader's trade between recall and false alarms.

A second draw (session 49, ``--study bench/reader_study/readers-s49.jsonl``): 280 threads of the
corpus with batch 24 (A 40, B 40, C 40, D 40, E 60, none 60, unambiguous only, seed 4949; 42 of them
also in the first draw), read by four other helpers given the field guide and the labelling rules
of ``corpus/threads/README.md`` (a reader's "sure" there: the text alone decides the class).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dllogscan.evaluation.corpus import load_items  # noqa: E402

STUDY = ROOT / "bench" / "reader_study" / "readers.jsonl"
SECOND = ROOT / "bench" / "reader_study" / "readers-s49.jsonl"
CLASSES = ("A", "B", "C", "D", "E")
ROWS = CLASSES + ("none",)


def load_study(path: Path = STUDY) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def truths() -> dict[str, str]:
    """Stem -> label of every scored thread (ambiguous ones left out)."""
    return {i.path.name[:-3]: (i.label if i.label in CLASSES else "none")
            for i in load_items() if i.kind == "thread" and not i.ambiguous}


def figures(rows: list[tuple[str, str]], weights: dict[str, float]) -> dict:
    """Weighted per-class precision / recall / F1, macro-F1 over A-E, least recall, false alarms."""
    per = {}
    for c in ROWS:
        tp = sum(weights[t] for t, p in rows if t == c and p == c)
        fp = sum(weights[t] for t, p in rows if t != c and p == c)
        fn = sum(weights[t] for t, p in rows if t == c and p != c)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        per[c] = (prec, rec, 2 * prec * rec / (prec + rec) if prec + rec else 0.0)
    negatives = [p for t, p in rows if t == "none"]
    return {"macro_f1": sum(per[c][2] for c in CLASSES) / len(CLASSES),
            "min_recall": min(per[c][1] for c in CLASSES),
            "false_alarms": sum(p != "none" for p in negatives) / len(negatives) if negatives else 0.0,
            "per_class": per}


def show(name: str, f: dict) -> str:
    cells = " ".join(f"{c} {f['per_class'][c][0]:.2f}/{f['per_class'][c][1]:.2f}" for c in ROWS)
    return (f"{name:34s} macro-F1 {f['macro_f1']:.3f}  min recall {f['min_recall']:.3f}  "
            f"false alarms {f['false_alarms']:.1%}   P/R: {cells}")


def cv_verdicts(stems: set[str]) -> dict[str, str]:
    """dllogscan's combined verdict on each thread, out of fold (``dllogscan eval``'s own CV)."""
    from dllogscan.evaluation import evaluate as ev

    got: dict[str, str] = {}
    original = ev.predict_with_subclass  # what the evaluation's loop calls for each item

    def recording(item, system, model):
        out = original(item, system, model)
        if item.path.name[:-3] in stems and system == "combined":
            got[item.path.name[:-3]] = out[0]
        return out

    ev.predict_with_subclass = recording
    try:
        ev.evaluate(systems=("combined",))
    finally:
        ev.predict_with_subclass = original
    missing = stems - set(got)
    if missing:
        raise RuntimeError(f"the evaluation scored {len(missing)} of the study's threads nowhere: {sorted(missing)[:3]}")
    return got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-cv", action="store_true", help="also score dllogscan's out-of-fold verdicts")
    parser.add_argument("--study", type=Path, default=STUDY, help=f"the readers' rows (default {STUDY.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    study = load_study(args.study)
    truth = truths()
    missing = [r["stem"] for r in study if r["stem"] not in truth]
    if missing:
        print(f"{len(missing)} threads of the study are no longer scored in corpus/threads: {missing[:3]}", file=sys.stderr)
        study = [r for r in study if r["stem"] in truth]
    full = Counter(truth.values())
    sample = Counter(truth[r["stem"]] for r in study)
    weights = {c: full[c] / sample[c] for c in sample}
    print(f"{len(study)} threads ({', '.join(f'{c} {sample[c]}' for c in ROWS)}), reweighted to corpus/threads "
          f"({', '.join(f'{c} {full[c]}' for c in ROWS)}); readers sure of {sum(r['sure'] for r in study)}")
    print(show("readers, label as given", figures([(truth[r["stem"]], r["label"]) for r in study], weights)))
    print(show("readers, abstaining when unsure", figures(
        [(truth[r["stem"]], r["label"] if r["sure"] else "none") for r in study], weights)))
    sure = [r for r in study if r["sure"]]
    print(f"readers right when sure: {sum(r['label'] == truth[r['stem']] for r in sure)} of {len(sure)}; "
          f"when unsure: {sum(r['label'] == truth[r['stem']] for r in study if not r['sure'])} "
          f"of {len(study) - len(sure)}")
    if args.with_cv:
        got = cv_verdicts({r["stem"] for r in study})
        print(show("dllogscan, out of fold", figures([(truth[r["stem"]], got[r["stem"]]) for r in study], weights)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
