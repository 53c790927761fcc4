"""One verdict from two kinds of evidence: signature diagnoses and the classifier's view.

- a signature diagnosis at or above STRONG stands alone (the classifier is not even loaded);
- a weaker one has its odds multiplied by the classifier's likelihood ratio between its class
  and "none" (square-rooted: the two are not independent), so a weak, reworded hit in a text the
  classifier calls healthy drops below the threshold, and one it backs rises;
- a ``canonical`` diagnosis (decided by the field guide's own failure text, e.g. a bare
  ``exited unexpectedly`` after 100 KB of healthy progress lines) keeps at least its signature
  confidence: the classifier may raise it or rank another diagnosis above it, never veto it;
- with no signature diagnosis, the classifier's top label makes a diagnosis of its own when it is
  sure enough and the text is about PyTorch training at all (RELEVANT), citing the lines that
  speak most for it; otherwise: nothing found. (A kernel log of a java service killed by the OOM
  killer reads like class B to a bag of words, but it is no DataLoader report.)
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

from ..correlate import RELEVANT
from ..models import Diagnosis, Evidence
from .labels import TITLE, split_label

STRONG = 0.8
TEMPER = 0.5
EPS = 1e-3
CLASSIFIER_DISCOUNT = 0.9
#: the least probability for a diagnosis of the classifier's own, chosen by 3-fold CV by scenario:
#: at 0.556 near-miss false alarms were 6.6 %, at 0.7 4.9 % (reports macro-F1 0.933 -> 0.887)
CLASSIFIER_MIN = 0.7
MAX_CITED = 3


def class_probability(pred: dict[str, float], cls: str) -> float:
    return sum(p for label, p in pred.items() if label.split(".", 1)[0] == cls)


def needs_classifier(diagnoses: Sequence[Diagnosis]) -> bool:
    return not any(d.confidence >= STRONG for d in diagnoses)


def combine(diagnoses: Sequence[Diagnosis], pred: dict[str, float], lines: Sequence[tuple[int, str]],
            model, min_confidence: float) -> list[Diagnosis]:
    """Merge signature diagnoses with the classifier's probabilities for the same source."""
    out = []
    top = max(pred, key=pred.get)
    for d in diagnoses:
        p = class_probability(pred, d.cls)
        conf = update(d.confidence, p, pred.get("none", 0.0))
        if top.split(".", 1)[0] == d.cls:  # never below what the classifier alone would say
            conf = max(conf, pred[top] * CLASSIFIER_DISCOUNT)
        if d.canonical:  # a canonical failure text is never vetoed
            conf = max(conf, d.confidence)
        note = f"classifier gives class {d.cls} {p:.0%}, none {pred.get('none', 0.0):.0%}"
        out.append(dataclasses.replace(d, confidence=conf, method="signatures+classifier",
                                       notes=d.notes + (note,)))
    label = own_verdict(pred, lines, min_confidence) if not diagnoses else None
    if label:
        cls, sub = split_label(label)
        out.append(Diagnosis(cls=cls, subclass=sub, title=TITLE[label],
                             confidence=pred[label] * CLASSIFIER_DISCOUNT,
                             evidence=cite(lines, label, model), method="classifier",
                             notes=(f"no known error text matched; the text classifier says {label} "
                                    f"({pred[label]:.0%})",)))
    out = [d for d in out if d.confidence >= min_confidence]
    out.sort(key=lambda d: -d.confidence)
    return out


def own_verdict(pred: dict[str, float], lines: Sequence[tuple[int, str]], min_confidence: float) -> str | None:
    """The classifier's label when it may diagnose on its own: sure enough, and the text is about
    PyTorch training at all; else None."""
    label = max(pred, key=pred.get)
    if label == "none" or pred[label] < CLASSIFIER_MIN or pred[label] * CLASSIFIER_DISCOUNT < min_confidence:
        return None
    return label if any(RELEVANT.search(text) for _, text in lines) else None


def update(prior: float, p_class: float, p_none: float) -> float:
    """Posterior of a signature diagnosis given the classifier's class-vs-none ratio."""
    prior = min(max(prior, EPS), 1 - EPS)
    odds = prior / (1 - prior) * ((p_class + EPS) / (p_none + EPS)) ** TEMPER
    return odds / (1 + odds)


def cite(lines: Sequence[tuple[int, str]], label: str, model) -> tuple[Evidence, ...]:
    """The few lines that speak most for ``label``, in their original order."""
    if not lines:
        return ()
    texts = [t[:2000] for _, t in lines]
    scores = model.line_scores(texts, label)
    best = sorted(range(len(lines)), key=lambda i: -scores[i])[:MAX_CITED]
    return tuple(Evidence(lines[i][0], lines[i][1][:600], "classifier") for i in sorted(best) if scores[i] > 0)
