"""An input that fails on its first read (``/proc/self/mem``, a failing network filesystem) or
in the middle of a document read ahead (a truncated gzip of an issue JSON) is one ``Error:``
line and a documented exit code, never a traceback (issue 12, section 2)."""
from __future__ import annotations

import errno
import gzip
import io
import json
import os

import pytest

import dllogscan
from dllogscan.pipeline import runner as pipeline
from dllogscan.sources import streams as sources
from tests.hostile.clirun import cli, no_traceback

BUS = "RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error."
needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")


class FailingFile(io.RawIOBase):
    """A file on a filesystem that answers every read with EIO."""

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        raise OSError(errno.EIO, "Input/output error")


@needs_proc
@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [[], ["report"], ["explain"]])
def test_first_read_fails_in_the_cli(command):
    proc = cli(*command, "/proc/self/mem")
    err = no_traceback(proc)
    assert proc.returncode == 2
    assert err.strip().splitlines() == ["Error: /proc/self/mem: cannot read: Input/output error"]


@needs_proc
@pytest.mark.timeout(10)
def test_first_read_fails_in_the_api():
    result = dllogscan.scan("/proc/self/mem")
    assert result.error == "/proc/self/mem: cannot read: Input/output error" and not result.diagnoses


@pytest.mark.timeout(10)
def test_a_failing_filesystem_is_a_result_error(tmp_path, monkeypatch):
    path = tmp_path / "job.log"
    path.write_text(BUS)
    monkeypatch.setattr(sources, "open", lambda *a, **k: FailingFile(), raising=False)
    result = dllogscan.scan(path)
    assert result.error == f"{path}: cannot read: Input/output error"


@pytest.mark.timeout(10)
def test_explain_exits_2_on_a_binary_input(tmp_path):
    path = tmp_path / "blob.log"
    path.write_bytes(bytes(range(32)) * 64)
    proc = cli("explain", str(path))
    assert proc.returncode == 2 and no_traceback(proc).startswith(f"Error: {path}: looks binary")


@pytest.mark.timeout(30)
@pytest.mark.parametrize("doc", [json.dumps({"title": "x", "body": BUS + "\n" + "y" * 300_000}).encode(),
                                 b"<html><pre>" + BUS.encode() + b"\n" + b"z" * 300_000])
@pytest.mark.parametrize("name", ["t.gz", "t"])  # "t": a name that "truncated ..." itself starts with
def test_a_truncated_compressed_document_keeps_what_came_before(doc, name):
    packed = gzip.compress(doc)
    result = pipeline.run(sources.from_bytes(packed[: len(packed) // 2], name), pipeline.get_scanner())
    assert result.error == f"{name}: truncated compressed stream (ended before its end marker)"
    assert result.lines >= 1
    if doc.startswith(b"{"):
        assert result.diagnoses[0].cls == "A"
