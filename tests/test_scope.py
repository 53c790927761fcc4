"""Diagnoses set aside when the text shows another program forked (dllogscan/data/scope.toml)."""
from __future__ import annotations

import dataclasses
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


def d_diagnosis(cls: str = "D", canonical: bool = False, line: int = 1) -> Diagnosis:
    return Diagnosis(cls=cls, subclass="cuda-fork" if cls == "D" else "too-many-open-files", title="t",
                     confidence=0.97, evidence=(Evidence(line, "x", "sig"),), canonical=canonical)


@pytest.mark.parametrize("rule, text, outside", CASES, ids=[f"{r.id}-{i}" for i, (r, _, _) in enumerate(CASES)])
def test_examples_are_set_aside_and_counter_examples_kept(rule, text, outside):
    """By the host line alone (the ``training`` clause is tested below)."""
    [cls] = rule.classes
    rule = dataclasses.replace(rule, training=None)
    kept, notes = scope.set_aside([d_diagnosis(cls)], lines_of(text), [rule])
    assert (kept == []) is outside and bool(notes) is outside
    assert scope.outside_classes(lines_of(text), [rule]) == (rule.classes if outside else frozenset())
    [canonical] = scope.set_aside([d_diagnosis(cls, canonical=True)], lines_of(text), [rule])[0]
    assert (canonical.cls == "H") is outside, "a canonical text set aside is class H, never nothing found"


UNSEEN = [(r, t, True) for r in RULES for t in r.unseen_examples] + \
    [(r, t, False) for r in RULES for t in r.unseen_counter_examples]


@pytest.mark.parametrize("rule, text, outside", UNSEEN, ids=[f"{r.id}-unseen-{i}" for i, (r, _, _) in enumerate(UNSEEN)])
def test_a_canonical_text_in_a_text_that_shows_neither_loader_nor_training_is_class_h(rule, text, outside):
    import dllogscan

    [cls] = rule.classes
    top = dllogscan.scan(text, name="report.md", classifier="off").diagnoses[0]
    assert (top.cls, top.subclass) == (("H", rule.subclass) if outside else (cls, top.subclass))
    if outside:
        assert "Nothing around line" in top.notes[0] and f"class {cls}" in top.notes[0]


def test_the_ancdata_text_keeps_class_c_beside_a_host_but_shows_no_loader_by_itself():
    """C's ``unseen_ignores`` leaves out a failure text that ``unless`` counts: beside another
    framework's line "received 0 items of ancdata" keeps class C (Python's multiprocessing prints it
    where torch passes descriptors), but a report holding nothing else of the DataLoader or of
    training is not shown to be one."""
    [rule] = [r for r in RULES if "C" in r.classes and r.training is not None]
    failure = "RuntimeError: received 0 items of ancdata"
    assert rule.shows_loader(failure) and not rule.shows_loader(failure, rule.unseen_ignores)
    beside_host = lines_of("import tensorflow as tf\n" + failure)
    assert rule.host_line(beside_host) is None  # the host rule keeps it
    report = lines_of("The file-share scanner's recursive listing stops with:\n" + failure)
    assert rule.unseen(report, {2})
    assert not rule.unseen(lines_of("Training stops at epoch 3 with:\n" + failure), {2})
    assert not rule.unseen(lines_of("```\n" + failure + "\n```"), {2}), "pasted alone it stays C"
    [h] = scope.set_aside([d_diagnosis("C", canonical=True, line=2)], report, [rule])[0]
    assert (h.cls, h.subclass) == ("H", "fd-limit") and "received 0 items of ancdata" in h.notes[0]


