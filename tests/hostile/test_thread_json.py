"""Issue-thread JSON (GitHub, GitLab, Discourse, notebooks) of the right shape with the wrong
contents, and JSON that is no thread, through every way in: the flattening, ``dllogscan FILE``,
``paste``, the Python API and ``batch``. Each is read as a thread or as plain text, in bounded
time and memory, never a traceback or a lost row."""
from __future__ import annotations

import json

import pytest

from dllogscan.batch import Config, run_batch
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

