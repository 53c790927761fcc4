"""A ready issue reply: verdict and confidence, quoted evidence, ranked fixes with their commands,
and, when the verdict is unsure, the one command to run next to settle it."""
from __future__ import annotations

import re
from typing import Sequence

from ..core.classes import name_of
from ..core.models import Diagnosis, ScanResult
from ..core.printable import strip_controls

def fence(lines: Sequence[str], lang: str = "", prefix: str = "") -> list[str]:
    """A fenced block long enough not to be closed by backticks inside ``lines``."""
    ticks = "```"
    while any(ticks in line for line in lines):
        ticks += "`"
    return [f"{prefix}{ticks}{lang}"] + [f"{prefix}{line}" for line in lines] + [f"{prefix}{ticks}"]


BACKTICKS_RE = re.compile(r"`+")


def code(text: str) -> str:
    """``text`` as an inline code span that nothing in it can end: the delimiter is one backtick
    longer than the longest run inside, padded with a space when the text starts or ends with a
    backtick. Inside a code span, ``@mentions``, links and images are inert. A span is one line,
    so line breaks become spaces."""
    text = " ".join(text.splitlines())
    ticks = "`" * (max((len(m) for m in BACKTICKS_RE.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


PLAIN_CELL_RE = re.compile(r"[\w .,()+/-]*")


def cell(value: object) -> str:
    """A table cell from input (a node, a day, a signature id): as is when it is plain words,
    else an inline code span with ``|`` escaped, so no cell can hold a live link or mention."""
    text = str(value)
    if PLAIN_CELL_RE.fullmatch(text) and not re.search(r"//|www\.|\bGH-\d", text, re.IGNORECASE):
        return text
    return code(text).replace("|", "\\|")


#: what makes a word of prose live in markdown: a link or image bracket, an HTML tag, a mention,
#: emphasis, a table pipe, a backslash escape, a backtick, a URL, and on GitHub an issue reference
#: (``#12``, ``owner/repo#12``, ``GH-12``: it links, and adds an event to that issue) or an entity
#: (``&#64;name`` is decoded before mentions are found)
LIVE_WORD_RE = re.compile(r"[\[\]<>@!*_|\\`#&]|://|www\.|\bGH-\d", re.IGNORECASE)


def _code_spans(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_code): CommonMark's code spans (a run of n backticks closed by
    the next run of exactly n) and the prose between them; an unclosed run is prose."""
    out, pos, prose_from = [], 0, 0
    while (m := BACKTICKS_RE.search(text, pos)) is not None:
        close = re.compile(rf"(?<!`){m.group()}(?!`)").search(text, m.end())
        if close is None:
            pos = m.end()
            continue
        out += [(text[prose_from:m.start()], False), (text[m.start():close.end()], True)]
        pos = prose_from = close.end()
    return out + [(text[prose_from:], False)]


def prose(text: str) -> str:
    """A note as markdown: its own code spans (commands) kept; any other word that markdown would
    make live (a link, an image, an HTML tag, a mention, emphasis, a URL, a stray backtick) put in
    a code span of its own. A note may quote input, a file name or a line's words, and what leaves
    the tool is pasted into issues."""
    return "".join(piece if is_code else re.sub(
        r"\S+", lambda w: code(w.group()) if LIVE_WORD_RE.search(w.group()) else w.group(), piece)
        for piece, is_code in _code_spans(text))


def verdict(r: ScanResult) -> str:
    if not r.diagnoses:
        return ("**Verdict:** no DataLoader worker failure diagnosed in this input; see the notes below."
                if r.notes else "**Verdict:** no DataLoader worker failure found in this input.")
    d = r.diagnoses[0]
    sub = f" / {d.subclass}" if d.subclass else ""
    return (f"**Verdict:** class {d.cls}{sub}, {name_of(d.cls)}: {d.title} "
            f"(confidence **{d.confidence:.0%}**).")


def _diagnosis(d: Diagnosis, rank: int) -> list[str]:
    sub = f" / {d.subclass}" if d.subclass else ""
    out = [f"### {rank}. Class {d.cls}{sub}: {d.title}", "",
           f"Confidence **{d.confidence:.0%}** ({name_of(d.cls)})"
           + (f", seen {d.count} times" if d.count > 1 else "") + ".", ""]
    if d.evidence:
        out += ["Evidence:", ""]
        out += fence([f"{e.line}: {e.text}" for e in d.evidence], "text", "> ")
        out.append("")
    out += [f"- {prose(n)}" for n in d.notes]
    if d.notes:
        out.append("")
    if d.fixes:
        out += ["What to do:", ""]
        for f in d.fixes:
            out.append(f"{f.rank}. **{f.title}** — {prose(f.why)}")  # why may quote input: {exception}
            if f.commands:
                out += [""] + fence(list(f.commands), "sh", "   ")
            if f.code:
                out += [""] + fence(f.code.strip().splitlines(), "python", "   ")
        out.append("")
    return out


def _next_check(r: ScanResult) -> list[str]:
    from ..advise.next_check import next_check

    check = next_check(r.diagnoses)
    if check is None:
        return []
    return ["### Not sure yet: run this next", "", *fence([check.command], "sh"), "", check.why, ""]


def to_markdown(results: Sequence[ScanResult]) -> str:
    out: list[str] = []
    for r in results:
        out += [f"## dllogscan: {code(r.source)}", "", verdict(r), ""]
        if r.document:
            parts = "cells, each with what it printed" if r.document == "notebook" else "title, body, comments"
            out += [f"_Read as a {r.document}: line numbers refer to its text flattened in order ({parts})._", ""]
        if r.error:
            out += [f"**Could not read it fully:** {code(r.error)}", ""]
        out += [f"**Note:** {prose(n)}" for n in r.notes] + ([""] if r.notes else [])
        for i, d in enumerate(r.diagnoses, start=1):
            out += _diagnosis(d, i)
        out += _next_check(r)
    return strip_controls("\n".join(out).rstrip() + "\n")
