"""Could a learned rule combine the evidence better than combine.py's hand-made one?

    python bench/stacking.py               # about 5 min: one model per fold, as `dllogscan eval`
    python bench/stacking.py --evidence ev.json    # keep the evidence (or read it back: seconds)

`dllogscan/classify/combine.py` joins the signature diagnoses, the text classifier's
probabilities and the prose sentences by rules (a strong hit stands alone, a weak one has its odds
scaled by the classifier's class-vs-none ratio, thresholds per class, the loader and relevance
gates, the scope rules). This bench asks whether a model fitted on the same evidence would do better.
For every scored thread of corpus/threads it gathers, with the model of the fold that holds the
thread out (the grouped folds of `dllogscan eval`): the classifier's probability of each class,
each class's strongest signature diagnosis and whether it is canonical, which prose sentences hold,
the gates, the count of progress lines and of lines, and the verdict the shipped rules give.

It prints two tables:

- **the classifier's veto of weak signature hits**, per signature: how often a hit below STRONG in a
  thread of its class was kept or lost, and in a look-alike set aside or kept (a false alarm);
- **learned combiners**, each cross-validated over the same folds (fitted on the other folds'
  evidence), at a sweep of thresholds on its top class's probability (below it: nothing found),
  and with a threshold per class chosen, fold by fold, on the other folds alone (nested) for at most
  5 % false alarms, beside the shipped rules' one operating point. A combiner that does better shows a row with
  higher macro-F1 at no more false alarms.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dllogscan.evaluation.evaluate import CLASSES, FOLDS, Scores, predict  # noqa: E402

FAILURES = CLASSES  # A-E: the evaluation's classes; anything else is "none"
LABELS = CLASSES + ("none",)
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7)
BUDGET = 0.05  # the ceiling on false alarms, for the per-class thresholds


def gather(root: Path | None = None) -> list[dict]:
    """The evidence of every scored thread, each seen by the model of the fold that holds it out."""
    from dllogscan import api
    from dllogscan.classify.combine import blocked_classes, class_probability
    from dllogscan.classify.digest import digest_lines
    from dllogscan.classify.labels import split_label
    from dllogscan.classify.prose import load_rules, loader_text
    from dllogscan.correlate.candidates import PROGRESS_RE, RELEVANT
    from dllogscan.evaluation.corpus import folds_of, load_items
    from dllogscan.evaluation.train import train_items
    from dllogscan.pipeline import runner as pipeline

    items = load_items(root)
    fold_of = folds_of(items, FOLDS)
    scanner, rules, rows = pipeline.get_scanner(), load_rules(), []
    for fold in range(FOLDS):
        test = [i for i, f in zip(items, fold_of) if f == fold and i.kind == "thread" and not i.ambiguous]
        model = train_items([i for i, f in zip(items, fold_of) if f != fold])
        for item in test:
            source = api.as_source(item.path, None, None)
            out, _ = pipeline.scan_source(source, scanner)
            if out is None:
                continue
            weak, _ = pipeline.assess(out, scanner)
            lines = digest_lines(out)
            texts = [t for _, t in lines]
            pred = model.predict(["\n".join(texts)])[0] if lines else {"none": 1.0}
            rows.append({
                "thread": item.path.name, "fold": fold, "truth": item.label if item.label in FAILURES else "none",
                "probs": {c: class_probability(pred, c) for c in LABELS},
                "signatures": [{"class": d.cls, "confidence": d.confidence, "canonical": d.canonical,
                                "ids": list(d.signatures)} for d in weak],
                "prose": sorted({split_label(r.label)[0] for r in rules if r.sentence(lines)}),
                "relevant": any(RELEVANT.search(t) for t in texts),
                "loader": any(loader_text().search(t) for t in texts),
                "e_blocked": "E" in blocked_classes(texts),
                "progress": sum(1 for t in texts if PROGRESS_RE.search(t)), "lines": len(lines),
                "verdict": predict(item, "combined", model)[0]})
        print(f"fold {fold}: {len(rows)} threads", file=sys.stderr, flush=True)
    return rows


def features(row: dict, with_verdict: bool = False) -> list[float]:
    """One thread's evidence as numbers (``with_verdict``: the shipped rules' verdict too)."""
    out = [math.log(row["probs"].get(c, 0.0) + 1e-4) for c in LABELS]
    for c in FAILURES:
        hits = [s for s in row["signatures"] if s["class"] == c]
        out.append(max((s["confidence"] for s in hits), default=0.0))
        out.append(float(any(s["canonical"] and s["confidence"] > 0 for s in hits)))
    out += [float(c in row["prose"]) for c in FAILURES]
    out += [float(row[k]) for k in ("relevant", "loader", "e_blocked")]
    out += [math.log1p(row["progress"]), math.log1p(row["lines"])]
    if with_verdict:
        out += [float(row["verdict"] == c) for c in LABELS]
    return out


def cross_validated(rows: Sequence[dict], make: Callable, with_verdict: bool) -> list[dict[str, float]]:
    """Each thread's class probabilities from a combiner fitted on the other folds' threads."""
    import numpy as np

    x = np.array([features(r, with_verdict) for r in rows])
    y = np.array([r["truth"] for r in rows])
    fold = np.array([r["fold"] for r in rows])
    out: list[dict[str, float]] = [{} for _ in rows]
    for f in sorted(set(fold.tolist())):
        train, test = fold != f, np.flatnonzero(fold == f)
        model = make().fit(x[train], y[train])
        for i, p in zip(test, model.predict_proba(x[test])):
            out[i] = dict(zip(model.classes_, p.tolist()))
    return out


def per_class_verdicts(rows: Sequence[dict], make: Callable, with_verdict: bool, budget: float) -> list[str]:
    """Verdicts with a threshold per class, chosen for each fold on the other folds' own
    out-of-fold probabilities (nested: the scored fold is never seen) by the coordinate ascent that
    chooses the classifier's thresholds (``calibrate.choose_thresholds``, within ``budget`` false
    alarms), on a wider grid, as a combiner's probabilities are not the classifier's."""
    import numpy as np

    from dllogscan.classify import calibrate

    grid = tuple(round(0.2 + 0.05 * i, 2) for i in range(16))
    out = ["none"] * len(rows)
    saved, calibrate.GRID = calibrate.GRID, grid
    try:
        for f in sorted({r["fold"] for r in rows}):
            train = [r for r in rows if r["fold"] != f]
            inner = cross_validated(train, make, with_verdict)
            per_class = {c: np.array([p.get(c, 0.0) for p in inner]) for c in LABELS}
            thresholds = calibrate.choose_thresholds(per_class, [r["truth"] for r in train], ["none"] * len(train),
                                                     max_false_alarms=budget)
            model = make().fit(np.array([features(r, with_verdict) for r in train]), [r["truth"] for r in train])
            test = [i for i, r in enumerate(rows) if r["fold"] == f]
            probs = model.predict_proba(np.array([features(rows[i], with_verdict) for i in test]))
            columns = {c: probs[:, list(model.classes_).index(c)] if c in model.classes_ else np.zeros(len(test))
                       for c in LABELS}
            for i, verdict in zip(test, calibrate.verdicts(columns, thresholds)):
                out[i] = verdict
    finally:
        calibrate.GRID = saved
    return out


def decide(probs: dict[str, float], threshold: float) -> str:
    """The top failure class when its probability clears ``threshold``; else nothing found."""
    best = max(FAILURES, key=lambda c: probs.get(c, 0.0))
    return best if probs.get(best, 0.0) >= threshold else "none"


def combiner_table(rows: Sequence[dict], combiners: dict[str, tuple[Callable, bool]],
                   thresholds: Sequence[float] = THRESHOLDS, budget: float | None = BUDGET) -> list[str]:
    out = ["| combiner | threshold | macro-F1 | least recall | false alarms |", "|---|---|---|---|---|"]

    def row(name: str, threshold: str, pred: Sequence[str]) -> str:
        scores = Scores()
        for r, p in zip(rows, pred):
            scores.add(r["truth"], p, r["thread"], None)
        return (f"| {name} | {threshold} | {scores.macro_f1():.3f} | {scores.min_recall():.3f} | "
                f"{scores.false_alarm_text()} |")

    out.append(row("the shipped rules (combine.py)", "-", [r["verdict"] for r in rows]))
    for name, (make, with_verdict) in combiners.items():
        probs = cross_validated(rows, make, with_verdict)
        out += [row(name, f"{t:.1f}", [decide(p, t) for p in probs]) for t in thresholds]
        if budget is not None:
            out.append(row(name, f"per class ({budget:.0%} budget)", per_class_verdicts(rows, make, with_verdict, budget)))
    return out


def veto_table(rows: Sequence[dict], strong: float) -> list[str]:
    """Per signature, its hits below ``strong`` (the classifier weighs in): in threads of its class
    kept / lost, in look-alikes set aside / kept."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        for s in r["signatures"]:
            if not 0 < s["confidence"] < strong:
                continue
            kept = r["verdict"] == s["class"]
            for sig in s["ids"]:
                if r["truth"] == s["class"]:
                    counts[sig][0 if kept else 1] += 1
                elif r["truth"] == "none":
                    counts[sig][3 if kept else 2] += 1
    out = ["| signature | its class: kept | its class: lost | look-alike: set aside | look-alike: kept |",
           "|---|---|---|---|---|"]
    for sig, (a, b, c, d) in sorted(counts.items(), key=lambda kv: (-kv[1][1], -sum(kv[1]), kv[0])):
        out.append(f"| {sig} | {a} | {b} | {c} | {d} |")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--evidence", type=Path, help="a JSON file: read the evidence from it if it exists, "
                        "else gather it and write it there")
    args = parser.parse_args(argv)
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    from dllogscan.classify.combine import STRONG

    started = time.time()
    if args.evidence and args.evidence.exists():
        rows = json.loads(args.evidence.read_text(encoding="utf-8"))
    else:
        rows = gather()
        if args.evidence:
            args.evidence.write_text(json.dumps(rows), encoding="utf-8")
    combiners = {
        "logistic regression on the evidence": (lambda: LogisticRegression(max_iter=3000), False),
        "logistic regression on the evidence and the rules' verdict": (lambda: LogisticRegression(max_iter=3000), True),
        "gradient-boosted trees on the evidence": (lambda: HistGradientBoostingClassifier(
            max_iter=200, learning_rate=0.05, max_leaf_nodes=15, l2_regularization=1.0, random_state=0), False),
    }
    print(f"{len(rows)} scored threads of corpus/threads, grouped {FOLDS}-fold\n")
    print(f"The classifier's veto of signature hits below {STRONG:.0%}:\n")
    print("\n".join(veto_table(rows, STRONG)))
    print("\nLearned combiners (each fitted on the other folds' evidence):\n")
    print("\n".join(combiner_table(rows, combiners)))
    print(f"\n{time.time() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
