"""Backticks in a file name or a fact value cannot end their inline code span in ``report`` or
``--format md``; no live @mention, link or image comes from input (issue 12, section 3)."""
from __future__ import annotations

import re

import pytest

from dllogscan.report.markdown import cell, code
from tests.hostile.clirun import cli, no_traceback

KILLED = "Killed process 4242 (`@evil [x](http://e.vil) ![i](http://e.vil/i.png)`) total-vm:1kB"


def spans(line: str) -> list[str]:
    """The texts outside code spans of one markdown line (CommonMark: a run of n backticks is
    closed by the next run of exactly n)."""
    outside, pos = [], 0
    while True:
        m = re.search(r"`+", line[pos:])
        if not m:
            outside.append(line[pos:])
            return outside
        start = pos + m.start()
        outside.append(line[pos:start])
        ticks = m.group()
        close = re.search(rf"(?<!`){ticks}(?!`)", line[start + len(ticks):])
        if not close:
            outside.append(line[start:])
            return outside
        pos = start + len(ticks) + close.end()


def live(markdown: str) -> list[str]:
    """Mentions, links and images outside code (fenced blocks skipped)."""
    found, fenced = [], False
    for line in markdown.splitlines():
        if re.match(r"^\s*(?:> )?\s*```", line):
            fenced = not fenced
            continue
        if fenced:
            continue
        for text in spans(line):
            found += re.findall(r"@\w+|\]\(|!\[|https?://|www\.|#\d|&#?\w+;|\bGH-\d", text, re.IGNORECASE)
    return found


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", ["a`b", "`", "``x``", "ends`", "`starts", "@alice [l](http://x)", "two\nlines"])
def test_code_span_holds_its_text(text):
    span = code(text)
    assert live(span) == []
    ticks = re.match(r"`+", span).group()
    inner = span[len(ticks):-len(ticks)]
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip():
        inner = inner[1:-1]
    assert inner == " ".join(text.splitlines())


@pytest.mark.timeout(10)
@pytest.mark.parametrize("value", ["node07", "2026-11-30", "A / bus-error", "@evil", "[x](http://e)", "www.evil.com",
                                   "a|b", "`x`", "GH-12", "#12"])
def test_table_cells(value):
    out = cell(value)
    assert live(out) == [] and "|" not in out.replace("\\|", "")


@pytest.fixture
def hostile_log(tmp_path):
    path = tmp_path / "job`@evil [l](e.vil) ![i](i.png).log"
    path.write_text("RuntimeError: DataLoader worker (pid 4242) exited unexpectedly with exit code 1.\n"
                    f"{KILLED}\n")
    return path


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["report"], ["-f", "md"]])
def test_report_and_md_have_nothing_live(hostile_log, command):
    proc = cli(*command, str(hostile_log)) if command[0] == "report" else cli(str(hostile_log), *command)
    no_traceback(proc)
    text = proc.stdout.decode()
    assert "4242" in text
    assert live(text) == [], text


def outside_code(markdown: str) -> str:
    """The text of ``markdown`` outside fenced blocks and code spans."""
    kept, fenced = [], False
    for line in markdown.splitlines():
        if re.match(r"^\s*(?:> )?\s*```", line):
            fenced = not fenced
            continue
        if not fenced:
            kept += spans(line)
    return "\n".join(kept)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("note", [
    "opening photos/<img/src=x/onerror=alert(1)>[x](http://e.vil)*b*_.jpg (line 2) failed",
    "host @evil said `ok` then ![i](http://e.vil/i.png) and a`b",
    "a stray ` backtick, then `` two `` and www.e.vil",
    "opening pytorch/pytorch#1.jpg, #77.jpg, GH-5.png and &#64;evil&#x40;x.jpg failed",
])
def test_a_note_quoting_input_has_nothing_live(note):
    from dllogscan.report.markdown import prose

    out = prose(note)
    assert live(out) == [] and not re.search(r"<\w|\*\w", outside_code(out)), out


def test_a_notes_own_commands_and_words_stay_as_written():
    from dllogscan.report.markdown import prose

    note = "Line 3: rerun with num_workers=0 (pid 12). Next: `dmesg | grep -i -E 'oom|killed process'` on that node."
    assert prose(note) == note.replace("num_workers=0", "`num_workers=0`")


#: (a log whose markdown quotes input, the words that quote it): a note quoting the file an
#: ``[Errno 24]`` names; a fix's reason filled with the exception a worker caught
QUOTING = [
    ("Before training, the script loads the photos into a list\n"
     "OSError: [Errno 24] Too many open files: 'photos/<img/src=x/onerror=alert(1)>[x](http://e.vil)@evil.jpg'\n",
     "open-files limit was hit opening"),
    ("Traceback (most recent call last):\nCaught www.e.vil in DataLoader worker process 0.\n"
     "RuntimeError: DataLoader worker (pid 1234) exited unexpectedly\n", "The worker raised `www.e.vil`"),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("log, quoted", QUOTING)
def test_md_quoting_crafted_input_has_nothing_live(tmp_path, log, quoted):
    path = tmp_path / "job.log"
    path.write_text(log, encoding="utf-8")
    proc = cli(str(path), "-f", "md")
    no_traceback(proc)
    text = proc.stdout.decode()
    assert quoted in text
    assert live(text) == [] and "<img" not in outside_code(text), text