def test_the_training_clause_sets_aside_only_a_canonical_text_and_never_one_pasted_alone():
    [rule] = [r for r in RULES if r.training is not None and "D" in r.classes]
    text = "The library initialises CUDA at import.\nRuntimeError: Cannot re-initialize CUDA in forked subprocess."
    weak = d_diagnosis(canonical=False, line=2)
    assert scope.set_aside([weak], lines_of(text), [rule]) == ([weak], ())  # only a canonical text moves
    [h] = scope.set_aside([d_diagnosis(canonical=True, line=2)], lines_of(text), [rule])[0]
    assert h.cls == "H"
    alone = "```\nRuntimeError: Cannot re-initialize CUDA in forked subprocess.\n```"
    [d] = scope.set_aside([d_diagnosis(canonical=True, line=2)], lines_of(alone), [rule])[0]
    assert d.cls == "D"
    log = "step 120 loss: 0.3128\nRuntimeError: Cannot re-initialize CUDA in forked subprocess."
    [d] = scope.set_aside([d_diagnosis(canonical=True, line=2)], lines_of(log), [rule])[0]
    assert d.cls == "D", "a progress line shows a training run"


def test_other_classes_stay_and_the_note_names_the_host_and_its_line():
    text = "gunicorn app:app --preload\nRuntimeError: Cannot re-initialize CUDA in forked subprocess."
    other = Diagnosis(cls="B", subclass="oom", title="t", confidence=0.9, evidence=())
    kept, [note] = scope.set_aside([d_diagnosis(), other], lines_of(text))
    assert kept == [other] and "gunicorn (line 1)" in note and "spawn" in note


def test_a_canonical_text_set_aside_becomes_class_h_citing_the_failure_and_the_host():
    text = "gunicorn app:app --preload\nRuntimeError: Cannot re-initialize CUDA in forked subprocess."
    other = Diagnosis(cls="B", subclass="oom", title="t", confidence=0.9, evidence=())
    kept, notes = scope.set_aside([d_diagnosis(canonical=True, line=2), other], lines_of(text))
    h, b = kept
    assert b == other and notes == (), "the note travels with the class-H diagnosis, not beside it"
    assert (h.cls, h.subclass, h.confidence, h.canonical) == ("H", "cuda-fork", 0.97, False)
    assert [(e.line, e.text) for e in h.evidence] == [(1, "gunicorn app:app --preload"), (2, "x")]
    assert "gunicorn (line 1)" in h.notes[0]


def test_a_classifier_verdict_set_aside_is_dropped_with_the_note():
    text = "celery -A app worker\nthe worker fails with a CUDA error"
    kept, [note] = scope.set_aside([d_diagnosis(canonical=False)], lines_of(text))
    assert kept == [] and "celery (line 1)" in note


def test_a_malformed_rule_names_itself(tmp_path):
    bad = tmp_path / "scope.toml"
    bad.write_text('[[outside]]\nid = "x"\nclasses = ["D"]\n', encoding="utf-8")
    with pytest.raises(Exception, match="outside #1 needs "):
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


def test_a_gunicorn_log_gets_class_h_not_d_and_says_why(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2023-05-01 12:00:00 +0000] [7] [INFO] Starting gunicorn 20.1.0\n"
                   "[2023-05-01 12:00:01 +0000] [42] [INFO] Booting worker with pid: 42\n"
                   "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                   "multiprocessing, you must use the 'spawn' start method\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "--format", "json"],
                         capture_output=True, text=True, check=False)
    doc = json.loads(out.stdout)
    [h] = doc["diagnoses"]
    assert (h["class"], h["subclass"], out.returncode) == ("H", "cuda-fork", 1)
    assert [e["line"] for e in h["evidence"]] == [1, 3] and "gunicorn (line 1)" in h["notes"][0]
    assert h["fixes"] and all(f["title"] for f in h["fixes"]) and "notes" not in doc
    md = subprocess.run([sys.executable, "-m", "dllogscan", str(log), "--format", "md"],
                        capture_output=True, text=True, check=False).stdout
    assert "class H / cuda-fork" in md and "CUDA was touched before a fork made by gunicorn" in md


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


def _scan_text(tmp_path, text: str):
    import dllogscan

    path = tmp_path / "paste.txt"
    path.write_text(text, encoding="utf-8")
    return dllogscan.scan(path).diagnoses


