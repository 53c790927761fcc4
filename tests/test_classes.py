"""One table of classes (data/classes.toml) behind every report's naming of them."""
from __future__ import annotations

from dllogscan.core import classes
from dllogscan.core.models import Diagnosis, ScanResult
from dllogscan.integrations.github_action import label_for
from dllogscan.report.markdown import to_markdown
from dllogscan.signatures.database import CLASSES


def _result(cls: str, subclass: str) -> ScanResult:
    d = Diagnosis(cls=cls, subclass=subclass, title="t", confidence=0.9, evidence=())
    return ScanResult(source="x.log", diagnoses=(d,))


def test_every_class_is_complete_and_the_guide_has_five():
    found = classes.all_classes()
    assert [c.letter for c in found] == list("ABCDEFGH")
    assert all(c.name and c.style for c in found)
    assert classes.field_guide_letters() == ("A", "B", "C", "D", "E")
    assert CLASSES == classes.letters() + ("none",)
    assert classes.letter_range() == "A-H"


def test_reports_and_labels_name_classes_from_the_table():
    assert "class G / main-process, the dataset code failed in the main process" in to_markdown([_result("G", "main-process")])
    assert label_for(_result("G", "main-process"), "dataloader: ") == "dataloader: G-dataset"
    assert label_for(_result("B", "oom-suspected"), "dataloader: ") == "dataloader: B-oom"  # B: its subclass
    assert classes.name_of("Z") == "other" and classes.style_of("Z") == "white"
