"""``dllogscan.scan`` guesses without raising; ``scan_text`` never opens a path and
``scan_file`` never reads its argument as text (issue 12, section 2)."""
from __future__ import annotations

import pytest

import dllogscan

BUS = "RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error."


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", ["x" * 300, BUS + " " + "y" * 300, "stray\x00nul in a line of text", "/" + "d/" * 3000])
def test_the_guessing_form_never_raises(text):
    result = dllogscan.scan(text)
    assert result.error is None and result.source == "text"


@pytest.mark.timeout(10)
def test_a_long_one_line_log_is_diagnosed():
    assert dllogscan.scan(BUS + " " + "y" * 300).diagnoses[0].cls == "A"


@pytest.mark.timeout(10)
def test_scan_text_never_reads_a_path(tmp_path):
    secret = tmp_path / "secret.log"
    secret.write_text(BUS)
    result = dllogscan.scan_text(str(secret))
    assert result.lines == 1 and not result.diagnoses and result.source == "text"
    assert dllogscan.scan(str(secret)).diagnoses  # the guessing form reads it, as documented


@pytest.mark.timeout(10)
def test_scan_text_takes_str_and_bytes_and_a_name():
    assert dllogscan.scan_text(BUS, name="paste").source == "paste"
    assert dllogscan.scan_text(BUS.encode()).diagnoses[0].cls == "A"


@pytest.mark.timeout(10)
def test_scan_file_never_reads_text(tmp_path):
    result = dllogscan.scan_file(BUS)
    assert result.error is not None and not result.diagnoses
    assert dllogscan.scan_file("x" * 300).error == "x" * 300 + ": cannot read: File name too long"
    log = tmp_path / "job.log"
    log.write_text(BUS)
    assert dllogscan.scan_file(str(log)).diagnoses[0].cls == "A"


@pytest.mark.timeout(10)
def test_exported():
    assert {"scan_text", "scan_file"} <= set(dllogscan.__all__)


@pytest.mark.timeout(30)
def test_the_server_never_reads_a_posted_path(tmp_path):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dllogscan.serve.app import create_app

    secret = tmp_path / "secret.log"
    secret.write_text(BUS)
    doc = TestClient(create_app(), base_url="http://127.0.0.1:8765").post("/api/diagnose", json={"text": str(secret)}).json()
    assert doc["diagnoses"] == [] and doc["lines"] == 1 and doc["source"] == "paste"


@pytest.mark.timeout(30)
def test_an_empty_string_is_empty_text():
    """Before: ``Path("")`` is the current folder, so ``scan("")`` was read as a path and came
    back with the error ": no such file" (no name at all) instead of nothing found."""
    result = dllogscan.scan("")
    assert (result.source, result.error, result.diagnoses, result.lines) == ("text", None, (), 0)
