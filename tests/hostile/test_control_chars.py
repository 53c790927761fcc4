"""C1 controls (U+009B CSI, U+009D OSC), bidi overrides (U+202E) and escape sequences in log
lines, file names and archive member names reach no terminal and no format raw: log text loses
them, names keep them as visible escapes (issue 12, section 3)."""
from __future__ import annotations

import io
import json
import re
import tarfile

import pytest

from dllogscan.normalize.lines import clean, printable_line
from dllogscan.core.printable import escape
from tests.hostile.clirun import cli, no_traceback

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                    "\u00ad\u200b-\u200d\u2028\u2029\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
LINE = ("RuntimeError: DataLoader worker (pid 1) is killed by signal: Bus error. "
        "\u009b31m csi \u009d0;title\u0007 osc \u202eevil\u202c \u2066iso\u2069 \x1b[2J")
NAME = "job\x1b]0;pwned\x07\u202egol\u200b.log"  # \u200b: job.log and job\u200b.log would look alike


@pytest.mark.timeout(10)
def test_log_text_loses_them():
    text = clean(LINE.encode())
    assert not UNSAFE.search(text) and "csi" in text and "evil" in text
    assert not UNSAFE.search(printable_line(LINE))
    # the one-character CSI and OSC go whole, as ESC [ and ESC ] do (before: "31m csi", "0;title osc")
    for shown in (text, printable_line(LINE)):
        assert "31m" not in shown and "0;title" not in shown and "2J" not in shown, shown


@pytest.mark.timeout(10)
@pytest.mark.parametrize("name, shown", [("a\x1b[31mb", "a\\x1b[31mb"), ("x\u202ey", "x\\u202ey"),
                                         ("bad\udcff.log", "bad\\xff.log"), ("c\u009bd", "c\\x9bd"), ("ok.log", "ok.log"),
                                         ("a\u200bb\u2028c", "a\\u200bb\\u2028c"), ("t\U000e0041", "t\\U000e0041")])
def test_names_are_escaped(name, shown):
    assert escape(name) == shown


@pytest.fixture
def hostile(tmp_path):
    path = tmp_path / NAME
    path.write_text(LINE + "\n")
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("fmt", ["text", "json", "jsonl", "md", "csv", "github"])
def test_every_format(hostile, fmt):
    proc = cli(str(hostile), "-f", fmt)
    no_traceback(proc)
    out = proc.stdout.decode()
    assert proc.returncode == 1 and "bus-error" in out
    if fmt in ("json", "jsonl"):
        doc = json.loads(out.splitlines()[0] if fmt == "jsonl" else out)
        assert doc["source"].endswith("job\\x1b]0;pwned\\x07\\u202egol\\u200b.log")
        out = json.dumps(doc, ensure_ascii=False)
    assert not UNSAFE.search(out.replace("\n", "").replace("\t", "")), repr(out)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["report"], ["explain"], ["--redact"]])
def test_other_commands(hostile, command):
    proc = cli(*command, str(hostile))
    no_traceback(proc)
    assert not UNSAFE.search(proc.stdout.decode().replace("\n", ""))


@pytest.mark.timeout(60)
def test_error_lines_escape_the_name(tmp_path):
    proc = cli(str(tmp_path / NAME))
    err = no_traceback(proc)
    assert proc.returncode == 2 and not UNSAFE.search(err.replace("\n", ""))
    assert "\\x1b]0;pwned" in err


@pytest.mark.timeout(60)
def test_archive_member_names(tmp_path):
    archive = tmp_path / "a.tar"
    with tarfile.open(archive, "w") as tar:
        data = (LINE + "\n").encode()
        info = tarfile.TarInfo(NAME)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    for args in (["--format", "jsonl"], ["--out", str(tmp_path / "r.csv")]):
        proc = cli("batch", str(archive), *args)
        no_traceback(proc)
        out = proc.stdout.decode() + (tmp_path / "r.csv").read_text() if "--out" in args else proc.stdout.decode()
        assert "\\x1b]0;pwned" in out and not UNSAFE.search(out.replace("\n", ""))


@pytest.mark.timeout(60)
def test_usage_error_lines_escape_the_name(tmp_path):
    out = tmp_path / "no\x1b[2Jdir" / "x.json"
    proc = cli(str(tmp_path / "a.log"), "--out", str(out))
    err = no_traceback(proc)
    assert proc.returncode == 2 and "no\\x1b[2Jdir" in err and not UNSAFE.search(err.replace("\n", ""))


#: a text with no DataLoader verdict whose set-aside note quotes the file ``[Errno 24]`` names
NOTE_LOG = ("Loading photos\n"
            "RuntimeError: unable to open shared memory object </torch_1_2_3> in read-write mode: "
            "Too many open files (24)\n"
            "foo: Too many open files: '[link=http://e.vil/]a[/link][/x]b.jpg'\n")


@pytest.mark.timeout(60)
def test_a_note_quoting_input_is_no_terminal_markup(tmp_path):
    from rich.console import Console

    from dllogscan import scan_text
    from dllogscan.report.terminal import print_results

    result = scan_text(NOTE_LOG)
    assert result.notes and "[link=" in result.notes[0]
    buf = io.StringIO()
    print_results([result], Console(file=buf, force_terminal=True, width=200, highlight=False))
    shown = buf.getvalue()
    assert "\x1b]8;" not in shown and "[link=http://e.vil/]a[/link][/x]b.jpg" in shown, repr(shown)
    path = tmp_path / "job.log"
    path.write_text(NOTE_LOG)
    proc = cli(str(path))
    no_traceback(proc)
    assert "[/x]b.jpg" in proc.stdout.decode().replace("\n", "")
