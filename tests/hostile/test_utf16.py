"""UTF-16 logs (Windows PowerShell 5.1 ``>``: a BOM and CRLF), BOM-less UTF-16 and UTF-32 are
decoded, not refused as binary; NUL-padded UTF-8 is not mistaken for UTF-16 (issue 12, section 2)."""
from __future__ import annotations

import codecs
import gzip
import io
import json

import pytest

from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from dllogscan.normalize.encoding import Transcoded, text_encoding
from tests.hostile.clirun import cli, no_traceback

LOG = ("PS C:\\train> python train.py\r\nEpoch 1:  10%|#         | 10/100\r\n"
       "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\r\n"
       "RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error. Größe 😀\r\n")
ENCODED = {
    "powershell": codecs.BOM_UTF16_LE + LOG.encode("utf-16-le"),
    "utf-16-be-bom": codecs.BOM_UTF16_BE + LOG.encode("utf-16-be"),
    "utf-16-le": LOG.encode("utf-16-le"),
    "utf-16-be": LOG.encode("utf-16-be"),
    "utf-32": LOG.encode("utf-32"),
    "gzip-powershell": gzip.compress(codecs.BOM_UTF16_LE + LOG.encode("utf-16-le")),
}


def run(data: bytes):
    return pipeline.run(sources.from_bytes(data, "job.log"), pipeline.get_scanner())


@pytest.mark.timeout(10)
@pytest.mark.parametrize("kind", ENCODED)
def test_decoded_and_diagnosed(kind):
    result = run(ENCODED[kind])
    assert result.error is None and result.lines == 4
    top = result.diagnoses[0]
    assert top.cls == "A" and [e.line for e in top.evidence] == [3, 4]
    assert top.evidence[-1].text.endswith("Größe 😀")


@pytest.mark.timeout(30)
def test_powershell_log_through_the_cli(tmp_path):
    path = tmp_path / "ps.log"
    path.write_bytes(ENCODED["powershell"])
    proc = cli(str(path), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1 and json.loads(proc.stdout)["diagnoses"][0]["class"] == "A"


@pytest.mark.timeout(10)
def test_a_utf16_issue_export_is_flattened():
    doc = json.dumps({"title": "crash", "body": LOG}).encode("utf-16")
    result = run(doc)
    assert result.document == "github-issue" and result.diagnoses[0].cls == "A"


@pytest.mark.timeout(10)
def test_a_utf16_bom_then_nul_is_not_utf32():
    """Found by the long Hypothesis run: ``FF FE`` + U+0000 in UTF-16LE is ``FF FE 00 00``, the
    UTF-32LE BOM."""
    text = "\x00" + LOG
    assert text_encoding(codecs.BOM_UTF16_LE + text.encode("utf-16-le")) == "utf-16"
    result = run(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    assert result.diagnoses[0].cls == "A" and result.lines == 4


@pytest.mark.timeout(10)
@pytest.mark.parametrize("head", [b"", b"plain ascii log line\n" * 4, b"x\x00" * 3 + b"\x00" * 200,
                                  ("ok line\n" * 20).encode() + b"\x00" * 4096, "日本語のログ\n".encode() * 10])
def test_utf8_and_padding_stay_utf8(head):
    assert text_encoding(head) is None


@pytest.mark.timeout(10)
def test_transcoding_streams_in_small_reads():
    data = codecs.BOM_UTF16_LE + (LOG * 5000).encode("utf-16-le")
    reader = Transcoded(io.BytesIO(data), "utf-16")
    parts = []
    while piece := reader.read(4097):
        parts.append(piece)
    assert b"".join(parts).decode("utf-8") == LOG * 5000


@pytest.mark.timeout(30)
def test_a_utf16_upload_to_the_page_shows_readable_context():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from dllogscan.serve.app import create_app

    r = TestClient(create_app(), base_url="http://127.0.0.1:8765").post("/api/diagnose-file", content=ENCODED["powershell"],
                                      headers={"content-type": "application/octet-stream"})
    doc = r.json()
    assert r.status_code == 200 and doc["diagnoses"][0]["class"] == "A"
    shown = {x["line"]: x["text"] for x in doc["context"][0]}
    assert shown[4].startswith("RuntimeError: DataLoader worker (pid 363)") and shown[4].endswith("Größe 😀")
