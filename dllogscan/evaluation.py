"""Accuracy on the held-out split: signatures alone, classifier alone, and combined.

Prediction for an item = the class of the top diagnosis, or ``none``. Per kind of input (logs,
reports) it reports per-class precision / recall / F1 and the confusion matrix; for near misses,
the false-alarm rate.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from . import api, pipeline
from .corpus import Item, load_items, split

CLASSES = ("A", "B", "C", "D", "E")
ROWS = CLASSES + ("none",)
SYSTEMS = ("signatures", "classifier", "combined")
THRESHOLDS = {"logs_macro_f1": 0.95, "reports_macro_f1": 0.85, "nearmiss_false_alarms": 0.05}


@dataclass
class Scores:
    """Predictions against truth for one system on one kind of input."""

    pairs: list[tuple[str, str, str]] = field(default_factory=list)  # (truth, predicted, path)

    def confusion(self) -> Counter:
        return Counter((t, p) for t, p, _ in self.pairs)

    def per_class(self) -> dict[str, tuple[float, float, float, int]]:
        conf = self.confusion()
        out = {}
        for c in ROWS:
            tp = conf[(c, c)]
            fp = sum(n for (t, p), n in conf.items() if p == c and t != c)
            fn = sum(n for (t, p), n in conf.items() if t == c and p != c)
            prec = tp / (tp + fp) if tp + fp else 0.0
            rec = tp / (tp + fn) if tp + fn else 0.0
            f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
            out[c] = (prec, rec, f1, tp + fn)
        return out

    def macro_f1(self) -> float:
        rows = [v for c, v in self.per_class().items() if c in CLASSES and v[3] > 0]
        return sum(v[2] for v in rows) / len(rows) if rows else 0.0

    def false_alarm_rate(self) -> float:
        negatives = [p for t, p, _ in self.pairs if t == "none"]
        return sum(p != "none" for p in negatives) / len(negatives) if negatives else 0.0


def predict(item: Item, system: str, model) -> str:
    """The class one system gives an item (``none`` when it finds nothing)."""
    source = api.as_source(item.path, None, None)
    scanner = pipeline.get_scanner()
    if system == "classifier":
        from .classify.combine import own_verdict
        from .classify.digest import digest_lines
        out, _ = pipeline.scan_source(source, scanner)
        lines = digest_lines(out) if out is not None else []
        if not lines:
            return "none"
        pred = model.predict(["\n".join(t for _, t in lines)])[0]
        label = own_verdict(pred, lines, pipeline.DEFAULT_MIN_CONFIDENCE)
        return label.split(".", 1)[0] if label else "none"
    mode = "off" if system == "signatures" else "auto"
    result = pipeline.run(source, scanner, classifier=mode, model=model)
    return result.diagnoses[0].cls if result.diagnoses else "none"


def evaluate(root: Path | None = None, systems: Sequence[str] = SYSTEMS,
             folds: Sequence[int] = (0,)) -> dict[str, dict[str, Scores]]:
    """Train on each fold's train split, score its test split: {system: {kind: Scores}}.
    ``folds=(0,)`` is the held-out split; ``(0, 1, 2)`` cross-validates over every scenario."""
    from .classify.train import train_items

    items = load_items(root)
    results: dict[str, dict[str, Scores]] = {s: {} for s in systems}
    for fold in folds:
        train, test = split(items, fold)
        model = train_items(train)
        for item in test:
            for system in systems:
                kind = {"log": "logs", "report": "reports", "nearmiss": "nearmiss"}[item.kind]
                truth = item.label if item.label in CLASSES else "none"
                results[system].setdefault(kind, Scores()).pairs.append(
                    (truth, predict(item, system, model), str(item.path)))
    return results


def format_tables(results: dict[str, dict[str, Scores]]) -> str:
    """Markdown tables: per system and kind, P/R/F1 per class, then the confusion matrices."""
    lines = []
    for system, kinds in results.items():
        for kind, scores in sorted(kinds.items()):
            lines.append(f"### {system} — {kind} ({len(scores.pairs)} held-out items)")
            lines.append("")
            if kind == "nearmiss":
                lines.append(f"False alarms: {scores.false_alarm_rate():.1%} "
                             f"({sum(p != 'none' for _, p, _ in scores.pairs)} of {len(scores.pairs)})")
                lines.append("")
                continue
            lines.append("| class | precision | recall | F1 | support |")
            lines.append("|---|---|---|---|---|")
            for c, (p, r, f, n) in scores.per_class().items():
                if n or any(pp == c for _, pp, _ in scores.pairs):
                    lines.append(f"| {c} | {p:.2f} | {r:.2f} | {f:.2f} | {n} |")
            lines.append(f"| **macro A-E** | | | **{scores.macro_f1():.3f}** | |")
            lines.append("")
            conf = scores.confusion()
            lines.append("| truth \\ predicted | " + " | ".join(ROWS) + " |")
            lines.append("|---" * (len(ROWS) + 1) + "|")
            for t in ROWS:
                if any(tt == t for tt, _, _ in scores.pairs):
                    lines.append(f"| {t} | " + " | ".join(str(conf[(t, p)]) for p in ROWS) + " |")
            lines.append("")
    return "\n".join(lines)


def misses(results: dict[str, dict[str, Scores]], system: str = "combined") -> list[str]:
    return [f"{kind}: {path}: truth {t}, predicted {p}" for kind, s in results.get(system, {}).items()
            for t, p, path in s.pairs if t != p]


def gates(results: dict[str, dict[str, Scores]]) -> dict[str, tuple[float, bool]]:
    """The thresholds the combined system must meet: name -> (value, passed)."""
    combined = results["combined"]
    values = {
        "logs_macro_f1": combined["logs"].macro_f1() if "logs" in combined else 0.0,
        "reports_macro_f1": combined["reports"].macro_f1() if "reports" in combined else 0.0,
        "nearmiss_false_alarms": combined["nearmiss"].false_alarm_rate() if "nearmiss" in combined else 1.0,
    }
    return {k: (v, v <= THRESHOLDS[k] if k.endswith("alarms") else v >= THRESHOLDS[k]) for k, v in values.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dllogscan.evaluation [CORPUS]``: print the tables; exit 1 if a gate fails."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    results = evaluate(Path(args[0]) if args else None)
    print(format_tables(results))
    failed = False
    for name, (value, ok) in gates(results).items():
        print(f"{name}: {value:.3f} {'ok' if ok else 'FAILED'} (threshold {THRESHOLDS[name]})")
        failed |= not ok
    for line in misses(results):
        print("miss:", line)
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
