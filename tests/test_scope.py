"""Diagnoses set aside when the text shows another program forked (dllogscan/data/scope.toml)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllogscan.core.models import Diagnosis, Evidence, ScanResult
from dllogscan.correlate import scope

RULES = scope.load_rules()
CASES = [(r, t, True) for r in RULES for t in r.examples] + [(r, t, False) for r in RULES for t in r.counter_examples]


def lines_of(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.splitlines(), start=1))


def d_diagnosis(cls: str = "D") -> Diagnosis:
    return Diagnosis(cls=cls, subclass="cuda-fork" if cls == "D" else "too-many-open-files", title="t",
                     confidence=0.97, evidence=(Evidence(1, "x"),), canonical=True)


@pytest.mark.parametrize("rule, text, outside", CASES, ids=[f"{r.id}-{i}" for i, (r, _, _) in enumerate(CASES)])
def test_examples_are_set_aside_and_counter_examples_kept(rule, text, outside):
    [cls] = rule.classes
    kept, notes = scope.set_aside([d_diagnosis(cls)], lines_of(text), [rule])
    assert (kept == []) is outside and bool(notes) is outside
    assert scope.outside_classes(lines_of(text), [rule]) == (rule.classes if outside else frozenset())


def test_other_classes_stay_and_the_note_names_the_host_and_its_line():
    text = "gunicorn app:app --preload\nRuntimeError: Cannot re-initialize CUDA in forked subprocess."
    other = Diagnosis(cls="B", subclass="oom", title="t", confidence=0.9, evidence=())
    kept, [note] = scope.set_aside([d_diagnosis(), other], lines_of(text))
    assert kept == [other] and "gunicorn (line 1)" in note and "spawn" in note


def test_a_malformed_rule_names_itself(tmp_path):
    bad = tmp_path / "scope.toml"
    bad.write_text('[[outside]]\nid = "x"\nclasses = ["D"]\n', encoding="utf-8")
    with pytest.raises(Exception, match="outside #1 needs exactly"):
        scope.load_rules(bad)


def test_a_bad_denial_pattern_names_itself(tmp_path):
    bad = tmp_path / "scope.toml"
    bad.write_text("denied = '(?:no'\n", encoding="utf-8")
    with pytest.raises(Exception, match="denied: bad pattern"):
        scope.load_rules(bad)


def test_only_a_denial_that_reaches_the_word_sets_it_aside():
    [rule] = [r for r in RULES if "D" in r.classes]
    assert not rule.shows_loader("no DataLoader is involved")
    assert not rule.shows_loader("we do not use a PyTorch DataLoader here")
    assert rule.shows_loader("there is no problem with the DataLoader")
    assert rule.shows_loader("no DataLoader in the server, but train.py uses a DataLoader")


def test_a_gunicorn_log_gets_no_class_d_and_says_why(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2023-05-01 12:00:00 +0000] [7] [INFO] Starting gunicorn 20.1.0\n"
                   "[2023-05-01 12:00:01 +0000] [42] [INFO] Booting worker with pid: 42\n"
                   "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                   "multiprocessing, you must use the 'spawn' start method\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "--format", "json"],
                         capture_output=True, text=True, check=False)
    doc = json.loads(out.stdout)
    assert doc["diagnoses"] == [] and "gunicorn (line 1)" in doc["notes"][0]
    md = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "--format", "md"],
                        capture_output=True, text=True, check=False).stdout
    assert "**Note:** CUDA was touched before a fork made by gunicorn" in md


def test_notes_are_escaped_like_every_other_text_from_the_input():
    r = ScanResult(source="x", notes=("made by \x1b[31mgunicorn",))
    assert "\x1b" not in r.notes[0] and r.to_dict()["notes"] == list(r.notes)
    assert "notes" not in ScanResult(source="y").to_dict()


def test_the_pipeline_reads_the_rules_only_for_the_classes_they_name():
    from dllogscan.pipeline.runner import SCOPED_CLASSES

    assert set().union(*(r.classes for r in RULES)) == SCOPED_CLASSES



def test_the_terminal_shows_the_note_beside_a_diagnosis_that_stayed():
    from dllogscan.report.terminal import to_text

    kept = Diagnosis(cls="B", subclass="oom", title="A worker ran out of host memory", confidence=0.9, evidence=())
    text = to_text([ScanResult(source="x.log", diagnoses=(kept,), notes=("made by gunicorn (line 1)",))])
    assert "Class B" in text and "note" in text and "made by gunicorn (line 1)" in text
