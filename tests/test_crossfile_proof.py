"""The cross-file pass: proof of an OOM kill in another source outranks a subclass that only the
text classifier guessed, and never replaces one that a line of the log itself proves."""
from __future__ import annotations

from dllogscan.batch.crossfile import CrossFile, pending
from dllogscan.batch.worker import Event, Record
from dllogscan.core.models import Diagnosis, Evidence, ScanResult
from dllogscan.signatures.loader import load_database

BARE = "RuntimeError: DataLoader worker (pid(s) 412) exited unexpectedly"
KILL = "Memory cgroup out of memory: Killed process 412 (python) total-vm:1kB, anon-rss:1kB"


def _record(source: str, *diagnoses: Diagnosis, events: tuple[Event, ...] = ()) -> Record:
    return Record(ScanResult(source=source, diagnoses=diagnoses), {"node": "node07"}, events)


def _b(subclass: str, signatures: tuple[str, ...], notes: tuple[str, ...] = ()) -> Diagnosis:
    return Diagnosis(cls="B", subclass=subclass, title="t", confidence=0.7, evidence=(Evidence(9, BARE, signatures[0]),),
                     signatures=signatures, facts={"pids": "412"}, notes=notes)


def _resolved(diag: Diagnosis) -> Diagnosis:
    cross = CrossFile(load_database())
    cross.add(_record("dmesg.log", events=(Event("B.oom.kernel-killed-process", 3, KILL, pid="412", process="python"),)))
    record = _record("job.log", diag)
    return cross.resolve(record).result.diagnoses[0] if pending(record) else diag


def test_a_subclass_the_classifier_guessed_gives_way_to_the_kernels_proof():
    guessed = _b("getitem", ("B.oom-suspected.exited-unexpectedly",),
                 ("classifier gives class B 90%", "subclass getitem from the text classifier (83%)"))
    got = _resolved(guessed)
    assert (got.subclass, got.method) == ("oom", "cross-file")
    assert got.evidence[1].text == f"[dmesg.log line 3] {KILL}"
    assert got.notes[0] == "classifier gives class B 90%" and not any("text classifier" in n for n in got.notes[1:])


def test_the_bare_line_alone_is_upgraded_as_before():
    got = _resolved(_b("oom-suspected", ("B.oom-suspected.exited-unexpectedly",)))
    assert (got.subclass, got.facts["kernel_source"]) == ("oom", "dmesg.log")


def test_a_subclass_the_log_itself_proves_stays():
    proven = _b("getitem", ("B.getitem.caught", "B.oom-suspected.exited-unexpectedly"))
    assert not pending(_record("job.log", proven))
    assert _resolved(proven) is proven


def test_a_cause_the_text_only_named_gives_way_to_the_kernels_proof():
    from dllogscan.correlate.likely_causes import name_cause

    told = (1, "The worker segfaults now and then.")
    named = name_cause(_b("oom-suspected", ("B.oom-suspected.exited-unexpectedly",)), [told, (9, BARE)])
    assert named.subclass == "crash-likely" and named.evidence[-1].line == 1
    got = _resolved(named)
    assert (got.subclass, got.method) == ("oom", "cross-file")
    assert [e.line for e in got.evidence] == [9, 3]  # the failure line and the proof, not the guess's line
    assert not any("likely" in n for n in got.notes)
