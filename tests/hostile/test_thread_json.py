"""Issue-thread JSON (GitHub, GitLab, Discourse, notebooks) of the right shape with the wrong
contents, and JSON that is no thread, through every way in: the flattening, ``dllogscan FILE``,
``paste``, the Python API and ``batch``. Each is read as a thread or as plain text, in bounded
time and memory, never a traceback or a lost row."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dllogscan.batch import Config, run_batch
from dllogscan.sources import documents
from dllogscan.sources.documents import MAX_DOCUMENT_BYTES, MAX_DOCUMENT_VALUES, flatten_bytes, json_values_bound
from tests.conftest import FIXTURES
from tests.hostile.test_issue_fields import BUS

ISSUE = {"title": "loader dies", "body": BUS, "comments": [{"body": "same here", "author": {"login": "b"}}]}


@pytest.mark.timeout(60)
def test_a_batch_row_says_which_document_it_read(tmp_path):
    """A thread among logs gets its row with the ``document`` it was read as, as ``dllogscan
    FILE --format json`` says: its evidence lines are those of the flattened text (before, the
    batch's objects left ``document`` out)."""
    (tmp_path / "issue.json").write_text(json.dumps(ISSUE))
    (tmp_path / "job.log").write_text(BUS + "\n")
    records = []
    run_batch([str(tmp_path)], records.append, Config(), progress=False)
    found = {r.result.source.rsplit("/", 1)[-1]: r.result for r in records}
    assert found["issue.json"].document == "github-issue" and found["job.log"].document is None
    assert found["issue.json"].to_dict()["document"] == "github-issue"
    assert [d.cls for d in found["issue.json"].diagnoses] == ["A"]


def _empty_comments(size: int) -> bytes:
    """An issue whose comments are ``{}`` until the document is ``size`` bytes."""
    head, tail = b'{"title": "x", "body": "", "comments": [', b"]}"
    return head + b",".join([b"{}"] * ((size - len(head) - len(tail)) // 3)) + tail


def test_past_the_value_cap_a_document_is_read_as_text(monkeypatch):
    """JSON of more values than ``MAX_DOCUMENT_VALUES`` is scanned as it is, never decoded."""
    doc = json.dumps({**ISSUE, "comments": [{"body": "x"}] * 9}).encode()
    monkeypatch.setattr(documents, "MAX_DOCUMENT_VALUES", json_values_bound(doc))
    assert flatten_bytes(doc)[1] == "github-issue"
    monkeypatch.setattr(documents, "MAX_DOCUMENT_VALUES", json_values_bound(doc) - 1)
    assert flatten_bytes(doc) == (doc, None)


@pytest.mark.parametrize("name", ["gh-third-comment.json", "gitlab.json", "discourse.json", "colab-bus-error.ipynb",
                                  "jupyter-interrupted-hang.ipynb"])
def test_real_exports_of_the_largest_size_stay_under_the_value_cap(name):
    """An export as dense as the shipped ones (11 to 21 bytes a value) is decoded up to
    ``MAX_DOCUMENT_BYTES``: the cap only stops what no tracker writes."""
    data = (FIXTURES / "documents" / name).read_bytes()
    assert json_values_bound(data) * MAX_DOCUMENT_BYTES <= MAX_DOCUMENT_VALUES * len(data)


_PEAK = """
import sys
import dllogscan
def hwm():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) >> 10
dllogscan.scan_text("warm up")
before = hwm()
result = dllogscan.scan_file(sys.argv[1])
print(result.document, hwm() - before)
"""


@pytest.mark.timeout(120)
def test_twenty_mib_of_empty_comments_costs_no_more_than_text(tmp_path):
    """Before, 20 MiB of ``{},`` comments were decoded (7 million dicts) and flattened to a
    180 MB text of empty sections: 1.3 GB of memory and 17 s. Past the value cap they are text."""
    path = tmp_path / "issue.json"
    path.write_bytes(_empty_comments(MAX_DOCUMENT_BYTES - 100))
    proc = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True, text=True, timeout=110)
    document, extra_mb = proc.stdout.split()
    assert document == "None" and int(extra_mb) < 300, proc.stdout
