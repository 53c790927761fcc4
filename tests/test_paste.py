"""``dllogscan paste`` and ``dllogscan -`` from a pipe: documents, caps, prompt, bad input."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES

DOCS = FIXTURES / "documents"


def cli(*args: str, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dllogscan", *args], input=stdin,
                          capture_output=True, timeout=120)


def test_paste_of_a_github_issue_json():
    proc = cli("paste", "-f", "json", stdin=(DOCS / "gh-third-comment.json").read_bytes())
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["source"] == "paste" and doc["document"] == "github-issue"
    assert doc["diagnoses"][0]["subclass"] == "getitem"
    assert b"Ctrl-D" not in proc.stderr  # a pipe gets no prompt


def test_dash_reads_the_same_documents():
    for name, cls in (("discourse.json", "A"), ("gitlab.json", "B"), ("paste-fences-quotes.md", "A")):
        proc = cli("-", "-f", "json", stdin=(DOCS / name).read_bytes())
        assert json.loads(proc.stdout)["diagnoses"][0]["class"] == cls, name


def test_endless_stream_is_cut_with_a_clear_message():
    proc = cli("paste", "--max-bytes", "5000", "-f", "md",
               stdin=b"RuntimeError: DataLoader worker (pid 363) is killed by signal: Bus error.\n" + b"y\n" * 100000)
    assert proc.returncode == 1
    assert b"Error: paste: input cut at 5000 bytes (--max-bytes)" in proc.stderr and b"Traceback" not in proc.stderr
    assert b"class A" in proc.stdout


def test_binary_paste_is_one_line_exit_2():
    proc = cli("paste", stdin=bytes(range(256)) * 50)
    assert proc.returncode == 2 and proc.stderr.count(b"\n") == 1 and b"looks binary" in proc.stderr


def test_prompt_on_a_terminal(monkeypatch, capsys):
    import io

    from dllogscan import triage

    class Stdin:
        buffer = type("B", (), {"raw": io.BytesIO(b"hello\n")})()

        @staticmethod
        def isatty() -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Stdin)
    result = triage.read_paste()
    assert "Ctrl-D" in capsys.readouterr().err
    assert result.source == "paste" and result.lines == 1 and not result.diagnoses
