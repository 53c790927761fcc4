"""Issue exports whose fields have the wrong JSON type (``"body": 5``) are still read as text:
no traceback in scan, paste, report, explain or the server (issue 12, section 2)."""
from __future__ import annotations

import json

import pytest

from dllogscan.sources.documents import flatten_bytes
from tests.hostile.clirun import cli, no_traceback

BUS = "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error."
ODD_EXPORTS = [
    {"title": "x", "body": 5},
    {"title": "x", "body": [BUS, 2], "comments": [{"body": {"text": BUS}, "author": {"login": 7}}, {"body": 3}]},
    {"title": "x", "description": 5.5, "notes": [{"body": [1, 2]}, {"body": None}, 5]},
    {"title": 7, "post_stream": {"posts": [{"cooked": 5, "post_number": [1]}, {"raw": 3}, "x"]}},
    {"title": "x", "body": True, "user": ["a"]},
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("doc", ODD_EXPORTS)
def test_flattening_reads_any_field_type(doc):
    flat, kind = flatten_bytes(json.dumps(doc).encode())
    assert kind is not None
    assert flat.decode().startswith("# ")

#: notebooks whose cells hold the wrong types: ``outputs`` a number, a string, an object, null
ODD_NOTEBOOKS = [
    {"nbformat": 4, "cells": [{"source": BUS, "outputs": 5}]},
    {"nbformat": 4, "cells": [{"source": [BUS], "outputs": "x"}, {"source": 5, "outputs": {"a": 1}}]},
    {"nbformat": 3, "worksheets": [5, {"cells": 5}, {"cells": [5, {"input": BUS, "outputs": 5}]}]},
    {"nbformat": 4, "cells": [{"source": BUS, "outputs": None}, {"outputs": [5, {"output_type": 7}]}]},
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("doc", ODD_NOTEBOOKS)
def test_a_notebook_reads_any_outputs_type(doc):
    """A cell's ``outputs`` that is no list is no outputs; its source is still read (before, a
    number there was ``TypeError: 'int' object is not iterable`` from every command)."""
    flat, kind = flatten_bytes(json.dumps(doc).encode())
    assert kind == "notebook" and flat.decode().startswith("--- cell 1 ---\n") and BUS in flat.decode()


@pytest.mark.timeout(10)
def test_a_list_body_keeps_its_text():
    flat, kind = flatten_bytes(json.dumps(ODD_EXPORTS[1]).encode())
    assert kind == "github-issue" and BUS in flat.decode()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [[], ["report"], ["explain"]])
def test_cli_commands_read_a_numeric_body(tmp_path, command):
    path = tmp_path / "issue.json"
    path.write_text(json.dumps({"title": "x", "body": 5}))
    proc = cli(*command, str(path))
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.timeout(60)
def test_paste_reads_a_numeric_description():
    proc = cli("paste", "-f", "json", stdin=json.dumps({"title": "x", "description": 5}).encode())
    no_traceback(proc)
    assert proc.returncode == 0 and json.loads(proc.stdout)["document"] == "gitlab-issue"


@pytest.mark.timeout(30)
def test_server_answers_200_for_a_numeric_body():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dllogscan.serve.app import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1:8765")
    r = client.post("/api/diagnose", json={"text": json.dumps({"title": "x", "body": 5})})
    assert r.status_code == 200 and r.json()["document"] == "github-issue"
    r = client.post("/api/diagnose-file", content=json.dumps({"title": "x", "body": [BUS]}).encode(),
                    headers={"content-type": "application/octet-stream"})
    assert r.status_code == 200 and r.json()["diagnoses"][0]["class"] == "A"
