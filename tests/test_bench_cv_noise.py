"""``bench/cv_noise.py``: its draws of folds are as grouped and as balanced as the shipped one
(draw 0 *is* the shipped one), they differ from it, and its summary reads back the rows it prints."""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import cv_noise  # noqa: E402

from dllogscan.evaluation.corpus import Item, folds_of  # noqa: E402
from dllogscan.evaluation.evaluate import FOLDS  # noqa: E402


def _items() -> list[Item]:
    sizes = [40, 12, 9, 7, 5, 5, 4, 3, 3, 2, 2, 2] + [1] * 120
    return [Item(Path(f"/x/org{g}-{n}"), "ABCDE"[g % 5], None, f"org/repo{g}", "thread", None)
            for g, size in enumerate(sizes) for n in range(size)]


def test_a_draw_keeps_repositories_whole_and_balanced_and_draw_zero_is_the_shipped_one():
    items = _items()
    assert folds_of(items, FOLDS, cv_noise.salt_of(0)) == folds_of(items, FOLDS)
    shipped = [folds_of(items, FOLDS).count(f) for f in range(FOLDS)]
    for draw in (1, 2, 3):
        folds = folds_of(items, FOLDS, cv_noise.salt_of(draw))
        groups: dict[str, set[int]] = {}
        for item, fold in zip(items, folds):
            groups.setdefault(item.group, set()).add(fold)
        assert all(len(f) == 1 for f in groups.values())
        loads = [folds.count(f) for f in range(FOLDS)]
        assert max(loads) - min(loads) <= max(shipped) - min(shipped) + 1
        assert cv_noise.moved(items, draw) > len(items) // 5  # another draw, not a renumbering
    assert cv_noise.moved(items, 0) == 0


def test_moved_ignores_how_the_folds_are_numbered(monkeypatch):
    items = _items()
    base = folds_of(items, FOLDS)
    monkeypatch.setattr(cv_noise, "folds_of", lambda its, k, salt="": [(f + 1) % k for f in base] if salt else base)
    assert cv_noise.moved(items, 1) == 0


def test_the_summary_reads_the_rows_it_printed():
    rows = [cv_noise.HEADER,
            "| 0 | 0 | 0.816 | 0.635 | 0.831 | 0.811 | 0.829 | 0.695 | 0.635 | 7.2 % (129/1791) | 450 |",
            "| 1 | 2377 | 0.820 | 0.640 | 0.836 | 0.817 | 0.829 | 0.708 | 0.640 | 7.0 % (126/1791) | 448 |",
            "| 2 | 2243 | 0.814 | 0.648 | 0.825 | 0.811 | 0.820 | 0.675 | 0.648 | 6.9 % (124/1791) | 423 |"]
    out = "\n".join(cv_noise.summary(rows))
    assert "Over 3 draws" in out
    sd = statistics.stdev([0.816, 0.820, 0.814])
    assert f"| macro-F1 A-E | 0.817 | {sd:.3f} | 0.814 | 0.820 |" in out
    assert "| E recall | 0.641 |" in out and "| D recall | 0.693 |" in out
    assert cv_noise.summary(rows[:2]) == ["(fewer than two draws: no spread)"]
