"""``bench/stacking.py``: the evidence becomes the numbers the combiners read, each combiner is
scored only on folds it was not fitted on, and the tables count what they are given."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import stacking  # noqa: E402


def row(truth: str, fold: int, verdict: str, probs: dict[str, float] | None = None,
        signatures: list[dict] | None = None, prose: list[str] | None = None) -> dict:
    if probs is None:
        probs = {truth: 0.9, "none": 0.1} if truth != "none" else {"none": 1.0}
    return {"thread": f"{truth}-{fold}.md", "fold": fold, "truth": truth, "probs": probs,
            "signatures": signatures or [], "prose": prose or [],
            "relevant": True, "loader": True, "e_blocked": False, "progress": 0, "lines": 12,
            "verdict": verdict}


def test_features_read_every_kind_of_evidence():
    plain = stacking.features(row("none", 0, "none"))
    hit = stacking.features(row("D", 0, "D", signatures=[{"class": "D", "confidence": 0.7, "canonical": True,
                                                         "ids": ["D.x"]}], prose=["E"]))
    assert len(plain) == len(hit) == 6 + 2 * 5 + 5 + 3 + 2
    d_conf, d_canonical = 6 + 2 * 3, 6 + 2 * 3 + 1
    assert (plain[d_conf], plain[d_canonical]) == (0.0, 0.0)
    assert (hit[d_conf], hit[d_canonical]) == (0.7, 1.0)
    assert hit[6 + 10 + 4] == 1.0 and plain[6 + 10 + 4] == 0.0  # the hang sentence
    with_verdict = stacking.features(row("D", 0, "D"), with_verdict=True)
    assert with_verdict[-6:] == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]


def test_decide_abstains_below_the_threshold():
    assert stacking.decide({"E": 0.55, "none": 0.45}, 0.5) == "E"
    assert stacking.decide({"E": 0.45, "none": 0.55}, 0.5) == "none"
    assert stacking.decide({"none": 0.9, "A": 0.05, "B": 0.05}, 0.0) == "A"


class Memorise:
    """A combiner that remembers which folds' threads it was fitted on (by their first feature)."""

    seen: list[set] = []

    def fit(self, x, y):
        self.classes_ = sorted(set(y))
        Memorise.seen.append({round(v, 6) for v in x[:, 0]})
        return self

    def predict_proba(self, x):
        import numpy as np

        return np.full((len(x), len(self.classes_)), 1 / len(self.classes_))


def test_cross_validated_never_scores_a_thread_with_its_own_fold():
    rows = [row("A", f, "A", probs={"A": 0.1 * (f + 1), "none": 1 - 0.1 * (f + 1)}) for f in range(3)]
    rows += [row("none", f, "none", probs={"A": 0.01 * (f + 1), "none": 0.9}) for f in range(3)]
    Memorise.seen = []
    out = stacking.cross_validated(rows, Memorise, False)
    assert len(Memorise.seen) == 3 and all(len(p) == 2 for p in out)
    for f, seen in enumerate(Memorise.seen):
        own = {round(stacking.features(r)[0], 6) for r in rows if r["fold"] == f}
        assert not own & seen and len(seen) == 4


def test_veto_table_counts_hits_below_strong():
    sig = {"class": "D", "confidence": 0.7, "canonical": False, "ids": ["D.cuda-fork.initialization-error"]}
    strong = dict(sig, confidence=0.9, ids=["D.strong"])
    rows = [row("D", 0, "D", signatures=[sig]), row("D", 1, "none", signatures=[sig]),
            row("none", 0, "none", signatures=[sig]), row("none", 1, "D", signatures=[sig]),
            row("B", 2, "B", signatures=[sig]), row("D", 2, "D", signatures=[strong])]
    lines = stacking.veto_table(rows, 0.8)
    assert lines[2] == "| D.cuda-fork.initialization-error | 1 | 1 | 1 | 1 |"
    assert len(lines) == 3


def test_combiner_table_puts_the_shipped_rules_first():
    rows = [row("A", f, "A") for f in range(2)] + [row("none", f, "B") for f in range(2)]
    rows += [row("B", f, "none", probs={"B": 0.6, "none": 0.4}) for f in range(2)]
    lines = stacking.combiner_table(rows, {}, thresholds=(0.5,), budget=None)
    assert len(lines) == 3
    assert lines[2].startswith("| the shipped rules (combine.py) | - |")
    assert lines[2].endswith("| 100.0% (2/2) |")


def test_per_class_thresholds_are_chosen_without_the_scored_fold():
    from sklearn.linear_model import LogisticRegression

    rows = []
    for f in range(3):
        rows += [row("E", f, "none", probs={"E": 0.8, "none": 0.2}) for _ in range(4)]
        rows += [row("none", f, "none", probs={"E": 0.1, "none": 0.9}) for _ in range(8)]
    pred = stacking.per_class_verdicts(rows, lambda: LogisticRegression(max_iter=1000), False, 0.05)
    assert pred == [r["truth"] for r in rows]
    lines = stacking.combiner_table(rows, {"lr": (lambda: LogisticRegression(max_iter=1000), False)},
                                    thresholds=(0.5,))
    assert len(lines) == 5 and lines[4].startswith("| lr | per class (5% budget) | 1.000 |")