ERRNO_24 = "OSError: [Errno 24] Too many open files"
FAR = "\n".join(f"[INFO] request {i} served in 3 ms" for i in range(30))


@pytest.mark.parametrize("text, expected, note", [
    (ERRNO_24, ("C", "fd-exhausted"), None),  # the guide's own line pasted alone keeps its class
    (f"```\nTraceback (most recent call last):\n{ERRNO_24}\n```", ("C", "fd-exhausted"), None),
    (f"  File \"/srv/app.py\", line 3, in <module>\n{ERRNO_24}", ("H", "fd-limit"), "Nothing around line 2"),
    (f"with multiprocessing.Pool(8) as pool:\n{FAR}\n{ERRNO_24}", ("H", "fd-limit"), "multiprocessing.Pool (line 1)"),
    # "train" as a verb is a training word as "training" is (a first-person report)
    (f"Whenever I train on multiple GPUs it always ends with:\n\n{ERRNO_24}", ("C", "fd-exhausted"), "classifier gives class C"),
])
def test_a_canonical_text_its_own_conditions_dropped_is_never_nothing_found(tmp_path, text, expected, note):
    """[Errno 24] needs a line about PyTorch training within 20 lines to count as class C; without
    one it is still a diagnosis: C where it is all the text says or the text names the DataLoader
    elsewhere, else H with the reason."""
    top = _scan_text(tmp_path, text)[0]
    assert (top.cls, top.subclass) == expected and top.evidence[-1].text == ERRNO_24
    assert (note is None and not top.notes) or (note and note in top.notes[0])
    assert top.fixes, "every verdict comes with its fixes"


def test_no_canonical_text_no_fallback(tmp_path):
    assert _scan_text(tmp_path, f"{FAR}\naccept4() failed (24: Too many open files)") == ()


def test_a_dropped_canonical_text_in_a_text_that_names_the_dataloader_keeps_its_class():
    from dllogscan.core.models import Hit
    from dllogscan.pipeline.runner import get_scanner

    db = get_scanner().db
    lines = lines_of(f"loader = DataLoader(ds, num_workers=16)\n{FAR}\n{ERRNO_24}")
    hit = Hit("C.fd-exhausted.errno-24", len(lines), ERRNO_24)
    [found] = scope.unexplained([hit], db, lines)
    assert (found.cls, found.subclass, found.canonical, found.confidence) == ("C", "fd-exhausted", True, 0.55)
    assert scope.unexplained([Hit("C.fd-exhausted.dup-fd", 1, "x")], db, lines) == [], "canonical texts only"


OWN_FILE = "OSError: [Errno 24] Too many open files: 'photos/icnZ2R8PcDs.jpg'"


@pytest.mark.parametrize("text, expected", [
    (OWN_FILE, ("C", "fd-exhausted")),  # the guide's text pasted alone: a worker opening an image prints it too
    (f"```\nTraceback (most recent call last):\n{OWN_FILE}\n```", ("C", "fd-exhausted")),
    (f"The notebook opens 5000 photos into a list during training:\n{OWN_FILE}", ("H", "fd-limit")),
    (f"Training with num_workers=8 the DataLoader dies:\n{OWN_FILE}", ("C", "fd-exhausted")),
    (f"Epoch 3:  45%|####5     | 450/1000 [01:10<01:25,  6.4it/s, loss=0.231]\n{OWN_FILE}", ("C", "fd-exhausted")),
    ("Training fails after an hour:\nOSError: [Errno 24] Too many open files: '/tmp/pymp-tgep00l9'", ("C", "fd-exhausted")),
])
def test_errno_24_on_a_data_file_of_the_programs_own(tmp_path, text, expected):
    """The file [Errno 24] names is the host where it is a data file and nothing names the loader;
    the line pasted alone keeps class C (``alone_keeps``)."""
    top = _scan_text(tmp_path, text)[0]
    assert (top.cls, top.subclass) == expected
    if expected[0] == "H":
        assert "photos/icnZ2R8PcDs.jpg (line 2)" in top.notes[0] and top.fixes
