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
            found += re.findall(r"@\w+|\]\(|!\[|https?://", text)
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
                                   "a|b", "`x`"])
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
