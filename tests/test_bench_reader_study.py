"""bench/reader_study.py: the study's rows name scored threads, and its figures are weighted."""
from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("reader_study", ROOT / "bench" / "reader_study.py")
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)


@pytest.mark.parametrize("path, size, readers", [(study.STUDY, 300, {1, 2, 3}), (study.SECOND, 280, {4, 5, 6, 7})])
def test_every_row_is_a_scored_thread_read_once(path, size, readers):
    rows = study.load_study(path)
    truth = study.truths()
    assert len(rows) == size and len({r["stem"] for r in rows}) == size
    assert all(r["stem"] in truth for r in rows)
    assert {r["label"] for r in rows} <= set(study.ROWS) and {r["reader"] for r in rows} == readers


def test_cv_verdicts_hook_what_the_evaluation_calls(monkeypatch):
    from dllogscan.evaluation import evaluate as ev

    item = SimpleNamespace(path=Path("corpus/threads/e-owner-repo-1.md"))
    monkeypatch.setattr(ev, "predict_with_subclass", lambda item, system, model: ("E", 0.9, "hang"))
    monkeypatch.setattr(ev, "evaluate", lambda systems: ev.predict_with_subclass(item, "combined", None))
    assert study.cv_verdicts({"e-owner-repo-1"}) == {"e-owner-repo-1": "E"}
    with pytest.raises(RuntimeError, match="scored 1 of the study's threads nowhere"):
        study.cv_verdicts({"e-owner-repo-1", "none-owner-repo-2"})


def test_figures_weight_each_class_by_its_share():
    rows = [("E", "E"), ("E", "none"), ("none", "none"), ("none", "E")]
    plain = study.figures(rows, {"E": 1.0, "none": 1.0})
    assert plain["per_class"]["E"][:2] == (0.5, 0.5) and plain["false_alarms"] == 0.5
    heavy = study.figures(rows, {"E": 1.0, "none": 9.0})  # one none thread stands for nine
    assert heavy["per_class"]["E"][0] == 0.1 and heavy["per_class"]["E"][1] == 0.5
    assert heavy["false_alarms"] == 0.5  # the rate within none does not change


def test_readers_figures_print(capsys):
    assert study.main([]) == 0
    out = capsys.readouterr().out
    assert "readers, label as given" in out and "abstaining when unsure" in out
    assert study.main(["--study", str(study.SECOND)]) == 0
    assert capsys.readouterr().out.startswith("280 threads (A 40, B 40, C 40, D 40, E 60, none 60)")
