"""A structured log record is decoded from JSON (``normalize.record_text``), so its escapes can
carry what raw bytes never do: lone surrogates (``\\ud800``), ANSI and C1 controls and bidi
overrides spelled as ``\\u001b``, ``\\u009b``, ``\\u202e``. None of them reaches an output raw, and no
format fails on them."""
from __future__ import annotations

import json
import re

import pytest

from tests.hostile.clirun import cli, no_traceback

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
MESSAGE = ("\ud800\u001b[31mRuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error."
           " \u009b2J\u202eevil\u202c\u001b[0m\n")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "md", "csv", "github"])
def test_escapes_in_a_record_reach_no_output(tmp_path, fmt):
    log = tmp_path / "container-json.log"
    log.write_text(json.dumps({"log": MESSAGE, "stream": "stderr"}) + "\n", encoding="ascii")
    proc = cli(str(log), "--format", fmt)
    no_traceback(proc)
    assert proc.returncode == 1  # a diagnosis was found
    out = proc.stdout.decode("utf-8")
    flat = re.sub(r"[\s│]+", " ", out)  # the terminal wraps long lines inside its boxes
    assert "killed by signal: Bus error" in flat and "evil" in flat
    assert not UNSAFE.search(out.replace("\n", "").replace("\r", "")), repr(out)
    if fmt == "json":
        [d] = json.loads(out)["diagnoses"]
        assert d["class"] == "A"
        assert d["evidence"][0]["text"].startswith("\ufffd")  # the lone surrogate, replaced


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name, body", [
    ("issue.json", json.dumps({"title": "bus error \ud800", "html_url": "https://github.com/o/r/issues/1",
                               "body": "RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error. \udfff"})),
    ("page.html", "<html><body><h1>bus error &#xd800;</h1><pre>RuntimeError: DataLoader worker (pid 7) is "
                  "killed by signal: Bus error. &#55296;</pre></body></html>"),
])
def test_lone_surrogates_in_an_issue_export_or_a_page(tmp_path, name, body):
    """An issue export (JSON) and a saved page (HTML character references) can spell a lone
    surrogate too: every format still writes, the rest of the line intact."""
    path = tmp_path / name
    path.write_text(body, encoding="ascii")
    for fmt in ("text", "json", "md", "csv"):
        proc = cli(str(path), "--format", fmt)
        no_traceback(proc)
        assert proc.returncode == 1, (fmt, proc.stderr)
        assert not UNSAFE.search(proc.stdout.decode("utf-8").replace("\n", "").replace("\r", ""))
    proc = cli("paste", "--format", "json", stdin=path.read_bytes())
    no_traceback(proc)
    [d] = json.loads(proc.stdout)["diagnoses"]
    assert d["class"] == "A" and "killed by signal: Bus error" in d["evidence"][0]["text"]


def test_the_api_takes_text_with_lone_surrogates():
    """``dllogscan.scan_text`` / ``scan`` take a ``str`` that may come from JSON (``\\ud800``) or
    from bytes decoded with ``surrogateescape`` (``\\udcff``): the first becomes U+FFFD, the second
    its byte again; neither raises (``core.utf8.to_utf8``)."""
    import dllogscan
    from dllogscan.core.utf8 import to_utf8

    line = "RuntimeError: DataLoader worker (pid 7) is killed by signal: Bus error."
    for text in ("\ud800 " + line, "\udcff " + line):
        for scan in (dllogscan.scan_text, dllogscan.scan):
            [d] = scan(text).diagnoses
            assert d.cls == "A" and d.evidence[0].text == "\ufffd " + line
    assert to_utf8("a\udcffb") == b"a\xffb"
    assert to_utf8("a\ud800\udcffb") == "a\ufffd".encode() + b"\xffb"
