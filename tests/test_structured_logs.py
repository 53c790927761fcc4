"""Structured log records: Docker's json-file driver, ``journalctl -o json``, Fluent Bit and Cloud
Logging exports carry each line as a JSON string. The line is read as its text: JSON escapes
undone (Go's ``\\u003c`` for ``<`` too), so signatures match and evidence reads as the log did."""
from __future__ import annotations

import json

import pytest

import dllogscan
from dllogscan.normalize import lines
from dllogscan.signatures.database import json_escaped
from dllogscan.signatures.loader import load_database

WRITE = "RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)\n"
FRAME = '  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop\n'
EXITED = "RuntimeError: DataLoader worker (pid(s) 1010) exited unexpectedly\n"


def docker(line: str, stamp: str = "2026-11-30T06:00:00.000000001Z") -> str:
    """One record as Docker's json-file driver writes it (Go escapes <, > and & in strings)."""
    record = json.dumps({"log": line, "stream": "stderr", "time": stamp})
    return record.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") + "\n"


def test_docker_json_file_log_is_diagnosed_by_its_signature_with_clean_evidence():
    log = "".join(docker(f"step {i} loss 0.5\n") for i in range(20)) + docker(FRAME) + docker(WRITE)
    [d] = dllogscan.scan_text(log, classifier="off").diagnoses
    assert (d.cls, d.signatures) == ("A", ("A.shm-full.write-to-file",))
    assert d.facts["path"] == "/torch_18692_1954506624"
    assert d.evidence[0].line == 22
    assert d.evidence[0].text == WRITE.strip()


@pytest.mark.parametrize("record", [
    {"MESSAGE": EXITED, "_HOSTNAME": "node7", "__REALTIME_TIMESTAMP": "1764482400000000"},  # journalctl -o json
    {"textPayload": EXITED, "severity": "ERROR"},  # Cloud Logging export
    {"jsonPayload": {"message": EXITED}, "severity": "ERROR"},
    {"message": EXITED, "@timestamp": "2026-11-30T06:00:00Z"},  # Fluent Bit / Logstash
    {"msg": EXITED, "level": "error"},
])
def test_other_shippers_records(record):
    [d] = dllogscan.scan_text(json.dumps(record) + "\n", classifier="off").diagnoses
    assert d.cls == "B" and d.facts["pid"] == "1010"
    assert d.evidence[0].text == EXITED.strip()


def test_a_record_with_a_multi_line_message_gives_each_line_a_view():
    record = json.dumps({"MESSAGE": FRAME + WRITE})
    texts, _ = lines.views(record.encode())
    assert texts == [FRAME.strip(), WRITE.strip()]


@pytest.mark.parametrize("line", [
    '{"loss": 0.25, "epoch": 3}',  # a metrics line: no message field, kept as it is
    '{"log": 17}',  # not a string
    '{"log": "unterminated',
    '{"a": ' * 100_000 + "1" + "}" * 100_000,  # nesting past the parser's recursion limit
    '[{"log": "x"}]',
])
def test_lines_that_are_not_records_are_left_as_they_are(line):
    assert lines.record_text(line) is None
    texts, _ = lines.views(line)
    assert texts == [line[: lines.MAX_VIEW_CHARS]]


def test_record_lines_leave_the_plain_fast_path():
    assert not lines.plain_lines(b'step 1\n{"log":"x"}\n')
    assert not lines.plain_line(b'{"log":"x"}')
    assert lines.plain_lines(b"step 1\n{loss: 1}\n")


def test_keywords_are_searched_in_their_json_escaped_spelling_too():
    assert json_escaped("</torch_") == "\\u003c/torch_"
    db = load_database()
    assert "\\u003c/torch_" in db.by_keyword
    assert db.by_keyword["\\u003c/torch_"] == db.by_keyword["</torch_"]


def test_a_silence_is_measured_in_a_docker_log_from_the_records_own_timestamps():
    """Steps every 2 s, then 3 h of nothing before the container is stopped: a hang, cited by
    the last progress line and the line that ends the silence, both as the log printed them."""
    import datetime

    start = datetime.datetime(2026, 11, 30, 6, 0, 0)

    def stamp(seconds: float) -> str:
        return (start + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.000000000Z")

    log = "".join(docker(f"Epoch 1: step {i}/5000 loss=0.{i % 97:02d}\n", stamp(2 * i)) for i in range(200))
    log += docker("Received SIGTERM, shutting down\n", stamp(400 + 3 * 3600))
    [d] = dllogscan.scan_text(log).diagnoses
    assert (d.cls, d.subclass) == ("E", "hang")
    assert [(e.line, e.text) for e in d.evidence] == [
        (200, "Epoch 1: step 199/5000 loss=0.05"), (201, "Received SIGTERM, shutting down")]
