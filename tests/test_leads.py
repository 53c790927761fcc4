"""A line that points somewhere without deciding (a signature's ``lead``): shown as a note when a
text gets no diagnosis, never beside one."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import dllogscan
from dllogscan.core.errors import SignatureError
from dllogscan.report.markdown import to_markdown
from dllogscan.report.terminal import to_text
from dllogscan.signatures.loader import parse_signature

GLOO_LOG = Path(__file__).parent / "fixtures" / "logs" / "ddp-gloo-collective-timeout.log"
NCCL = ("[rank1]:[E1130 06:00:00.1 ProcessGroupNCCL.cpp:632] [PG ID 0 PG GUID 0(default_pg) Rank 1] Watchdog "
        "caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
        "Timeout(ms)=600000) ran for 600081 milliseconds before timing out.")


def test_a_real_gloo_timeout_gets_no_diagnosis_and_its_lead():
    result = dllogscan.scan(GLOO_LOG)
    assert result.diagnoses == ()
    [note] = result.notes
    assert note.startswith("Line 38: a gloo collective waited 20000 ms for a peer that never joined")
    assert "py-spy dump" in note and "class E" in note
    assert result.to_dict()["notes"] == [note]
    text = to_text([result])  # a lead is no clean bill: the headline points at it
    assert "No DataLoader worker failure diagnosed: see the notes below." in text and "waited 20000 ms" in text
    assert "failure found" not in text
    assert "no DataLoader worker failure diagnosed in this input; see the notes below" in to_markdown([result])


def test_an_nccl_watchdog_timeout_lead_names_rank_and_timeout(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("epoch 0 step 10/100 loss 0.5\nepoch 0 step 20/100 loss 0.4\n" + NCCL + "\n", encoding="utf-8")
    result = dllogscan.scan(log)
    assert result.diagnoses == ()
    [note] = result.notes
    assert note.startswith("Line 3: a NCCL collective timed out after 600000 ms (seen by rank 1): some rank")


def test_a_fact_the_hit_lacks_reads_as_a_question_mark(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("[E ProcessGroupNCCL.cpp:566] Caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
                   "TensorShape=[1], Timeout(ms)=1800000) ran for 1800394 milliseconds before timing out.\n",
                   encoding="utf-8")
    [note] = dllogscan.scan(log).notes
    assert "after 1800000 ms (seen by rank ?)" in note


def test_a_dead_pin_memory_thread_alone_says_where_its_cause_is_printed(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("epoch 3 step 40/100 loss 0.2\nRuntimeError: Pin memory thread exited unexpectedly\n", encoding="utf-8")
    result = dllogscan.scan(log, classifier="off")
    assert result.diagnoses == ()
    [note] = result.notes
    assert note.startswith("Line 2: the DataLoader's pin-memory thread (pin_memory=True) died")
    assert "_pin_memory_loop" in note and "class C" in note and "pin_memory=False" in note
    emfile = log.read_text().replace("RuntimeError: Pin", "OSError: [Errno 24] Too many open files\nRuntimeError: Pin")
    log.write_text(emfile, encoding="utf-8")
    result = dllogscan.scan(log, classifier="off")
    assert result.diagnoses[0].cls == "C" and not any("pin-memory thread" in n for n in result.notes)


def test_no_lead_beside_a_diagnosis(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("RuntimeError: DataLoader timed out after 10 seconds\n"
                   "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
                   "waiting 1800000ms for recv operation to complete\n", encoding="utf-8")
    result = dllogscan.scan(log)
    assert result.diagnoses and result.diagnoses[0].cls == "E"
    assert not any("gloo collective" in n for n in result.notes)


@pytest.mark.parametrize("lead", ["Line {line", "{0}", "{rank.__class__}", "{rank!r}", "{rank:>9}"])
def test_a_lead_with_anything_but_plain_placeholders_is_refused(lead):
    raw = {"id": "user.x", "class": "E", "subclass": "hang", "title": "t", "role": "context",
           "keywords": ["zz"], "pattern": "zz", "weight": 0.1, "examples": ["zz"], "lead": lead}
    with pytest.raises(SignatureError, match="lead may hold only"):
        parse_signature(raw, "user.toml")


@pytest.mark.parametrize("name, signal, check", [
    ("torchrun-rank-sigbus.log", "SIGBUS", "df -h /dev/shm"),
    ("torchrun-rank-sigkill.log", "SIGKILL", "dmesg | grep -i -E 'oom|killed process'"),
])
def test_a_real_rank_killed_by_a_signal_gets_no_diagnosis_and_the_launchers_lead(name, signal, check):
    """torchrun's report of the training process itself killed by a signal is no DataLoader
    worker's failure: no verdict, one note naming the pid, the signal and the check."""
    path = GLOO_LOG.parent / name
    pid = re.search(r"local_rank: 0 \(pid: (\d+)\)", path.read_text(encoding="utf-8")).group(1)
    result = dllogscan.scan(path)
    assert result.diagnoses == () and result.facts["signalled_pid"] == pid
    [note] = result.notes
    assert note.startswith("Line 17: the launcher (torchrun, torch.multiprocessing.spawn, DeepSpeed's) reports")
    assert f"was killed by {signal} (pid {pid})" in note
    assert "not a DataLoader worker" in note and check in note


def test_a_batch_row_carries_the_notes_a_single_scan_gives(tmp_path):
    """``dllogscan batch``'s JSON objects are the single scan's, plus the batch fields: the
    notes of a text with no diagnosis (its leads) included."""
    import json

    path = GLOO_LOG.parent / "torchrun-rank-sigkill.log"
    out = tmp_path / "rows.jsonl"
    dllogscan.scan_many([path], out=out, jobs=1)
    [row] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["diagnoses"] == [] and row["notes"] == list(dllogscan.scan(path).notes)


def test_the_batch_table_and_the_csv_have_the_first_note(tmp_path):
    """The one-row-per-source table (pandas, CSV, Parquet) keeps the first note in ``note``, read
    back from JSONL too; so does the single-file CSV."""
    pytest.importorskip("pandas")
    import csv
    import io

    import dllogscan.batch
    from dllogscan.report import render

    path = GLOO_LOG.parent / "torchrun-rank-sigbus.log"
    [note] = dllogscan.scan(path).notes
    df = dllogscan.scan_many([path], jobs=1)
    assert df.loc[0, "note"] == note and df.loc[0, "class"] is None
    out = tmp_path / "rows.jsonl"
    dllogscan.scan_many([path], out=out, jobs=1)
    assert dllogscan.batch.read_results(out).loc[0, "note"] == note
    [row] = csv.DictReader(io.StringIO(render([dllogscan.scan(path)], "csv")))
    assert row["note"] == note and row["class"] == ""
