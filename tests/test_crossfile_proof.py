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


def _job_files(out_meta: dict, err_meta: dict) -> Diagnosis:
    cross = CrossFile(load_database())
    cross.add(Record(ScanResult(source="dmesg-gpu07.log"), {"node": "gpu07"},
                     (Event("B.oom.kernel-killed-process", 3, KILL, pid="412", process="python"),)))
    cross.add(Record(ScanResult(source="slurm-4242.out"), out_meta, ()))
    err = Record(ScanResult(source="slurm-4242.err", diagnoses=(_b("oom-suspected", ("B.oom-suspected.exited-unexpectedly",)),)),
                 err_meta, ())
    return cross.resolve(err).result.diagnoses[0]


def test_a_jobs_file_without_a_node_is_matched_on_the_node_its_sibling_names():
    """Before: the .err (no SLURMD_NODENAME in it) stayed oom-suspected beside the .out naming
    gpu07 and gpu07's kernel log killing its worker's pid; ``dllogscan slurm`` proved it."""
    got = _job_files({"job": "4242", "node": "gpu07"}, {"job": "4242"})
    assert (got.subclass, got.method, got.facts["kernel_source"]) == ("oom", "cross-file", "dmesg-gpu07.log")
    assert got.notes[-1] == "dmesg-gpu07.log shows the OOM kill (pid 412) on node gpu07, its job's node"


def test_another_job_or_array_task_lends_no_node():
    assert _job_files({"job": "4243", "node": "gpu07"}, {"job": "4242"}).subclass == "oom-suspected"
    assert _job_files({"job": "4242", "array_task": "1", "node": "gpu07"},
                      {"job": "4242", "array_task": "2"}).subclass == "oom-suspected"


def test_a_job_on_several_nodes_lends_none():
    cross = CrossFile(load_database())
    cross.add(Record(ScanResult(source="dmesg-gpu07.log"), {"node": "gpu07"},
                     (Event("B.oom.kernel-killed-process", 3, KILL, pid="412", process="python"),)))
    for node in ("gpu07", "gpu08"):
        cross.add(Record(ScanResult(source=f"slurm-4242-{node}.out"), {"job": "4242", "node": node}, ()))
    assert cross.node_of(Record(ScanResult(source="slurm-4242.err"), {"job": "4242"}, ())) is None


def test_the_shipped_slurm_example_in_one_folder_reaches_oom_in_batch(tmp_path):
    """The example's .out, .err and node journal side by side, as a cluster archive holds them:
    batch now agrees with ``dllogscan slurm 4242`` (B/oom), not oom-suspected."""
    import shutil

    import dllogscan
    from tests.cluster_fakes import EXAMPLES

    for name in ("slurm-4242.out", "slurm-4242.err"):
        shutil.copy(EXAMPLES / "slurm-oom-job" / "workdir" / name, tmp_path / name)
    shutil.copy(EXAMPLES / "slurm-oom-job" / "journalctl.out", tmp_path / "dmesg-gpu07.log")
    df = dllogscan.scan_many(str(tmp_path), jobs=1).set_index("source")
    err = df.loc[str(tmp_path / "slurm-4242.err")]
    assert (err["class"], err["subclass"]) == ("B", "oom")
