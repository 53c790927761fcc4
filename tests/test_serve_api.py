"""The triage API in-process: the contract object, size caps (413), uploads, redaction."""
from __future__ import annotations

import gzip
import json

import jsonschema
import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from dllogscan.serve.app import create_app  # noqa: E402
from tests.conftest import FIXTURES  # noqa: E402

SCHEMA = json.loads((FIXTURES / "diagnosis.schema.json").read_text())
FILE = {"Content-Type": "application/octet-stream"}
LOG = "step 1\nstep 2\nRuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. It is possible\nstep 3\n"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(max_bytes=20_000), base_url="http://127.0.0.1:8765")


def test_diagnose_follows_the_contract(client):
    r = client.post("/api/diagnose", json={"text": LOG})
    assert r.status_code == 200
    doc = r.json()
    jsonschema.validate(doc, SCHEMA)
    assert doc["source"] == "paste" and doc["diagnoses"][0]["class"] == "A"
    assert doc["diagnoses"][0]["evidence"][0]["line"] == 3
    assert [x["line"] for x in doc["context"][0] if x["evidence"]] == [3]
    assert "**Verdict:** class A" in doc["markdown"]


def test_classes_named_for_the_page(client):
    names = client.get("/api/classes").json()
    assert sorted(names) == list("ABCDEFGH")
    assert names["G"] == "the dataset code failed in the main process (no worker)"


def test_issue_json_pasted_into_the_page(client):
    text = (FIXTURES / "documents" / "gh-third-comment.json").read_text()
    doc = client.post("/api/diagnose", json={"text": text}).json()
    assert doc["document"] == "github-issue" and doc["diagnoses"][0]["subclass"] == "getitem"
    assert any("Caught KeyError" in x["text"] for x in doc["context"][0] if x["evidence"])


def test_oversized_by_declared_length_and_by_actual_body(client):
    r = client.post("/api/diagnose", json={"text": "x" * 30_000})
    assert r.status_code == 413 and "limit is 20000 bytes" in r.json()["error"]
    chunks = (b'{"text": "' + b"y" * 10_000 for _ in range(5))  # chunked: no Content-Length
    r = client.post("/api/diagnose", content=chunks, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]
    r = client.post("/api/diagnose-file", content=b"z" * 30_000, headers=FILE)
    assert r.status_code == 413


def test_gzip_bomb_upload_is_refused(client):
    r = client.post("/api/diagnose-file", content=gzip.compress(b"a\n" * 200_000), headers=FILE)
    assert r.status_code == 413


def test_bad_bodies_are_400_json(client):
    for body in (b"not json", b'{"txt": 1}', b"[]"):
        r = client.post("/api/diagnose", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and "text" in r.json()["error"]


def test_upload_gzip_and_redact(client):
    r = client.post("/api/diagnose-file?redact=1",
                    content=gzip.compress(("/home/alice/run 10.1.2.3\n" + LOG).encode()), headers=FILE)
    doc = r.json()
    assert doc["diagnoses"][0]["class"] == "A"
    blob = json.dumps(doc)
    assert "alice" not in blob and "10.1.2.3" not in blob and "<user-1>" in blob


def test_redact_is_a_boolean_or_refused(client):
    """Before: "false" and "yes" redacted (any truthy value), and ?redact=true did not."""
    text = "/home/alice/run 10.1.2.3\n" + LOG
    for value in ("false", "yes", 1, None):
        r = client.post("/api/diagnose", json={"text": text, "redact": value})
        assert r.status_code == 400 and "redact must be true or false" in r.json()["error"]
    assert "alice" in json.dumps(client.post("/api/diagnose", json={"text": text, "redact": False}).json())
    for query, hidden in (("true", True), ("TRUE", True), ("0", False), ("false", False)):
        r = client.post(f"/api/diagnose-file?redact={query}", content=text.encode(), headers=FILE)
        assert r.status_code == 200 and ("alice" not in json.dumps(r.json())) == hidden, query
    assert client.post("/api/diagnose-file?redact=yes", content=text.encode(), headers=FILE).status_code == 400


def test_page_is_self_contained(client):
    html = client.get("/").text
    assert 'id="paste"' in html and 'id="diagnose"' in html
    for asset in ("/static/app.js", "/static/style.css"):
        assert client.get(asset).status_code == 200
    for text in (html, client.get("/static/app.js").text, client.get("/static/style.css").text):
        assert "http://" not in text and "https://" not in text  # no CDN, works offline
