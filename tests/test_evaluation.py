"""Accuracy gates on the committed corpus: a regression in signatures or classifier fails CI.

The classifier is trained on the train split of the corpus in the test itself, then the held-out
split (by scenario) is scored: signatures alone, classifier alone, combined.
"""
from __future__ import annotations

import pytest

from dllogscan.corpus import load_items
from dllogscan.evaluation import THRESHOLDS, Scores, evaluate, format_tables, gates


@pytest.fixture(scope="module")
def results():
    return evaluate()


def test_corpus_has_the_promised_size():
    items = load_items()
    logs = [i for i in items if i.kind == "log" and i.label != "none"]
    assert len(logs) >= 40
    assert {i.label for i in logs} >= {"A", "B", "C", "E"}
    assert {i.subclass.split("-")[0] for i in logs if i.label == "B"} >= {"oom", "getitem", "crash"}
    assert len([i for i in items if i.kind == "report"]) >= 60
    assert len([i for i in items if i.label == "none"]) >= 40


def test_combined_meets_every_gate(results):
    report = format_tables(results)
    for name, (value, ok) in gates(results).items():
        assert ok, f"{name} = {value:.3f} misses its threshold {THRESHOLDS[name]}\n{report}"


def test_combined_is_at_least_as_good_as_signatures_alone_on_reports(results):
    assert results["combined"]["reports"].macro_f1() >= results["signatures"]["reports"].macro_f1()


def test_scores_arithmetic():
    s = Scores([("A", "A", "1"), ("A", "none", "2"), ("none", "A", "3"), ("B", "B", "4"), ("none", "none", "5")])
    per = s.per_class()
    assert per["A"][:3] == pytest.approx((0.5, 0.5, 0.5)) and per["B"][:3] == (1.0, 1.0, 1.0)
    assert s.macro_f1() == pytest.approx(0.75)
    assert s.false_alarm_rate() == pytest.approx(0.5)
